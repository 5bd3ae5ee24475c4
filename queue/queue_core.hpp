// The pure core of the render queue: slots, the pipeline-only FIFO, the rate window, max wait and
// capacity. No timers, no threads, no I/O: every operation takes `now` (seconds on a steady clock)
// and records what happened as QueueEvents, which the caller drains with take_events(). The Asio
// adapter (render_queue.hpp) drives it; tests drive it with synthetic times.
#pragma once
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "queue/config.hpp"
#include "queue/rate_window.hpp"

namespace plotq::queue {

using TicketId = std::uint64_t;  // 0 is never a ticket

// The one refusal / expiry code of the queue (the SSE layer sends error{code:"capacity"}).
inline constexpr const char* kCapacity = "capacity";

// Who asks for the slot: a chat turn (holds it until the turn ends, any number of jobs) or a single
// job from a non-turn caller (/run-data, /render: take -> run -> release).
enum class HolderKind { turn, job };
struct Holder {
  HolderKind kind = HolderKind::job;
  std::string user;   // for GET /v1/status and logs; the queue does not interpret it
  std::string label;  // e.g. "turn 3f2a..." or "/run-data"
};

// refused exists only for adapter tickets whose submit was refused; the core never stores one.
enum class TicketState { waiting, running, done, withdrawn, expired, refused };
const char* to_string(TicketState s);
const char* to_string(HolderKind k);

// position 1 = next to start; waiting = all queued entries including this one.
struct Position {
  int position = 0;
  int waiting = 0;
  bool operator==(const Position&) const = default;
};

enum class Admission { started, queued, refused };
struct SubmitResult {
  TicketId id = 0;             // 0 when refused (nothing was queued)
  Admission admission = Admission::refused;
  const char* code = "";       // kCapacity when refused
  Position position;           // when queued
};

// What cancel() did: withdrew a waiting ticket, or marked a running one for kill (the kill itself
// and the release that follows are the holder's job), or nothing (already ended / unknown).
enum class CancelOutcome { withdrawn, kill_requested, none };
const char* to_string(CancelOutcome c);

enum class EventKind {
  started,            // id got a slot; its start was booked in the rate window
  expired,            // id waited the max wait without starting (code "capacity")
  withdrawn,          // id left the queue by withdraw/cancel/release while waiting
  released,           // id's slot was returned (state done)
  positions_changed,  // the waiting list changed: every waiter's position or count may differ
};
struct QueueEvent {
  EventKind kind;
  TicketId id = 0;  // 0 for positions_changed
  bool operator==(const QueueEvent&) const = default;
};

struct HolderView {
  TicketId id = 0;
  Holder holder;
  double age_s = 0;  // seconds since it got the slot
  int jobs = 0;      // sandbox jobs run under this slot (1 + add_job calls)
  bool cancel_requested = false;
};

// Snapshot for GET /v1/status.
struct QueueStatus {
  int waiting = 0;
  int waiting_turns = 0;  // of `waiting`, chat turns' takes ...
  int waiting_jobs = 0;   // ... and single jobs (/run-data, /render)
  int in_flight = 0;
  int slots = 0;
  int capacity = 0;
  int starts_in_window = 0;
  std::uint64_t starts_booked = 0;     // since the queue was made
  std::optional<double> holder_age_s;  // the longest-held slot's age; empty when no holder
  std::optional<double> oldest_wait_s; // how long the head of the queue has waited
  std::vector<HolderView> holders;     // in the order they got their slots
};

class QueueCore {
 public:
  explicit QueueCore(Config cfg);  // throws std::invalid_argument on an invalid Config

  // Pumps at `now`, then admits: starts at once when nothing waits and limits allow (always
  // admitted, even with capacity 0); else queues at the back unless that position would exceed
  // capacity, which is refused with kCapacity and queues nothing.
  SubmitResult submit(Holder holder, double now);

  // running -> done (slot returned, then pump); waiting -> withdrawn; otherwise nothing.
  // Idempotent: true only when this call changed something.
  bool release(TicketId id, double now);
  // waiting -> withdrawn; otherwise nothing. True when this call withdrew it.
  bool withdraw(TicketId id, double now);
  // waiting -> withdrawn; running -> kill requested (slot kept until release). Idempotent.
  CancelOutcome cancel(TicketId id, double now);
  // A further sandbox job under a running ticket's slot (a turn's second job): books nothing.
  bool add_job(TicketId id, double now);

  // Reference order: expire entries that waited > max, start what slots and rate allow (FIFO),
  // then expire entries that waited >= max (an entry whose turn comes exactly at its deadline
  // starts instead of expiring).
  void pump(double now);

  // When the queue next changes on its own (head expiry or rate window opening while a slot is
  // free); nullopt when only a caller's release/submit can change it. Always > now after a pump.
  std::optional<double> next_change_at(double now) const;

  // nullopt for unknown or finished tickets: the core forgets a ticket when it ends (the events
  // say how it ended).
  std::optional<TicketState> state(TicketId id) const;
  std::optional<Position> position(TicketId id) const;  // O(queue length)
  // A running ticket's wait: granted minus queued, seconds (0 when it started at once).
  std::optional<double> waited(TicketId id) const;
  const std::list<TicketId>& waiting_order() const { return waiting_; }

  std::vector<QueueEvent> take_events();

  QueueStatus status(double now) const;
  std::size_t waiting() const { return waiting_.size(); }
  int in_flight() const { return int(running_.size()); }
  int capacity() const { return capacity_; }
  int starts_in_window(double now) const { return rate_.count(now); }
  std::uint64_t starts_booked() const { return starts_booked_; }
  const Config& config() const { return cfg_; }

 private:
  struct Entry {
    Holder holder;
    double enqueued_at = 0;
    double granted_at = 0;
    TicketState state = TicketState::waiting;
    int jobs = 0;
    bool cancel_requested = false;
    std::list<TicketId>::iterator where;  // valid while waiting
  };

  double clamp(double now);  // steady time never goes backwards; an older `now` counts as the last
  bool free_slot() const { return int(running_.size()) < cfg_.slots; }
  void start(TicketId id, Entry& e, double now);
  void expire_head(double now, bool inclusive);
  void emit(EventKind kind, TicketId id = 0);

  Config cfg_;
  int capacity_;
  RateWindow rate_;
  double last_now_ = 0;
  TicketId next_id_ = 1;
  std::uint64_t starts_booked_ = 0;
  std::unordered_map<TicketId, Entry> entries_;  // waiting and running only
  std::list<TicketId> waiting_;                  // FIFO; the head waited longest
  std::vector<TicketId> running_;                // at most cfg_.slots, in grant order
  std::vector<QueueEvent> events_;
};

}  // namespace plotq::queue
