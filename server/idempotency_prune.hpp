// The background prune of expired idempotency answers (store/idempotency.hpp): a timer on the
// event loop deletes answers older than PLOTQ_IDEMPOTENCY_KEEP_HOURS, PLOTQ_IDEMPOTENCY_PRUNE_BATCH
// rows per step, each step one short transaction on the loop's own connection (the one-writer
// rule), with a gap between steps so requests are served in between.
#pragma once
#include <chrono>
#include <cstdint>

namespace plotq::server {

struct App;

inline constexpr std::chrono::milliseconds kPruneFirst{1'000};     // after start: not in the way of start-up
inline constexpr std::chrono::milliseconds kPruneInterval{60'000};  // answers expire by the hour: a minute is prompt
inline constexpr std::chrono::milliseconds kPruneBatchGap{20};      // a full batch: more are left, go on soon

// Pure: the wait before the next step, given what the last one deleted (a failed step waits the
// whole interval, as does one that found fewer than a batch).
std::chrono::milliseconds next_prune_delay(std::int64_t deleted, int batch, bool failed);

// Arms the timer (first step kPruneFirst after start); an app.on_shutdown hook stops it.
void start_idempotency_prune(App& app);

}  // namespace plotq::server
