// One sandbox action of a turn (data, plot) while it runs: one object whose steps run in this order,
// the way Beast's advanced server keeps one session object per connection:
//   book()       books the daily counter (refused: a refused ledger row and refusal{code}); a
//                claimed cluster turn was booked by the node that enqueued it
//   take_slot()  in the turns' arrival order, takes the turn's render slot: status{queued} while it
//                waits; refused or expired: error{capacity}; stopped while waiting: withdrawn and
//                error{cancelled} (each with a refused ledger row)
//   granted()    the slot held, the turn is marked started in the store
//   run()        status{step}, then the action's run starts (start_run); a stop cancels it
//   finish()     the run is over (it booked its own ledger rows in runs/): the action's ending
//                (end_turn); an exception there ends the turn with error{internal}
// Lifetime: the turn holds it (Turn::action) from book() until the turn ends, and each pending
// callback of a step holds it too (shared_from_this), so a run that outlives its turn still
// finishes. It holds its turn weakly: nothing cycles. Loop thread only.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "runs/ledger_row.hpp"
#include "server/turn.hpp"
#include "store/exec.hpp"
#include "store/types.hpp"

namespace plotq::server {

class TurnService;

// A turn's jobs in the ledger: its n-th data run, and its plot (one row per theme).
inline std::string data_job_id(const std::string& turn, int n) { return turn + "-data-" + std::to_string(n); }
inline std::string plot_job_id(const std::string& turn) { return turn + "-plot"; }

class RunningAction : public std::enable_shared_from_this<RunningAction> {
 public:
  struct Plan {
    runs::RunWho who;                                     // the run's ledger identity
    store::RunKind kind = store::RunKind::data;           // the ledger's kind
    store::TurnAction counter = store::TurnAction::data;  // the daily counter booked before the slot
    std::string step;                                     // status{step} once the slot is held
  };

  RunningAction(TurnService& s, const std::shared_ptr<Turn>& t, Plan plan);
  virtual ~RunningAction() = default;
  RunningAction(const RunningAction&) = delete;
  RunningAction& operator=(const RunningAction&) = delete;

  // The first step: the turn takes hold of the action, and the steps above follow.
  void book();

 protected:
  // Starts the run in the held slot (slot_wait: seconds it waited, for the ledger). It calls
  // finish() once, on the loop, when the run is over.
  virtual void start_run(double slot_wait) = 0;
  // Stops the run; its result then says cancelled and finish() still comes.
  virtual void cancel_run() = 0;
  // The action's ending, from the result the run left in the action.
  virtual void end_turn(const std::shared_ptr<Turn>& t) = 0;
  void finish();

  TurnService& s;
  const Plan plan;

 private:
  void booked(const store::Stored<std::optional<std::string>>& booking);
  void take_slot();
  void enter_queue(const std::shared_ptr<Turn>& t);
  void withdraw();      // a stop while it waits for the slot
  void out_of_room();   // the queue refused it or its wait expired
  void granted();
  void run(const std::shared_ptr<Turn>& t);
  // The turn if it is still there and has not ended.
  std::shared_ptr<Turn> live_turn() const;

  std::weak_ptr<Turn> turn_;
};

}  // namespace plotq::server
