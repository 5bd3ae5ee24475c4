#include "queue/turn_slot.hpp"

#include "queue/queue_impl.hpp"

namespace plotq::queue {

namespace detail {

struct TurnState : std::enable_shared_from_this<TurnState> {
  enum class Stage { idle, waiting, held, ended };

  TurnState(RenderQueue& q, Holder h, std::function<void()> on_dl)
      : queue(q.impl_), io(q.io()), origin(q.impl_->origin), holder(std::move(h)),
        on_deadline(std::move(on_dl)), deadline(q.config().turn_deadline_s), timer(q.io()) {}

  std::weak_ptr<QueueImpl> queue;
  boost::asio::io_context& io;
  Clock::time_point origin;  // the queue's clock origin, so both agree on `now`
  Holder holder;
  std::function<void()> on_deadline;
  TurnDeadline deadline;
  boost::asio::steady_timer timer;  // this turn's deadline; idle while paused
  Stage stage = Stage::idle;
  Ticket ticket;
  SlotLease lease;
  TurnSlot::Callbacks cb;  // the waiting take's
  int jobs = 0;
  bool deadline_fired = false;

  double now() const { return std::chrono::duration<double>(Clock::now() - origin).count(); }

  void wait_deadline() {
    const auto at = origin + std::chrono::ceil<Clock::duration>(std::chrono::duration<double>(deadline.expires_at())) +
                    std::chrono::microseconds(1);
    timer.expires_at(at);
    timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      if (ec) return;
      if (auto s = w.lock()) s->on_timer();
    });
  }

  void arm_deadline() {
    deadline.arm(now());
    wait_deadline();
  }

  void pause_deadline() {
    deadline.pause(now());
    timer.cancel();
  }

  void on_timer() {
    if (stage == Stage::ended || deadline_fired || !deadline.armed()) return;
    if (!deadline.expired(now())) return wait_deadline();  // woke a hair early
    deadline_fired = true;
    if (on_deadline) on_deadline();
  }

  void finish() {
    stage = Stage::ended;
    timer.cancel();
    cb = {};
  }

  TurnSlot::Take take(TurnSlot::Callbacks c) {
    switch (stage) {
      case Stage::ended: return TurnSlot::Take::ended;
      case Stage::waiting: return TurnSlot::Take::busy;
      case Stage::held: {
        if (!lease.add_job()) return TurnSlot::Take::ended;  // the queue is gone
        ++jobs;
        boost::asio::post(io, [w = weak_from_this(), f = std::move(c.on_granted)] {
          auto s = w.lock();
          if (s && s->stage == Stage::held && f) f(false);
        });
        return TurnSlot::Take::held;
      }
      case Stage::idle: break;
    }
    auto q = queue.lock();
    if (!q) return TurnSlot::Take::ended;
    cb = std::move(c);
    stage = Stage::waiting;
    auto w = weak_from_this();
    Callbacks qc;
    qc.on_position = [w](Position p) {
      auto s = w.lock();
      if (!s || s->stage != Stage::waiting || !s->cb.on_position) return;
      auto f = s->cb.on_position;  // a copy: the callback may cancel the turn, which clears cb
      f(p);
    };
    qc.on_granted = [w](SlotLease l) {
      auto s = w.lock();
      if (!s || s->stage != Stage::waiting) return;  // the lease returns the slot as it dies
      s->lease = std::move(l);
      s->stage = Stage::held;
      s->jobs = 1;
      s->arm_deadline();  // in full: queued time never counts
      auto f = std::move(s->cb.on_granted);
      s->cb = {};
      if (f) f(true);
    };
    qc.on_refused = [w](std::string_view code) {
      auto s = w.lock();
      if (!s || s->stage != Stage::waiting) return;
      auto f = std::move(s->cb.on_refused);
      s->finish();
      if (f) f(code);
    };
    qc.on_expired = [w] {
      auto s = w.lock();
      if (!s || s->stage != Stage::waiting) return;
      auto f = std::move(s->cb.on_expired);
      s->finish();
      if (f) f();
    };
    ticket = q->submit(holder, std::move(qc));
    if (ticket.state() == TicketState::waiting) pause_deadline();
    return TurnSlot::Take::submitted;
  }

  CancelOutcome cancel() {
    switch (stage) {
      case Stage::idle:
        finish();
        return CancelOutcome::none;
      case Stage::waiting: {
        const CancelOutcome o = ticket.cancel();
        finish();
        return o;
      }
      case Stage::held:
        return ticket.cancel();
      case Stage::ended:
        return CancelOutcome::none;
    }
    return CancelOutcome::none;
  }

  void end() {
    if (stage == Stage::ended && !lease.held()) return;
    if (stage == Stage::waiting) ticket.cancel();
    lease.release();
    finish();
  }
};

}  // namespace detail

TurnSlot::TurnSlot(RenderQueue& queue, Holder holder, std::function<void()> on_deadline)
    : s_(std::make_shared<detail::TurnState>(queue, std::move(holder), std::move(on_deadline))) {
  s_->arm_deadline();  // the turn starts now
}

TurnSlot::~TurnSlot() { s_->end(); }

TurnSlot::Take TurnSlot::take(Callbacks cb) { return s_->take(std::move(cb)); }
CancelOutcome TurnSlot::cancel() { return s_->cancel(); }
void TurnSlot::end() { s_->end(); }

bool TurnSlot::held() const { return s_->stage == detail::TurnState::Stage::held; }
bool TurnSlot::waiting() const { return s_->stage == detail::TurnState::Stage::waiting; }
bool TurnSlot::ended() const { return s_->stage == detail::TurnState::Stage::ended; }
TicketId TurnSlot::ticket_id() const { return s_->ticket.id(); }
int TurnSlot::jobs() const { return s_->jobs; }
const TurnDeadline& TurnSlot::deadline() const { return s_->deadline; }
double TurnSlot::deadline_remaining() const { return s_->deadline.remaining(s_->now()); }

}  // namespace plotq::queue
