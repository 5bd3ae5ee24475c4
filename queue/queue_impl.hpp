// Internal to queue/: the adapter state shared by RenderQueue, Ticket, SlotLease and TurnSlot.
// Not part of the public API (include render_queue.hpp / turn_slot.hpp instead).
#pragma once
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <exception>
#include <unordered_map>
#include <vector>

#include "common/log.hpp"
#include "queue/queue_metrics.hpp"
#include "queue/render_queue.hpp"

namespace plotq::queue {

namespace detail {

using Clock = std::chrono::steady_clock;

// Adapter-side state of one ticket; shared by the queue (while waiting/running) and the Ticket.
struct TicketRecord {
  TicketId id = 0;
  TicketState state = TicketState::waiting;
  Callbacks cb;
  bool grant_delivered = false;  // on_granted ran: a cancel now means "kill", not "withdraw"
  bool cancelled = false;        // cancelled before the grant was delivered: never deliver it
  HolderKind kind = HolderKind::job;  // for the metrics' holder label
};

struct QueueImpl : std::enable_shared_from_this<QueueImpl> {
  enum class Deliver { granted, expired, refused, drop };
  struct Pending {
    Deliver what;
    std::shared_ptr<TicketRecord> rec;
  };

  QueueImpl(boost::asio::io_context& io_, Config cfg)
      : io(io_), core(cfg), timer(io_), origin(Clock::now()) {}

  boost::asio::io_context& io;
  QueueCore core;
  boost::asio::steady_timer timer;
  Clock::time_point origin;
  std::unordered_map<TicketId, std::shared_ptr<TicketRecord>> records;  // waiting and running
  std::vector<Pending> pending;
  std::vector<std::pair<TicketId, Position>> snapshot;  // reused broadcast buffer
  // Waiters that joined since the last flush, with their place as they joined (the last): told at
  // once, each in O(1), when the merged broadcast is not due in that flush.
  std::vector<std::pair<std::shared_ptr<TicketRecord>, Position>> newcomers;
  bool positions_dirty = false;
  bool flush_posted = false;
  double last_broadcast = -1e300;  // core time of the last broadcast (none yet)
  std::optional<double> armed_for;  // core time the timer waits for
  std::uint64_t timer_gen = 0;

  double now() const { return std::chrono::duration<double>(Clock::now() - origin).count(); }

  // Moves what the core did into ticket states and pending deliveries, then re-arms the timer.
  void absorb() {
    for (const QueueEvent& ev : core.take_events()) {
      if (ev.kind == EventKind::positions_changed) {
        positions_dirty = true;
        continue;
      }
      auto it = records.find(ev.id);
      if (it == records.end()) continue;
      std::shared_ptr<TicketRecord> rec = it->second;
      switch (ev.kind) {
        case EventKind::started:
          observe_slot_wait(rec->kind, core.waited(ev.id).value_or(0));
          rec->state = TicketState::running;
          pending.push_back({Deliver::granted, rec});
          break;
        case EventKind::expired:
          count_expired(rec->kind);
          rec->state = TicketState::expired;
          records.erase(it);
          pending.push_back({Deliver::expired, rec});
          break;
        case EventKind::withdrawn:
          rec->state = TicketState::withdrawn;
          records.erase(it);
          pending.push_back({Deliver::drop, rec});
          break;
        case EventKind::released:
          // Released before the holder ever saw the lease: no job ran, so it reads as withdrawn.
          rec->state = (rec->cancelled && !rec->grant_delivered) ? TicketState::withdrawn : TicketState::done;
          records.erase(it);
          pending.push_back({Deliver::drop, rec});
          break;
        case EventKind::positions_changed:
          break;
      }
    }
    if (!pending.empty() || positions_dirty || !newcomers.empty()) schedule_flush();
    rearm();
  }

  void schedule_flush() {
    if (flush_posted) return;
    flush_posted = true;
    boost::asio::post(io, [w = weak_from_this()] {
      if (auto self = w.lock()) self->flush();
    });
  }

  template <class F, class... A>
  static void invoke(const char* which, TicketId id, F& f, A&&... a) {
    if (!f) return;
    try {
      f(std::forward<A>(a)...);
    } catch (const std::exception& e) {
      // One holder's bug must not stall the queue for everybody else.
      log_event("queue_callback_error", {{"callback", which}, {"ticket", id}, {"what", e.what()}});
    } catch (...) {
      log_event("queue_callback_error", {{"callback", which}, {"ticket", id}});
    }
  }

  void flush() {
    flush_posted = false;
    std::vector<Pending> batch;
    batch.swap(pending);
    for (Pending& p : batch) {
      TicketRecord& r = *p.rec;
      switch (p.what) {
        case Deliver::granted: {
          if (r.state != TicketState::running || r.cancelled) break;
          r.grant_delivered = true;
          auto f = std::move(r.cb.on_granted);
          r.cb.on_position = nullptr;
          r.cb.on_expired = nullptr;
          // An ignored lease dies at the end of the call and returns the slot.
          invoke("on_granted", r.id, f, SlotLease(weak_from_this(), r.id));
          break;
        }
        case Deliver::expired: {
          auto f = std::move(r.cb.on_expired);
          r.cb = {};
          invoke("on_expired", r.id, f);
          break;
        }
        case Deliver::refused: {
          auto f = std::move(r.cb.on_refused);
          r.cb = {};
          invoke("on_refused", r.id, f, std::string_view(kCapacity));
          break;
        }
        case Deliver::drop:
          r.cb = {};  // free captures now, not when the last Ticket handle goes
          break;
      }
    }
    if (positions_dirty && broadcast_due()) {
      newcomers.clear();  // the broadcast tells them too
      broadcast();
    } else {
      tell_newcomers();
    }
    rearm();
  }

