#include "server/retention_job.hpp"

#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "server/app.hpp"
#include "server/periodic.hpp"
#include "store/error.hpp"
#include "store/retention.hpp"
#include "store/time.hpp"

namespace plotq::server {

RetainNext next_retain_step(std::size_t family, std::size_t families, bool more, bool failed) {
  if (more && !failed) return {family, kRetainBatchGap, false};  // the same family has more: soon
  std::size_t next = families == 0 ? 0 : (family + 1) % families;
  if (next == 0) return {0, kRetainInterval, true};
  return {next, failed ? kRetainInterval : kRetainBatchGap, false};  // a failing store: not again at once
}

void start_retention_job(App& app) {
  store::Db& db = app.db;
  const store::RetentionPolicy policy = app.config.retention;
  std::size_t family = 0;
  store::Tally round;  // what this round deleted so far (logged once per round)
  run_periodically(app, kRetainFirst, [&db, policy, family, round]() mutable {
    const store::Family f = store::kFamilies[family];
    bool more = false, failed = false;
    try {
      store::UnixSeconds now = store::now_unix();
      store::StepResult r = store::prune_step(db, f, store::cutoffs_at(policy, now), policy.batch, now);
      store::add_to(round, r.rows);
      more = r.more;
    } catch (const store::StoreError& e) {
      failed = true;
      log_event("retention_prune_failed", {{"family", std::string(store::to_string(f))}, {"code", e.code()}});
    }
    RetainNext next = next_retain_step(family, store::kFamilies.size(), more, failed);
    family = next.family;
    if (next.round_done) {
      if (store::total(round) > 0) log_event("retention_pruned", {{"rows", nlohmann::json(round)}});
      round.clear();
    }
    return next.delay;
  });
}

}  // namespace plotq::server
