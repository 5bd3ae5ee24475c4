#include "queue/queue_core.hpp"

#include <algorithm>
#include <stdexcept>

namespace plotq::queue {

const char* to_string(TicketState s) {
  switch (s) {
    case TicketState::waiting: return "waiting";
    case TicketState::running: return "running";
    case TicketState::done: return "done";
    case TicketState::withdrawn: return "withdrawn";
    case TicketState::expired: return "expired";
    case TicketState::refused: return "refused";
  }
  return "unknown";
}

const char* to_string(HolderKind k) { return k == HolderKind::turn ? "turn" : "job"; }

const char* to_string(CancelOutcome c) {
  switch (c) {
    case CancelOutcome::withdrawn: return "withdrawn";
    case CancelOutcome::kill_requested: return "kill_requested";
    case CancelOutcome::none: return "none";
  }
  return "unknown";
}

static Config checked(Config cfg) {
  if (auto why = cfg.invalid_reason(); !why.empty()) throw std::invalid_argument("queue config: " + why);
  return cfg;
}

QueueCore::QueueCore(Config cfg)
    : cfg_(checked(cfg)), capacity_(cfg_.capacity()), rate_(cfg_.starts_per_window, cfg_.rate_window_s) {
  running_.reserve(std::size_t(cfg_.slots));
}

double QueueCore::clamp(double now) {
  if (now < last_now_) now = last_now_;
  last_now_ = now;
  return now;
}

void QueueCore::emit(EventKind kind, TicketId id) {
  // One positions_changed per burst is enough: receivers re-read every position anyway.
  if (kind == EventKind::positions_changed && !events_.empty() &&
      events_.back().kind == EventKind::positions_changed)
    return;
  events_.push_back({kind, id});
}

void QueueCore::start(TicketId id, Entry& e, double now) {
  e.state = TicketState::running;
  e.granted_at = now;
  e.jobs = 1;
  rate_.book(now);  // the holder's one start; later jobs under this slot book nothing
  ++starts_booked_;
  running_.push_back(id);
  emit(EventKind::started, id);
}

void QueueCore::expire_head(double now, bool inclusive) {
  // FIFO with monotone times: the head is always the longest waiter, so scanning stops early.
  while (!waiting_.empty()) {
    const TicketId id = waiting_.front();
    const double due = entries_.at(id).enqueued_at + cfg_.max_wait_s;
    if (!(inclusive ? due <= now : due < now)) break;
    waiting_.pop_front();
    entries_.erase(id);
    emit(EventKind::expired, id);
    emit(EventKind::positions_changed);
  }
}

void QueueCore::pump(double now) {
  now = clamp(now);
  expire_head(now, /*inclusive=*/false);
  while (!waiting_.empty() && free_slot() && rate_.allows(now)) {
    const TicketId id = waiting_.front();
    waiting_.pop_front();
    start(id, entries_.at(id), now);
    emit(EventKind::positions_changed);
  }
  expire_head(now, /*inclusive=*/true);
  rate_.prune(now);
}

SubmitResult QueueCore::submit(Holder holder, double now) {
  now = clamp(now);
  pump(now);
  SubmitResult r;
  if (waiting_.empty() && free_slot() && rate_.allows(now)) {
    r.id = next_id_++;
    Entry& e = entries_[r.id];
    e.holder = std::move(holder);
    e.enqueued_at = now;
    start(r.id, e, now);
    r.admission = Admission::started;
    return r;
  }
  const int position = int(waiting_.size()) + 1;
  if (position > capacity_) {
    r.admission = Admission::refused;
    r.code = kCapacity;
    return r;
  }
  r.id = next_id_++;
  Entry& e = entries_[r.id];
  e.holder = std::move(holder);
  e.enqueued_at = now;
  e.where = waiting_.insert(waiting_.end(), r.id);
  r.admission = Admission::queued;
  r.position = {position, position};
  emit(EventKind::positions_changed);
  return r;
}

bool QueueCore::release(TicketId id, double now) {
  now = clamp(now);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  if (it->second.state == TicketState::waiting) return withdraw(id, now);
  running_.erase(std::find(running_.begin(), running_.end(), id));
  entries_.erase(it);
  emit(EventKind::released, id);
  pump(now);
  return true;
}

bool QueueCore::withdraw(TicketId id, double now) {
  now = clamp(now);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != TicketState::waiting) return false;
  waiting_.erase(it->second.where);
  entries_.erase(it);
  emit(EventKind::withdrawn, id);
  emit(EventKind::positions_changed);
  pump(now);
  return true;
}

CancelOutcome QueueCore::cancel(TicketId id, double now) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return CancelOutcome::none;
  if (it->second.state == TicketState::waiting) {
    withdraw(id, now);
    return CancelOutcome::withdrawn;
  }
  it->second.cancel_requested = true;
  return CancelOutcome::kill_requested;
}

bool QueueCore::add_job(TicketId id, double now) {
  clamp(now);
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != TicketState::running) return false;
  ++it->second.jobs;
  return true;
}

std::optional<double> QueueCore::next_change_at(double now) const {
  if (waiting_.empty()) return std::nullopt;
  now = std::max(now, last_now_);
  double t = entries_.at(waiting_.front()).enqueued_at + cfg_.max_wait_s;
  if (free_slot()) {
    const auto opens = rate_.opens_at(now);
    if (!opens) return now;  // startable right now: the caller has not pumped yet
    t = std::min(t, *opens);
  }
  return t;
}

std::optional<TicketState> QueueCore::state(TicketId id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.state;
}

std::optional<Position> QueueCore::position(TicketId id) const {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != TicketState::waiting) return std::nullopt;
  int p = 1;
  for (TicketId w : waiting_) {
    if (w == id) break;
    ++p;
  }
  return Position{p, int(waiting_.size())};
}

std::vector<QueueEvent> QueueCore::take_events() {
  std::vector<QueueEvent> out;
  out.swap(events_);
  return out;
}

std::optional<double> QueueCore::waited(TicketId id) const {
  auto it = entries_.find(id);
  if (it == entries_.end() || it->second.state != TicketState::running) return std::nullopt;
  return it->second.granted_at - it->second.enqueued_at;
}

QueueStatus QueueCore::status(double now) const {
  now = std::max(now, last_now_);
  QueueStatus s;
  s.waiting = int(waiting_.size());
  for (TicketId id : waiting_) ++(entries_.at(id).holder.kind == HolderKind::turn ? s.waiting_turns : s.waiting_jobs);
  s.in_flight = int(running_.size());
  s.slots = cfg_.slots;
  s.capacity = capacity_;
  s.starts_in_window = rate_.count(now);
  s.starts_booked = starts_booked_;
  for (TicketId id : running_) {
    const Entry& e = entries_.at(id);
    s.holders.push_back({id, e.holder, now - e.granted_at, e.jobs, e.cancel_requested});
  }
  if (!s.holders.empty()) s.holder_age_s = s.holders.front().age_s;  // grant order: oldest first
  if (!waiting_.empty()) s.oldest_wait_s = now - entries_.at(waiting_.front()).enqueued_at;
  return s;
}

}  // namespace plotq::queue
