#include "server/turn_service.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <typeinfo>

#include "common/log.hpp"
#include "queue/render_queue.hpp"
#include "runs/render_job.hpp"
#include "runs/run_metrics.hpp"
#include "server/server_metrics.hpp"
#include "store/error.hpp"
#include "store/ids.hpp"
#include "store/ledger.hpp"
#include "store/turns.hpp"
#include "store/exec.hpp"
#include "server/cluster_node.hpp"
#include "server/errors.hpp"

namespace plotq::server {


TurnService::TurnService(App& a) : app(a), cfg(a.config.turns), events(a.ioc, a.store, std::chrono::duration<double, std::milli>(a.config.turns.slow_flush_log_ms)), renderer(make_renderer(a)) {
  events.on_turn_done([this](const std::shared_ptr<Turn>& t) {
    turns.remove(*t);
    t->stop_work = nullptr;
    t->action.reset();
    if (cluster && t->claim_epoch) cluster->finished(*t);
  });
}

TurnService::~TurnService() = default;

const char* TurnService::help_text() {
  return "plotq makes datasets and plots; it has no language model, so it does not answer questions in "
         "words. Send a data snippet (Python that assigns a pandas DataFrame to df) to make the next "
         "dataset version, paste a table in the data panel, or send plot code (matplotlib, seaborn or "
         "plotly) to render it as an image.";
}

void TurnService::start(const std::string& user, const std::string& session_id, MessageRequest msg,
                        std::shared_ptr<Responder> res) {
  auto t = std::make_shared<Turn>(store::new_id(), session_id, user);
  t->arrival = next_arrival_++;
  // Registered at once: from now on the user's next message is run_active, also while the row is
  // on its way to the store.
  turns.add(t);
  store::NewTurn row{t->id, session_id, user, static_cast<std::int64_t>(msg.text_chars), msg.action.kind};
  if (cluster) {  // its writes are this node's until another claims its work
    row.node = cluster->id();
    row.node_epoch = cluster->epoch();
  }
  auto m = std::make_shared<MessageRequest>(std::move(msg));
  // The turn's row and its admission in one store call (one transaction): nothing is streamed
  // before the store has the turn.
  app.store.run(
      "admit a message",
      [cfg = cfg, row, scope = m->scope](store::Db& db) {
        return admit_message(db, cfg, row, scope, store::now_unix(), help_text());
      },
      [this, t, res, m](store::Stored<Admission> a) {
        if (!a.ok() || a.value->session_missing || a.value->run_active) {  // nothing was written or streamed
          turns.remove(*t);
          in_arrival_order(t, nullptr);
          if (!a.ok()) log_event("turn_start_failed", {{"code", a.code}});
          else if (a.value->session_missing) owners.forget(t->session_id);
          if (!res->answered())
            res->send_error(!a.ok() ? store_failure_code(a.code) : a.value->run_active ? "run_active" : "session_not_found");
          return;
        }
        StreamOptions opts;
        opts.retry_ms = cfg.retry_ms;
        opts.headers.push_back({"X-Plotq-Turn", t->id});  // the turn to resume or cancel, before any event is read
        res->start_stream(std::move(opts));
        t->subscribe(res, 0);
        if (!a.value->events.empty()) return ended_at_admission(t, *a.value, *m);

        give_slot(t);
        emit(t, "ready", {{"v", "plotq/1"}, {"run_id", t->id}, {"turn", t->id}});
        answer(t, *m);
      });
}

void TurnService::give_slot(const std::shared_ptr<Turn>& t) {
  std::weak_ptr<Turn> weak = t;
  t->slot = std::make_unique<queue::TurnSlot>(
      app.queue, queue::Holder{queue::HolderKind::turn, t->user, "turn " + t->id}, [this, weak] {
        if (auto turn = weak.lock()) on_deadline(turn);
      });
}

void TurnService::ended_at_admission(const std::shared_ptr<Turn>& t, const Admission& a, const MessageRequest& msg) {
  if (a.scope) {
    const ScopeOutcome& o = *a.scope;
    log_event("turn_scope", {{"turn", t->id}, {"scope", std::string(store::to_string(msg.scope))},
                             {"code", o.code}, {"closed_session", o.closed_session}, {"locked", o.locked}});
  }
  if (a.refusal) count_turn_refusal(*a.refusal);
  in_arrival_order(t, nullptr);  // an ending turn holds nobody's place
  t->stop_work = nullptr;
  std::vector<std::pair<std::string, std::string>> stored;
  for (const auto& e : a.events) stored.emplace_back(e.name, e.data);
  events.deliver_stored(t, stored);
}

void TurnService::answer(const std::shared_ptr<Turn>& t, const MessageRequest& msg) {
  if (t->ending()) return;
  if (cluster && msg.action.kind != store::TurnAction::none) {
    // Any node of the cluster may run it: it waits in the cluster's queue, in the order the turns
    // started here.
    std::weak_ptr<Turn> weak = t;
    return in_arrival_order(t, [this, weak, action = msg.action] {
      auto turn = weak.lock();
      if (turn && !turn->ending()) cluster->enqueue(turn, action);
    });
  }
  run_action(t, msg.action);
}

void TurnService::on_deadline(const std::shared_ptr<Turn>& t) {
  if (t->ending()) return;
  log_event("turn_deadline", {{"turn", t->id}});
  t->stop_reason = "deadline";
  if (auto stop = t->stop_work) return stop();  // the job's end answers error{deadline}
  fail(t, "deadline");
}

std::string TurnService::cancel(const std::string& turn_id) {
  auto t = turns.find(turn_id);
  if (!t || t->ending()) return "done";
  bool running = t->stage == Turn::Stage::running;
  if (t->stop_reason.empty()) t->stop_reason = "cancelled";
  log_event("turn_cancel", {{"turn", t->id}, {"stage", running ? "running" : "waiting"}});
  if (running && t->slot) t->slot->cancel();  // kill_requested: the slot is returned when the turn ends
  if (auto stop = t->stop_work) stop();
  else fail(t, "cancelled");
  return t->ending() ? "cancelled" : "cancelling";
}

void TurnService::shutdown() {
  for (auto& t : turns.all()) {
    if (t->ending()) continue;
    if (t->follower) {  // another node runs it: its stream resumes there
      t->close_streams(closing_frame("shutdown", 1));
      turns.remove(*t);
      continue;
    }
    t->stop_reason = "shutdown";
    auto stop = std::move(t->stop_work);
    fail(t, "unavailable");
    if (stop) stop();
  }
  events.flush();
  if (deferred_timer_) deferred_timer_->cancel();  // the turns it would speak for have ended
  // The renderer cancels what it still runs through the launcher, which main() destroys before
  // the routes (and this service): let it go while the launcher is alive.
  renderer.reset();
}

double TurnService::waited(const Turn& t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t.queued_at).count();
}

