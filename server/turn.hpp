// One chat turn while it lives in plotqd: its stage, its hold on the render slot, whatever sandbox
// work it runs, and the streams that follow it. Every event of a turn goes through the EventLog
// (server/turn_events.hpp): stored, then delivered here to the subscribers in the same loop turn.
// A client that goes away only drops its subscription; the turn goes on. Loop thread only.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "queue/turn_slot.hpp"
#include "server/http.hpp"

namespace plotq::server {

class RunningAction;

class Turn {
 public:
  enum class Stage {
    working,  // answering without the slot (plain turns, checks before a run)
    queued,   // its first sandbox job waits for the render slot
    running,  // holds the slot; a job runs
    ending,   // done{} was queued; nothing more is emitted
  };

  Turn(std::string id, std::string session_id, std::string user)
      : id(std::move(id)), session_id(std::move(session_id)), user(std::move(user)) {}

  const std::string id;
  const std::string session_id;
  const std::string user;

  Stage stage = Stage::working;
  // Why the running work was stopped ("" while nobody stopped it): cancelled | deadline | shutdown.
  std::string stop_reason;
  int data_runs = 0;  // data runs this turn started (at most TurnConfig::data_runs_per_turn)
  // The order it started in, and whether it has had its turn at entering the render queue (it
  // entered, or ended without needing to): TurnService::in_arrival_order.
  std::uint64_t arrival = 0;
  bool arrival_done = false;
  std::unique_ptr<queue::TurnSlot> slot;  // made with the turn; takes the slot at the first job
  // Its data or plot action (server/turn_action.hpp): held from its booking until the turn ends.
  std::shared_ptr<RunningAction> action;
  // What stopping the turn does now: withdraws it from the queue or kills its running job or
  // render (set by its action), or a cluster hand-off's pass-on; empty while nothing is to stop.
  std::function<void()> stop_work;
  std::chrono::steady_clock::time_point queued_at{};
  // status{queued} pacing (TurnService::queued_status)
  std::chrono::steady_clock::time_point last_queued_status{};
  std::optional<queue::Position> deferred_status;  // newest position not sent yet
  // The seq (SSE id) of the turn's next event. plotqd is the only writer of a live turn's events
  // and a turn starts with none, so the EventLog numbers them here instead of asking the store.
  std::int64_t next_seq = 1;

  // ---- cluster (docs/scale-out.md) ----
  // Run on another node (or not claimed yet): this node only streams it, reading its events from
  // the store, and never writes one.
  bool follower = false;
  // This node claimed the turn's queue entry in this epoch (0: not a claimed turn): it writes the
  // turn's events, and its entry goes when the turn ends.
  std::int64_t claim_epoch = 0;

  // ---- streams ----
  // Follows the turn from after `after`: events with a larger seq are written to res as they come.
  void subscribe(std::shared_ptr<Responder> res, std::int64_t after);
  // Called by the EventLog once the event is stored. After "done" every stream is closed.
  void deliver(std::int64_t seq, const std::string& name, const std::string& frame);
  // Writes last (an event without an id: it is not stored) to every stream and ends them: the
  // turn's next event could not be stored, and the client resumes from what was.
  void close_streams(const std::string& last);
  std::int64_t delivered() const { return delivered_; }
  // A follower starts from what its streams were given already.
  void set_delivered(std::int64_t seq) { delivered_ = seq; }
  // A frame that is not stored (no id): a follower's status{queued}, computed from the queue.
  void send_live(const std::string& frame);
  std::size_t subscribers() const { return subscribers_.size(); }
  bool ending() const { return stage == Stage::ending; }

 private:
  struct Subscriber {
    std::shared_ptr<Responder> res;
    std::int64_t after = 0;
  };
  std::vector<Subscriber> subscribers_;
  std::int64_t delivered_ = 0;
};

// The id-less frame that ends a stream resumably: closing{reason, retry_after_s} (docs/api.md):
// the turn goes on, the client resumes with Last-Event-ID (elsewhere, or after retry_after_s).
std::string closing_frame(const std::string& reason, long long retry_after_s);
// status{queued, position, waiting}'s data, formatted by hand (the same text nlohmann::json writes):
// the one event sent to every waiting turn at each change of the queue.
std::string queued_status_json(queue::Position p);

// The turns that have not ended, by id and by user (one in flight per user).
class TurnRegistry {
 public:
  std::shared_ptr<Turn> find(const std::string& id) const;
  std::shared_ptr<Turn> active_for(const std::string& user) const;
  void add(const std::shared_ptr<Turn>& t);
  void remove(const Turn& t);
  std::vector<std::shared_ptr<Turn>> all() const;
  std::size_t size() const { return by_id_.size(); }

 private:
  std::unordered_map<std::string, std::shared_ptr<Turn>> by_id_;
  std::unordered_map<std::string, std::string> by_user_;
};

}  // namespace plotq::server
