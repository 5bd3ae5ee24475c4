#include "server/store_checkpoints.hpp"

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

#include "common/log.hpp"
#include "server/app.hpp"
#include "store/checkpoint.hpp"
#include "store/error.hpp"

namespace plotq::server {
namespace {

struct Checkpoints {
  boost::asio::steady_timer timer;
  store::Db& db;
  std::chrono::milliseconds interval;
  bool failing = false;  // logged once per run of failures
};

void run_once(Checkpoints& c) {
  try {
    store::checkpoint(c.db);
    if (c.failing) log_event("db_checkpoint_recovered", {});
    c.failing = false;
  } catch (const store::StoreError& e) {
    if (!c.failing) log_event("db_checkpoint_failed", {{"code", e.code()}, {"what", e.what()}});
    c.failing = true;
  }
}

void arm(const std::shared_ptr<Checkpoints>& c) {
  c->timer.expires_after(c->interval);
  // Weak: the shutdown hook owns the state, so a stopped timer never runs again.
  c->timer.async_wait([w = std::weak_ptr<Checkpoints>(c)](const boost::system::error_code& ec) {
    auto c = w.lock();
    if (ec || !c) return;
    run_once(*c);
    arm(c);
  });
}

}  // namespace

void start_store_checkpoints(App& app) {
  const int ms = app.config.db.checkpoint_interval_ms;
  if (ms <= 0) return;  // SQLite's auto-checkpoint, inside the commits
  try {
    app.db.sql().exec("PRAGMA wal_autocheckpoint=0");
  } catch (const std::exception& e) {
    log_event("db_checkpoint_failed", {{"code", "db_error"}, {"what", e.what()}});
    return;  // auto-checkpoint stays on: correct, only slower commits now and then
  }
  auto c = std::make_shared<Checkpoints>(
      Checkpoints{boost::asio::steady_timer(app.ioc), app.db, std::chrono::milliseconds(ms)});
  arm(c);
  // Only the timer stops here: requests still in flight commit after this hook, and closing the
  // store (the last connection) checkpoints the whole WAL after them.
  app.on_shutdown([c]() mutable {
    c->timer.cancel();
    c.reset();
  });
}

}  // namespace plotq::server
