#include "server/retention_job.hpp"

#include <optional>

#include "store/exec.hpp"

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

// How often the periodic step looks again for a prune step's answer still out (PostgreSQL).
constexpr std::chrono::milliseconds kRetainPoll{100};

void start_retention_job(App& app) {
  const store::RetentionPolicy policy = app.config.retention;
  // One step's state across loop turns: on PostgreSQL a step's answer comes back later, and the
  // periodic timer polls for it (on SQLite the answer is there before the step returns).
  struct State {
    std::size_t family = 0;
    store::Tally round;  // what this round deleted so far (logged once per round)
    std::int64_t steps = 0;
    double ms = 0, max_ms = 0;  // store time: all steps, the longest one
    bool in_flight = false;
    std::optional<std::pair<bool, bool>> result;  // more, failed
    double step_ms = 0;
  };
  auto st = std::make_shared<State>();
  run_periodically(app, kRetainFirst, [&app, policy, st]() -> std::chrono::milliseconds {
    if (st->in_flight) return kRetainPoll;
    if (!st->result) {
      const store::Family f = store::kFamilies[st->family];
      st->in_flight = true;
      app.store.run(
          "retention prune step",
          [policy, f](store::Db& db) {
            auto t0 = std::chrono::steady_clock::now();
            store::UnixSeconds now = store::now_unix();
            store::StepResult r = store::prune_step(db, f, store::cutoffs_at(policy, now), policy.batch, now);
            return std::make_pair(r, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
          },
          [st, f](store::Stored<std::pair<store::StepResult, double>> r) {
            st->in_flight = false;
            if (r.ok()) {
              store::add_to(st->round, r.value->first.rows);
              st->result = {r.value->first.more, false};
              st->step_ms = r.value->second;
            } else {
              log_event("retention_prune_failed", {{"family", std::string(store::to_string(f))}, {"code", r.code}});
              st->result = {false, true};
              st->step_ms = 0;
            }
          });
      if (st->in_flight) return kRetainPoll;
    }
    auto [more, failed] = *st->result;
    st->result.reset();
    ++st->steps;
    st->ms += st->step_ms;
    st->max_ms = std::max(st->max_ms, st->step_ms);
    RetainNext next = next_retain_step(st->family, store::kFamilies.size(), more, failed,
                                       std::chrono::microseconds(std::int64_t(st->step_ms * 1000)));
    st->family = next.family;
    if (next.round_done) {
      if (store::total(st->round) > 0)
        log_event("retention_pruned", {{"rows", nlohmann::json(st->round)},
                                       {"steps", st->steps},
                                       {"busy_ms", std::round(st->ms)},
                                       {"max_step_ms", std::round(st->max_ms * 10) / 10}});
      st->round.clear();
      st->steps = 0;
      st->ms = st->max_ms = 0;
    }
    return next.delay;
  });
}

}  // namespace plotq::server
