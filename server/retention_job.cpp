#include "server/retention_job.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "server/app.hpp"
#include "server/periodic.hpp"
#include "store/error.hpp"
#include "store/retention.hpp"
#include "store/time.hpp"

namespace plotq::server {

RetainNext next_retain_step(std::size_t family, std::size_t families, bool more, bool failed,
                            std::chrono::microseconds took) {
  auto gap = std::max<std::chrono::milliseconds>(
      kRetainBatchGap, std::chrono::duration_cast<std::chrono::milliseconds>(took * kRetainGapPerStep));
  if (more && !failed) return {family, gap, false};  // the same family has more: soon
  std::size_t next = families == 0 ? 0 : (family + 1) % families;
  if (next == 0) return {0, kRetainInterval, true};
  return {next, failed ? kRetainInterval : gap, false};  // a failing store: not again at once
}

void start_retention_job(App& app) {
  store::Db& db = app.db;
  const store::RetentionPolicy policy = app.config.retention;
  std::size_t family = 0;
  store::Tally round;  // what this round deleted so far (logged once per round)
  struct Busy {
    std::int64_t steps = 0;
    double ms = 0, max_ms = 0;  // time on the loop: all steps, the longest one
  } busy;
  run_periodically(app, kRetainFirst, [&db, policy, family, round, busy]() mutable {
    const store::Family f = store::kFamilies[family];
    bool more = false, failed = false;
    auto t0 = std::chrono::steady_clock::now();
    try {
      store::UnixSeconds now = store::now_unix();
      store::StepResult r = store::prune_step(db, f, store::cutoffs_at(policy, now), policy.batch, now);
      store::add_to(round, r.rows);
      more = r.more;
    } catch (const store::StoreError& e) {
      failed = true;
      log_event("retention_prune_failed", {{"family", std::string(store::to_string(f))}, {"code", e.code()}});
    }
    double step_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++busy.steps;
    busy.ms += step_ms;
    busy.max_ms = std::max(busy.max_ms, step_ms);
    RetainNext next = next_retain_step(family, store::kFamilies.size(), more, failed,
                                       std::chrono::microseconds(std::int64_t(step_ms * 1000)));
    family = next.family;
    if (next.round_done) {
      if (store::total(round) > 0)
        log_event("retention_pruned", {{"rows", nlohmann::json(round)},
                                       {"steps", busy.steps},
                                       {"busy_ms", std::round(busy.ms)},
                                       {"max_step_ms", std::round(busy.max_ms * 10) / 10}});
      round.clear();
      busy = {};
    }
    return next.delay;
  });
}

}  // namespace plotq::server
