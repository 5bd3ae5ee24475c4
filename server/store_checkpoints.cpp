#include "server/store_checkpoints.hpp"

#include <chrono>

#include "common/log.hpp"
#include "server/app.hpp"
#include "server/periodic.hpp"
#include "server/server_metrics.hpp"
#include "store/checkpoint.hpp"
#include "store/error.hpp"

namespace plotq::server {

void start_store_checkpoints(App& app) {
  const std::chrono::milliseconds interval(app.config.db.checkpoint_interval_ms);
  if (interval.count() <= 0) return;  // SQLite's auto-checkpoint, inside the commits
  if (app.db.engine() != store::Engine::sqlite) return;  // PostgreSQL checkpoints by itself
  try {
    app.db.exec("PRAGMA wal_autocheckpoint=0");
  } catch (const std::exception& e) {
    log_event("db_checkpoint_failed", {{"code", "db_error"}, {"what", e.what()}});
    return;  // auto-checkpoint stays on: correct, only slower commits now and then
  }
  // The shutdown hook only stops the timer: requests still in flight commit after it, and closing
  // the store (the last connection) checkpoints the whole WAL after them.
  store::Db& db = app.db;
  bool failing = false;  // logged once per run of failures
  run_periodically(app, interval, [&db, &app, interval, failing]() mutable {
    try {
      store::CheckpointRun run = store::checkpoint(db);
      count_checkpoint(run.busy ? "busy" : run.complete() ? "complete" : "partial");
      if (failing) log_event("db_checkpoint_recovered", {});
      failing = false;
      app.checkpoint_error.clear();
    } catch (const store::StoreError& e) {
      count_checkpoint("failed");
      if (!failing) log_event("db_checkpoint_failed", {{"code", e.code()}, {"what", e.what()}});
      failing = true;
      app.checkpoint_error = e.code();  // /readyz: store_writable
    }
    return interval;
  });
}

}  // namespace plotq::server
