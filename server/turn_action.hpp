// One shape for a turn's sandbox actions (data, plot): the action says what it runs (an
// ActionPlan), TurnService::drive does the rest the same way for both: books the daily counter
// (refused: a refused ledger row and refusal{code}), takes the turn's render slot (queued,
// capacity, cancel while waiting), sends status{step}, starts the run, keeps its stop for a cancel,
// and runs the action's ending once the run is over (an exception there ends the turn with
// error{internal}). Each run books its own ledger rows in runs/ before its ending runs.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "runs/ledger_row.hpp"
#include "server/turn.hpp"
#include "store/types.hpp"

namespace plotq::server {

// A turn's jobs in the ledger: its n-th data run, and its plot (one row per theme).
inline std::string data_job_id(const std::string& turn, int n) { return turn + "-data-" + std::to_string(n); }
inline std::string plot_job_id(const std::string& turn) { return turn + "-plot"; }

struct ActionPlan {
  using Ending = std::function<void(const std::shared_ptr<Turn>&)>;  // the action's finish, bound to its result
  using Finish = std::function<void(Ending)>;                         // called once, on the loop
  using Stop = std::function<void()>;                                 // cancels the run (its result says cancelled)

  runs::RunWho who;                                   // the run's ledger identity
  store::RunKind kind = store::RunKind::data;         // the ledger's kind
  store::TurnAction counter = store::TurnAction::data;  // the daily counter booked before the slot
  std::string step;                                   // status{step} once the slot is held
  // Starts the run in the held slot; returns its stop.
  std::function<Stop(const runs::RunWho& who, double slot_wait, Finish finish)> start;
};

}  // namespace plotq::server
