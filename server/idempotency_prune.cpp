#include "server/idempotency_prune.hpp"

#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "common/log.hpp"
#include "server/app.hpp"
#include "store/error.hpp"
#include "store/idempotency.hpp"
#include "store/time.hpp"

namespace plotq::server {
namespace {

struct Prune {
  boost::asio::steady_timer timer;
  store::Db& db;
  int keep_hours;
  int batch;
  std::int64_t run_deleted = 0;  // since the last step that found less than a batch (logged once)
};

void step(const std::shared_ptr<Prune>& p);

void arm(const std::shared_ptr<Prune>& p, std::chrono::milliseconds delay) {
  p->timer.expires_after(delay);
  // Weak: the shutdown hook owns the state, so a stopped prune never runs again.
  p->timer.async_wait([w = std::weak_ptr<Prune>(p)](const boost::system::error_code& ec) {
    auto p = w.lock();
    if (ec || !p) return;
    step(p);
  });
}

void step(const std::shared_ptr<Prune>& p) {
  std::int64_t deleted = 0;
  bool failed = false;
  store::UnixSeconds cutoff = store::now_unix() - std::int64_t(p->keep_hours) * 3600;
  try {
    deleted = store::idempotency::prune_done(p->db, cutoff, p->batch);
  } catch (const store::StoreError& e) {
    failed = true;
    log_event("idempotency_prune_failed", {{"code", e.code()}});
  }
  p->run_deleted += deleted;
  if (!failed && deleted < p->batch && p->run_deleted > 0) {
    log_event("idempotency_pruned", {{"deleted", p->run_deleted}, {"keep_hours", p->keep_hours}});
    p->run_deleted = 0;
  }
  arm(p, next_prune_delay(deleted, p->batch, failed));
}

}  // namespace

std::chrono::milliseconds next_prune_delay(std::int64_t deleted, int batch, bool failed) {
  if (!failed && batch > 0 && deleted >= batch) return kPruneBatchGap;
  return kPruneInterval;
}

void start_idempotency_prune(App& app) {
  auto p = std::make_shared<Prune>(Prune{boost::asio::steady_timer(app.ioc), app.db,
                                         app.config.db.idempotency_keep_hours,
                                         app.config.db.idempotency_prune_batch});
  arm(p, kPruneFirst);
  app.on_shutdown([p]() mutable { p->timer.cancel(); });
}

}  // namespace plotq::server
