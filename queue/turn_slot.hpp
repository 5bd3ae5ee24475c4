// TurnSlot: a chat turn's hold on the render slot (pipeline-only queue). The turn runs without the
// slot; its FIRST sandbox job takes the slot through the queue (booking the turn's one start in the
// rate window), and the turn holds it until end(). Later jobs of the same turn run under the held
// slot at once and book nothing. The turn's deadline runs from construction, does not run while
// the turn is queued, and is armed in full (turn_deadline_s) when the slot is granted.
#pragma once
#include <functional>
#include <memory>
#include <string_view>

#include "queue/render_queue.hpp"
#include "queue/turn_deadline.hpp"

namespace plotq::queue {

namespace detail {
struct TurnState;
}

class TurnSlot {
 public:
  struct Callbacks {
    std::function<void(Position)> on_position;         // while this take waits (see queue Callbacks)
    std::function<void(bool booked)> on_granted;       // run the job now; booked = this take booked
                                                       // the turn's start (first job only)
    std::function<void(std::string_view code)> on_refused;  // kCapacity; the turn ends
    std::function<void()> on_expired;                  // max wait passed; the turn ends (capacity)
  };
  enum class Take {
    submitted,  // first job: queued or starting; callbacks follow
    held,       // the turn already holds the slot: on_granted(false) follows, nothing booked
    busy,       // a take of this turn is still waiting; this call did nothing
    ended,      // the turn ended (end, cancel, refusal, expiry); this call did nothing
  };

  // Arms the deadline at once (the turn starts now). on_deadline runs once when an armed deadline
  // runs out; the caller then kills its job and calls end(). The queue's io_context must outlive
  // the TurnSlot; the RenderQueue may go first (the TurnSlot then does nothing).
  TurnSlot(RenderQueue& queue, Holder holder, std::function<void()> on_deadline);
  ~TurnSlot();  // end()
  TurnSlot(const TurnSlot&) = delete;
  TurnSlot& operator=(const TurnSlot&) = delete;

  Take take(Callbacks cb);
  // Waiting: withdrawn (no callback follows) and the turn ends. Holding: kill_requested (the caller
  // kills its job, then end()). Before any take: none, and the turn counts as ended. Idempotent.
  CancelOutcome cancel();
  // The turn is over: returns the slot (pumping the queue) or withdraws a waiting take, stops the
  // deadline. Idempotent.
  void end();

  bool held() const;     // a grant was delivered and end() not called yet
  bool waiting() const;  // a take is queued (or granted but not yet delivered)
  bool ended() const;
  TicketId ticket_id() const;
  int jobs() const;  // sandbox jobs taken under the held slot
  const TurnDeadline& deadline() const;
  double deadline_remaining() const;

 private:
  std::shared_ptr<detail::TurnState> s_;
};

}  // namespace plotq::queue
