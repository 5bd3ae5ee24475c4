// Retention: how long each growing table family is kept, and the prune that deletes the rest in
// small batches (docs/store.md#retention). plotqd runs it from a timer on its loop
// (server/retention_job.cpp), `plotq prune --dry-run|--now` by hand; both call these functions.
//
// Families, each with one setting (store/retention.cpp declares them with their reasons):
//   ledger        runs rows created before the cutoff
//   turns         events and plots of turns that ended before the cutoff (the turn row stays: the
//                 ledger, strikes and dataset versions name it); turns.events_pruned_at marks it
//   idle          open sessions without activity since the cutoff are closed, reason 'idle' (the
//                 schema's word; nothing else closes a forgotten session)
//   datasets      every dataset version (and the dataset row) of sessions closed before the
//                 cutoff with no version made since; sessions.data_pruned_at marks it (a later
//                 paste, which a closed session still takes, clears the mark)
//   idempotency   done answers finished before the cutoff (idempotency::prune_done)
//   sweeps        sweeps last updated before the cutoff, their results first; after the commit,
//                 their thumbnail directories (store/sweep_images.hpp)
// Quota counters live in quota_days/quota_minutes (never pruned here) and every admin view reads
// at most the last day of the ledger, so a prune changes no quota and no view (the ledger's bound
// keeps it so).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "store/db.hpp"
#include "store/time.hpp"

namespace plotq {
class Settings;
}

namespace plotq::store {

struct RetentionPolicy {
  int ledger_days = 90;        // PLOTQ_RETAIN_LEDGER_DAYS (>= 2: the views read the last day)
  int turn_events_days = 14;   // PLOTQ_RETAIN_TURN_EVENTS_DAYS
  int session_idle_days = 30;  // PLOTQ_RETAIN_SESSION_IDLE_DAYS
  int datasets_days = 30;      // PLOTQ_RETAIN_DATASETS_DAYS (after the session closed)
  int idempotency_hours = 24;  // PLOTQ_IDEMPOTENCY_KEEP_HOURS (the name it had before retention)
  int sweeps_days = 180;       // PLOTQ_RETAIN_SWEEPS_DAYS
  int batch = 100;             // PLOTQ_RETAIN_BATCH: rows one prune transaction writes at most
};

void register_settings(Settings& s, RetentionPolicy& p);
RetentionPolicy retention_from_env();  // throws plotq::ConfigError when malformed

enum class Family { ledger, turns, idle, datasets, idempotency, sweeps };
inline constexpr std::array<Family, 6> kFamilies{Family::ledger, Family::turns, Family::idle,
                                                  Family::datasets, Family::idempotency, Family::sweeps};
std::string_view to_string(Family f);

// Pure: the time before which each family's rows go, at `now`.
struct Cutoffs {
  UnixSeconds ledger = 0, turns = 0, idle = 0, datasets = 0, idempotency = 0, sweeps = 0;
  UnixSeconds of(Family f) const;
};
Cutoffs cutoffs_at(const RetentionPolicy& p, UnixSeconds now);

// Rows per table (runs, turn_events, turn_plots, sessions (closed idle), dataset_versions,
// datasets, idempotency, sweep_results, sweeps). Tables with nothing are absent.
using Tally = std::map<std::string, std::int64_t>;
void add_to(Tally& into, const Tally& more);
std::int64_t total(const Tally& t);

// Read only: what a prune at these cutoffs would delete (and which sessions it would close).
Tally pending(Db& db, const Cutoffs& c);

struct StepResult {
  Tally rows;         // what this step deleted or closed
  bool more = false;  // the batch filled: the family may have more at this cutoff
};
// One BEGIN IMMEDIATE transaction writing at most `batch` rows (plus a finished turn's <= 2 plots
// and its mark) of one family, oldest first. Throws StoreError.
StepResult prune_step(Db& db, Family f, const Cutoffs& c, int batch, UnixSeconds now);
// Every family, step after step until none has more (plotq prune --now).
Tally prune_all(Db& db, const Cutoffs& c, int batch, UnixSeconds now);

}  // namespace plotq::store