  void tell_newcomers() {
    auto batch = std::move(newcomers);
    newcomers.clear();
    for (auto& [rec, pos] : batch) {
      if (rec->state != TicketState::waiting || rec->cancelled) continue;
      invoke("on_position", rec->id, rec->cb.on_position, pos);
    }
  }

  // Positions go out at most once per status_min_interval_s: changes in between are merged into
  // the next broadcast (rearm's timer), so n waiters cost n per interval, not n per change.
  double next_broadcast_at() const { return last_broadcast + core.config().status_min_interval_s; }
  bool broadcast_due() const { return now() >= next_broadcast_at(); }

  void broadcast() {
    positions_dirty = false;
    last_broadcast = now();
    // Snapshot first: a callback may withdraw or submit, which must not upset this walk; such a
    // change marks the positions dirty again and the next flush sends the new ones.
    snapshot.clear();
    const int total = int(core.waiting());
    int p = 0;
    for (TicketId id : core.waiting_order()) snapshot.emplace_back(id, Position{++p, total});
    for (const auto& [id, pos] : snapshot) {
      auto it = records.find(id);
      if (it == records.end() || it->second->state != TicketState::waiting) continue;
      std::shared_ptr<TicketRecord> rec = it->second;  // keep it alive through its callback
      invoke("on_position", id, rec->cb.on_position, pos);
    }
  }

  // One timer for the queue: the core's next change, or the next heartbeat while anyone waits.
  void rearm() {
    std::optional<double> wake = core.next_change_at(now());
    if (core.waiting() > 0 && !positions_dirty) {
      const double hb = last_broadcast + core.config().heartbeat_s;
      wake = wake ? std::min(*wake, hb) : hb;
    }
    if (positions_dirty && !broadcast_due()) wake = wake ? std::min(*wake, next_broadcast_at()) : next_broadcast_at();
    if (wake == armed_for) return;
    armed_for = wake;
    const std::uint64_t gen = ++timer_gen;
    if (!wake) {
      timer.cancel();
      return;
    }
    // Round up (plus 1 us) so that the handler's now() is never a hair before the core's time.
    const auto at = origin + std::chrono::ceil<Clock::duration>(std::chrono::duration<double>(*wake)) +
                    std::chrono::microseconds(1);
    timer.expires_at(at);
    timer.async_wait([w = weak_from_this(), gen](const boost::system::error_code& ec) {
      if (ec) return;
      if (auto self = w.lock()) self->on_timer(gen);
    });
  }

  void on_timer(std::uint64_t gen) {
    if (gen != timer_gen) return;  // superseded by a later rearm
    armed_for.reset();
    const double t = now();
    core.pump(t);
    if (core.waiting() > 0 && t >= last_broadcast + core.config().heartbeat_s) positions_dirty = true;
    absorb();
    if (positions_dirty && !flush_posted && broadcast_due()) schedule_flush();  // the merged broadcast is due
  }

  Ticket submit(Holder holder, Callbacks cb) {
    Ticket t;
    t.q_ = weak_from_this();
    t.rec_ = std::make_shared<TicketRecord>();
    t.rec_->cb = std::move(cb);
    t.rec_->kind = holder.kind;
    const SubmitResult r = core.submit(std::move(holder), now());
    if (r.admission == Admission::refused) {
      count_refused(t.rec_->kind);
      t.rec_->state = TicketState::refused;
      pending.push_back({Deliver::refused, t.rec_});
    } else {
      t.rec_->id = r.id;
      t.rec_->state = r.admission == Admission::started ? TicketState::running : TicketState::waiting;
      records.emplace(r.id, t.rec_);
      if (t.rec_->state == TicketState::waiting) {
        const int n = int(core.waiting());  // it joined last
        newcomers.emplace_back(t.rec_, Position{n, n});
      }
    }
    absorb();
    return t;
  }

  void release(TicketId id) {
    if (core.release(id, now())) absorb();
  }

  CancelOutcome cancel(TicketRecord& r) {
    switch (r.state) {
      case TicketState::waiting:
        r.cancelled = true;
        core.withdraw(r.id, now());
        absorb();
        return CancelOutcome::withdrawn;
      case TicketState::running:
        if (!r.grant_delivered) {
          // Granted, but nobody holds the lease yet: no job can have started, hand the slot on.
          r.cancelled = true;
          core.release(r.id, now());
          absorb();
          return CancelOutcome::withdrawn;
        }
        return core.cancel(r.id, now());
      default:
        return CancelOutcome::none;
    }
  }
};

}  // namespace detail

}  // namespace plotq::queue