void TurnService::ledger_refused(const runs::RunWho& who, store::RunKind kind, runs::Outcome code,
                                 double slot_wait_s) {
  store::LedgerEntry row = runs::refused_row(who, kind, code, slot_wait_s);
  app.store.run(
      "refused run's ledger row", [row](store::Db& db) { store::ledger::insert(db, row); },
      [row, library = who.library](store::Stored<void> booked) {
        if (booked.ok()) runs::count_run(row, library);
        else log_event("ledger_write_failed", {{"job_id", row.job_id}, {"code", booked.code}});
      });
}

void TurnService::in_arrival_order(const std::shared_ptr<Turn>& t, std::function<void()> step) {
  if (t->arrival_done) {  // it had its turn already (a later job of the same turn): at once
    if (step) step();
    return;
  }
  t->arrival_done = true;
  waiting_to_enter_[t->arrival] = std::move(step);
  while (!waiting_to_enter_.empty() && waiting_to_enter_.begin()->first == next_to_enter_) {
    auto next = std::move(waiting_to_enter_.begin()->second);
    waiting_to_enter_.erase(waiting_to_enter_.begin());
    ++next_to_enter_;
    if (next) next();
  }
}

void TurnService::queued_status(const std::shared_ptr<Turn>& t, queue::Position p) {
  if (t->ending() || t->stage != Turn::Stage::queued) return;
  using namespace std::chrono;
  auto now = steady_clock::now();
  auto gap = duration_cast<steady_clock::duration>(duration<double>(app.queue.config().status_min_interval_s));
  if (t->deferred_status) {  // one is already due: it will carry this newer position
    t->deferred_status = p;
    return;
  }
  if (t->last_queued_status == steady_clock::time_point{} || now - t->last_queued_status >= gap) {
    t->last_queued_status = now;
    events.emit_json(t, "status", queued_status_json(p));
    return;
  }
  t->deferred_status = p;
  auto due = t->last_queued_status + gap;
  deferred_.push({due, t});
  if (!deferred_timer_) deferred_timer_ = std::make_unique<boost::asio::steady_timer>(app.ioc);
  // Re-arm only when this one is due before the armed expiry.
  if (deferred_.top().due == due && (deferred_timer_at_ == steady_clock::time_point{} || due < deferred_timer_at_)) {
    deferred_timer_at_ = due;
    deferred_timer_->expires_at(due);
    deferred_timer_->async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      deferred_timer_at_ = {};
      send_deferred_statuses();
    });
  }
}

