#include "queue/render_queue.hpp"

#include "queue/queue_impl.hpp"

namespace plotq::queue {

// --- SlotLease ---

SlotLease::SlotLease(SlotLease&& o) noexcept : q_(std::move(o.q_)), id_(o.id_) { o.id_ = 0; }

SlotLease& SlotLease::operator=(SlotLease&& o) noexcept {
  if (this != &o) {
    release();
    q_ = std::move(o.q_);
    id_ = o.id_;
    o.id_ = 0;
  }
  return *this;
}

bool SlotLease::add_job() {
  auto q = q_.lock();
  return q && id_ != 0 && q->core.add_job(id_, q->now());
}

void SlotLease::release() {
  const TicketId id = id_;
  id_ = 0;
  if (id == 0) return;
  if (auto q = q_.lock()) q->release(id);
}

// --- Ticket ---

Ticket::~Ticket() {
  if (rec_ && rec_->state == TicketState::waiting) cancel();
}

Ticket& Ticket::operator=(Ticket&& o) noexcept {
  if (this != &o) {
    if (rec_ && rec_->state == TicketState::waiting) cancel();
    q_ = std::move(o.q_);
    rec_ = std::move(o.rec_);
  }
  return *this;
}

TicketId Ticket::id() const { return rec_ ? rec_->id : 0; }

TicketState Ticket::state() const { return rec_ ? rec_->state : TicketState::refused; }

std::optional<Position> Ticket::position() const {
  auto q = q_.lock();
  if (!q || !rec_ || rec_->state != TicketState::waiting) return std::nullopt;
  return q->core.position(rec_->id);
}

CancelOutcome Ticket::cancel() {
  auto q = q_.lock();
  if (!q || !rec_) return CancelOutcome::none;
  return q->cancel(*rec_);
}

// --- RenderQueue ---

RenderQueue::RenderQueue(boost::asio::io_context& io, Config cfg)
    : impl_(std::make_shared<detail::QueueImpl>(io, cfg)) {}

RenderQueue::~RenderQueue() {
  impl_->timer.cancel();
}

Ticket RenderQueue::submit(Holder holder, Callbacks cb) { return impl_->submit(std::move(holder), std::move(cb)); }

QueueStatus RenderQueue::status() const { return impl_->core.status(impl_->now()); }
const Config& RenderQueue::config() const { return impl_->core.config(); }
int RenderQueue::capacity() const { return impl_->core.capacity(); }
double RenderQueue::now() const { return impl_->now(); }
boost::asio::io_context& RenderQueue::io() const { return impl_->io; }

}  // namespace plotq::queue
