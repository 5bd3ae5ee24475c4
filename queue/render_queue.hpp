// RenderQueue: the Asio adapter over QueueCore. One single-threaded io_context, no blocking call,
// one steady_timer for the whole queue (armed at the earlier of the core's next_change_at and the
// next heartbeat), so 10,000 waiters cost no per-waiter timer; a position broadcast is O(waiters).
//
// Callbacks never run inside the call that caused them (submit, cancel, release): they are posted
// to the io_context and delivered in the order the core produced them, then one position
// broadcast (FIFO order) for the waiting list as it stands at delivery time.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "queue/queue_core.hpp"

namespace boost::asio {
class io_context;
}

namespace plotq::queue {

namespace detail {
struct QueueImpl;
struct TicketRecord;
struct TurnState;
}  // namespace detail

// The right to one render slot. Move-only; destroying it or calling release() returns the slot
// and pumps the queue (idempotent). A lease that outlives its RenderQueue does nothing.
class SlotLease {
 public:
  SlotLease() = default;
  ~SlotLease() { release(); }
  SlotLease(SlotLease&& o) noexcept;
  SlotLease& operator=(SlotLease&& o) noexcept;
  SlotLease(const SlotLease&) = delete;
  SlotLease& operator=(const SlotLease&) = delete;

  bool held() const { return id_ != 0; }
  TicketId ticket() const { return id_; }
  // Records one more sandbox job under this slot (a turn's second job): books no start.
  bool add_job();
  void release();

 private:
  friend struct detail::QueueImpl;
  SlotLease(std::weak_ptr<detail::QueueImpl> q, TicketId id) : q_(std::move(q)), id_(id) {}
  std::weak_ptr<detail::QueueImpl> q_;
  TicketId id_ = 0;
};

struct Callbacks {
  // At once after submit when queued, on every change of position or queue length, and every
  // heartbeat_s while unchanged. May repeat an unchanged position (heartbeat; changes that cancel
  // out within one loop turn). A ticket queued and granted in the same loop turn may get no
  // position at all, only on_granted.
  std::function<void(Position)> on_position;
  // The slot is yours; keep the lease for as long as the job (or turn) runs. Not called when the
  // ticket was cancelled before delivery.
  std::function<void(SlotLease)> on_granted;
  // Submit refused: nothing queued. code is kCapacity.
  std::function<void(std::string_view code)> on_refused;
  // Waited max_wait_s without starting (the SSE layer answers error{code:"capacity"}).
  std::function<void()> on_expired;
};

// Handle to one submit. Move-only; destroying it withdraws a still-waiting entry (a running one is
// owned by its SlotLease). state() is current at once (it does not wait for callbacks).
class Ticket {
 public:
  Ticket() = default;
  ~Ticket();
  Ticket(Ticket&&) noexcept = default;
  Ticket& operator=(Ticket&& o) noexcept;
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;

  TicketId id() const;
  TicketState state() const;  // refused when default-constructed
  std::optional<Position> position() const;  // live from the core, O(queue length)
  // Waiting (or granted but not yet delivered): withdrawn, no further callback. Running with the
  // lease delivered: kill_requested, and the caller kills the job and releases the lease.
  // Ended: none. Idempotent.
  CancelOutcome cancel();

 private:
  friend struct detail::QueueImpl;
  std::weak_ptr<detail::QueueImpl> q_;
  std::shared_ptr<detail::TicketRecord> rec_;
};

class RenderQueue {
 public:
  // Throws std::invalid_argument on an invalid Config. The io_context must outlive the queue.
  RenderQueue(boost::asio::io_context& io, Config cfg);
  ~RenderQueue();
  RenderQueue(const RenderQueue&) = delete;
  RenderQueue& operator=(const RenderQueue&) = delete;

  [[nodiscard]] Ticket submit(Holder holder, Callbacks cb);

  QueueStatus status() const;
  const Config& config() const;
  int capacity() const;
  // Seconds on the queue's steady clock (the `now` the core sees).
  double now() const;
  boost::asio::io_context& io() const;

 private:
  friend struct detail::TurnState;
  std::shared_ptr<detail::QueueImpl> impl_;
};

}  // namespace plotq::queue