void TurnService::send_deferred_statuses() {
  auto now = std::chrono::steady_clock::now();
  while (!deferred_.empty() && deferred_.top().due <= now) {
    auto turn = deferred_.top().turn.lock();
    deferred_.pop();
    if (!turn || !turn->deferred_status) continue;
    queue::Position p = *turn->deferred_status;
    turn->deferred_status.reset();
    if (turn->ending() || turn->stage != Turn::Stage::queued) continue;
    turn->last_queued_status = now;
    events.emit_json(turn, "status", queued_status_json(p));
  }
  if (deferred_.empty()) return;
  deferred_timer_at_ = deferred_.top().due;
  deferred_timer_->expires_at(deferred_timer_at_);
  deferred_timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    deferred_timer_at_ = {};
    send_deferred_statuses();
  });
}

void TurnService::refuse(const std::shared_ptr<Turn>& t, const std::string& code, const std::string& text) {
  count_turn_refusal(code);
  emit(t, "refusal", {{"code", code}, {"text", text.empty() ? refusal_text(code) : text}});
  end(t, "refused", code);
}

void TurnService::fail(const std::shared_ptr<Turn>& t, const std::string& code) {
  emit(t, "error", {{"code", code}, {"ref", t->id}});
  end(t, code == "cancelled" ? "cancelled" : "error", code);
}

void TurnService::complete(const std::shared_ptr<Turn>& t) { end(t, "ok", std::nullopt); }

void TurnService::end(const std::shared_ptr<Turn>& t, const std::string& state, const std::optional<std::string>& code) {
  if (t->ending() || t->follower) return;  // a follower's end is written by the node that runs it
  in_arrival_order(t, nullptr);  // an ending turn holds nobody's place
  t->stop_work = nullptr;
  t->action.reset();  // its pending callbacks (a run still being killed) keep it until they are done
  if (t->slot) t->slot->end();  // returns the slot (or withdraws a waiting take), stops the deadline
  events.finish(t, state, code);
}

}  // namespace plotq::server

namespace plotq::server {

void TurnService::run_claimed(const store::cluster::Claimed& c, std::int64_t epoch, const TurnAction& action) {
  auto t = turns.find(c.e.turn_id);
  if (t && !t->follower) {
    log_event("cluster_claim_twice", {{"turn", t->id}});  // cannot happen: a claim moves an entry once
    return;
  }
  if (!t) {
    t = std::make_shared<Turn>(c.e.turn_id, c.e.session_id, c.e.user_id);
    turns.add(t);
  }
  t->follower = false;
  t->claim_epoch = epoch;
  t->next_seq = std::max(t->next_seq, c.e.next_seq);
  t->arrival_done = true;  // it took its place in the cluster's queue
  t->stage = Turn::Stage::working;
  t->stop_work = nullptr;
  give_slot(t);
  run_action(t, action);
}

void TurnService::run_action(const std::shared_ptr<Turn>& t, const TurnAction& action) {
  try {
    switch (action.kind) {
      case store::TurnAction::data:
        return run_data_action(*this, t, action);
      case store::TurnAction::plot:
        return run_plot_action(*this, t, action);
      case store::TurnAction::none:  // a plain turn ends at its admission (ended_at_admission)
        break;
    }
    throw std::logic_error("a plain turn reached its action");
  } catch (const std::exception& e) {
    log_event("turn_failed", {{"turn", t->id}, {"class", typeid(e).name()}});
    fail(t, "internal");
  }
}

void TurnService::drop(const std::shared_ptr<Turn>& t, const std::string& closing) {
  auto stop = std::move(t->stop_work);
  t->stage = Turn::Stage::ending;  // nothing more is emitted or written for it here
  if (t->slot) t->slot->end();
  t->close_streams(closing);
  turns.remove(*t);
  if (stop) stop();
}

std::size_t TurnService::own_turns() const {
  std::size_t n = 0;
  for (const auto& t : turns.all()) n += t->follower ? 0 : 1;
  return n;
}

}  // namespace plotq::server
