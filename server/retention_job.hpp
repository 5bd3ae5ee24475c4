// The retention prune in plotqd (store/retention.hpp; docs/store.md#retention): a periodic step on
// the event loop prunes one family one batch at a time (PLOTQ_RETAIN_BATCH rows, one short write
// transaction on the loop's own connection: the one-writer rule), with a gap between batches so
// requests are served in between, and a whole round every kRetainInterval. It also prunes the
// expired idempotency answers (what server/idempotency_prune.cpp did before).
#pragma once
#include <chrono>
#include <cstddef>

namespace plotq::server {

struct App;

inline constexpr std::chrono::milliseconds kRetainFirst{1'000};     // after start: not in the way of start-up
inline constexpr std::chrono::milliseconds kRetainInterval{60'000};  // cutoffs move by the hour or day: a minute is prompt
inline constexpr std::chrono::milliseconds kRetainBatchGap{20};      // between batches at least: the loop serves requests
inline constexpr int kRetainGapPerStep = 9;  // and 9x the last step's time: the job takes at most a tenth of the loop

// Pure: where the job goes after a step of family `family` (index into store::kFamilies) that took
// `took` on the loop.
struct RetainNext {
  std::size_t family = 0;
  std::chrono::milliseconds delay{0};
  bool round_done = false;  // every family had its turn: log the round, wait the interval
};
RetainNext next_retain_step(std::size_t family, std::size_t families, bool more, bool failed,
                            std::chrono::microseconds took = {});

// Arms the timer (first step kRetainFirst after start); an app.on_shutdown hook stops it.
void start_retention_job(App& app);

}  // namespace plotq::server
