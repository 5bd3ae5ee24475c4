#include "server/idempotency_prune.hpp"

#include "common/log.hpp"
#include "server/app.hpp"
#include "server/periodic.hpp"
#include "store/error.hpp"
#include "store/idempotency.hpp"
#include "store/time.hpp"

namespace plotq::server {

std::chrono::milliseconds next_prune_delay(std::int64_t deleted, int batch, bool failed) {
  if (!failed && batch > 0 && deleted >= batch) return kPruneBatchGap;
  return kPruneInterval;
}

void start_idempotency_prune(App& app) {
  store::Db& db = app.db;
  const int keep_hours = app.config.db.idempotency_keep_hours;
  const int batch = app.config.db.idempotency_prune_batch;
  std::int64_t run_deleted = 0;  // since the last step that found less than a batch (logged once)
  run_periodically(app, kPruneFirst, [&db, keep_hours, batch, run_deleted]() mutable {
    std::int64_t deleted = 0;
    bool failed = false;
    store::UnixSeconds cutoff = store::now_unix() - std::int64_t(keep_hours) * 3600;
    try {
      deleted = store::idempotency::prune_done(db, cutoff, batch);
    } catch (const store::StoreError& e) {
      failed = true;
      log_event("idempotency_prune_failed", {{"code", e.code()}});
    }
    run_deleted += deleted;
    if (!failed && deleted < batch && run_deleted > 0) {
      log_event("idempotency_pruned", {{"deleted", run_deleted}, {"keep_hours", keep_hours}});
      run_deleted = 0;
    }
    return next_prune_delay(deleted, batch, failed);
  });
}

}  // namespace plotq::server
