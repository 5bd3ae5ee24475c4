#include "server/turn_action.hpp"

#include <exception>
#include <typeinfo>

#include "common/log.hpp"
#include "server/errors.hpp"
#include "server/turn_service.hpp"
#include "store/time.hpp"
#include "store/turns.hpp"

namespace plotq::server {

RunningAction::RunningAction(TurnService& service, const std::shared_ptr<Turn>& t, Plan p)
    : s(service), plan(std::move(p)), turn_(t) {}

std::shared_ptr<Turn> RunningAction::live_turn() const {
  auto t = turn_.lock();
  return t && !t->ending() ? t : nullptr;
}

void RunningAction::book() {
  auto t = turn_.lock();
  if (!t) return;
  t->action = shared_from_this();
  if (t->claim_epoch) return take_slot();  // booked by the node that enqueued it
  s.app.store.run(
      "book a daily run",
      [cfg = s.cfg, user = t->user, counter = plan.counter](store::Db& db) {
        return book_run(db, cfg, user, counter, store::now_unix());
      },
      [self = shared_from_this()](store::Stored<std::optional<std::string>> booking) { self->booked(booking); });
}

void RunningAction::booked(const store::Stored<std::optional<std::string>>& booking) {
  auto t = live_turn();
  if (!t) return;
  if (!booking.ok()) {
    log_event("turn_failed", {{"turn", t->id}, {"class", "StoreError"}, {"code", booking.code}});
    return s.fail(t, std::string(store_failure_code(booking.code)));
  }
  if (const auto& refusal = *booking.value) {
    s.ledger_refused(plan.who, plan.kind, runs::outcome_named(*refusal));
    return s.refuse(t, *refusal);
  }
  take_slot();
}

void RunningAction::take_slot() {
  auto t = turn_.lock();
  if (!t) return;
  s.in_arrival_order(t, [self = shared_from_this()] {
    if (auto turn = self->live_turn()) self->enter_queue(turn);
  });
}

void RunningAction::enter_queue(const std::shared_ptr<Turn>& t) {
  t->stage = Turn::Stage::queued;
  t->queued_at = std::chrono::steady_clock::now();
  auto self = shared_from_this();
  // Until the slot is granted, stopping the turn withdraws it from the queue.
  t->stop_work = [self] { self->withdraw(); };
  queue::TurnSlot::Callbacks cb;
  cb.on_position = [self](queue::Position p) {
    if (auto turn = self->turn_.lock()) self->s.queued_status(turn, p);
  };
  cb.on_refused = [self](std::string_view) { self->out_of_room(); };
  cb.on_expired = [self] { self->out_of_room(); };
  cb.on_granted = [self](bool) { self->granted(); };
  if (t->slot->take(std::move(cb)) == queue::TurnSlot::Take::ended) s.fail(t, "unavailable");
}

void RunningAction::withdraw() {
  auto t = turn_.lock();
  if (!t) return;
  t->slot->cancel();
  s.ledger_refused(plan.who, plan.kind, runs::Outcome::cancelled, TurnService::waited(*t));
  s.fail(t, t->stop_reason.empty() ? "cancelled" : t->stop_reason);
}

void RunningAction::out_of_room() {
  auto t = live_turn();
  if (!t) return;
  s.ledger_refused(plan.who, plan.kind, runs::Outcome::capacity, TurnService::waited(*t));
  s.fail(t, "capacity");
}

void RunningAction::granted() {
  auto t = live_turn();
  if (!t) return;
  t->stop_work = nullptr;
  t->stage = Turn::Stage::running;
  s.app.store.run(
      "start a turn", [id = t->id](store::Db& db) { store::turns::start(db, id); },
      [self = shared_from_this()](store::Stored<void> started) {
        auto turn = self->live_turn();
        if (!turn) return;
        if (!started.ok()) {
          log_event("turn_failed", {{"turn", turn->id}, {"class", "StoreError"}, {"code", started.code}});
          return self->s.fail(turn, std::string(store_failure_code(started.code)));
        }
        try {
          self->run(turn);
        } catch (const std::exception& e) {
          log_event("turn_failed", {{"turn", turn->id}, {"class", typeid(e).name()}});
          self->s.fail(turn, "internal");
        }
      });
}

void RunningAction::run(const std::shared_ptr<Turn>& t) {
  s.emit(t, "status", {{"step", plan.step}, {"attempt", 1}});
  double slot_wait = TurnService::waited(*t);
  // Set before the run starts: a run that ends at once clears it in finish().
  t->stop_work = [self = shared_from_this()] { self->cancel_run(); };
  start_run(slot_wait);
}

void RunningAction::finish() {
  auto self = shared_from_this();  // the turn may let go of it in its ending
  auto t = turn_.lock();
  if (!t) return;
  t->stop_work = nullptr;
  try {
    end_turn(t);
  } catch (const std::exception& e) {
    log_event("turn_failed", {{"turn", t->id}, {"class", typeid(e).name()}});
    s.fail(t, "internal");
  }
}

}  // namespace plotq::server
