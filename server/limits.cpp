#include "server/limits.hpp"

#include "server/sentences.hpp"

#include <nlohmann/json.hpp>

#include "store/admission.hpp"
#include "store/error.hpp"
#include "store/turn_event_writer.hpp"
#include "store/quotas.hpp"
#include "store/sql.hpp"
#include "store/sessions.hpp"
#include "store/strikes.hpp"
#include "store/turns.hpp"

namespace plotq::server {

std::map<std::string, std::int64_t> limits_table(const TurnConfig& c) {
  return {
      {store::kLimitMessagesPerMinute, c.messages_per_minute},
      {store::kLimitMessagesPerDay, c.messages_per_day},
      {store::kLimitDataRunsPerDay, c.data_runs_per_day},
      {store::kLimitPipelineRunsPerDay, c.pipeline_runs_per_day},
      {"data_runs_per_turn", c.data_runs_per_turn},
      {"session_refusals", c.session_refusals},
      {"attack_strikes", c.attack_strikes},
      {"attack_strike_window_s", c.attack_strike_window_s},
  };
}

namespace {

// The message limits' verdict on one more message (day first), or nullopt when it fits.
std::optional<std::string> message_refusal(store::BookVerdict v) {
  switch (v) {
    case store::BookVerdict::booked: return std::nullopt;
    case store::BookVerdict::day_limit: return "daily_limit";
    case store::BookVerdict::minute_limit: return "rate_limited";
  }
  return "rate_limited";
}

}  // namespace

std::optional<std::string> book_run_in_tx(store::Db& db, const TurnConfig& c, const std::string& user,
                                          store::TurnAction kind, store::UnixSeconds now) {
  bool data = kind == store::TurnAction::data;
  store::Counter counter = data ? store::Counter::data_runs : store::Counter::pipeline_runs;
  if (!store::quotas::check(db, user, counter, now, data ? c.data_runs_per_day : c.pipeline_runs_per_day, std::nullopt)
           .booked())
    return data ? "data_runs_exhausted" : "pipeline_runs_exhausted";
  store::quotas::add(db, user, counter, now);
  return std::nullopt;
}

std::optional<std::string> book_run(store::Db& db, const TurnConfig& c, const std::string& user,
                                    store::TurnAction kind, store::UnixSeconds now) {
  return store::guarded("book a daily run", [&] {
    store::Tx tx(db, store::quotas::quota_lock(user));
    auto refusal = book_run_in_tx(db, c, user, kind, now);
    if (!refusal) tx.commit();  // a refusal writes nothing
    return refusal;
  });
}

bool locked_out(store::Db& db, const TurnConfig& c, const std::string& user, store::UnixSeconds now) {
  return store::strikes::locked_out(db, user, now, c.attack_strikes, c.attack_strike_window_s);
}

ScopeOutcome apply_scope(store::Db& db, const TurnConfig& c, const std::string& user,
                         const std::string& session, const std::string& turn, store::ScopeVerdict scope,
                         store::UnixSeconds now) {
  store::turns::set_scope(db, turn, scope);
  ScopeOutcome out;
  if (scope == store::ScopeVerdict::needs_data) {
    out.code = "needs_data";
    return out;
  }
  out.code = "out_of_scope";  // attack answers the same placeholder
  if (scope == store::ScopeVerdict::attack) {
    store::strikes::add(db, user, "attack", now, session, turn);
    out.locked = locked_out(db, c, user, now);
  }
  if (c.session_refusals > 0 && store::sessions::scope_refusals(db, session) >= c.session_refusals)
    out.closed_session = store::sessions::close(db, session, store::CloseReason::refusals, now);
  if (out.closed_session) out.code = "session_closed";
  else if (out.locked) out.code = "locked_out";
  return out;
}

namespace {

std::string compact(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The events of a turn that ends at its admission, as TurnService would emit them one by one.
std::vector<Admission::Event> ending_events(const std::string& turn, const Admission& a, std::string_view plain_answer) {
  std::vector<Admission::Event> out;
  out.push_back({"ready", compact({{"v", "plotq/1"}, {"run_id", turn}, {"turn", turn}})});
  if (a.refusal) out.push_back({"refusal", compact({{"code", *a.refusal}, {"text", refusal_text(*a.refusal)}})});
  else out.push_back({"message", compact({{"text", plain_answer}})});
  out.push_back({"done", nlohmann::json{{"turn", turn}, {"state", a.refusal ? "refused" : "ok"}}.dump()});
  return out;
}

}  // namespace

Admission admit_message(store::Db& db, const TurnConfig& c, store::NewTurn turn, store::ScopeVerdict scope,
                        store::UnixSeconds now, std::string_view plain_answer) {
  return store::guarded("admit a message", [&] {
    // The user's quota lock first: two nodes admitting for one user check and write in turn.
    store::Tx tx(db, store::quotas::quota_lock(turn.user_id));
    Admission a;
    // Everything read first, in one statement; then the writes, which nothing reads back.
    const auto seen = store::admission::read(db, turn.user_id, turn.session_id, now, now - c.attack_strike_window_s);
    if (!seen.session_found) {  // removed since the node learnt its owner: nothing is written
      a.session_missing = true;
      return a;
    }
    if (seen.turn_in_flight) {  // another node (or this one, a moment ago) runs the user's turn
      a.run_active = true;
      return a;
    }
    a.refusal = message_refusal(store::quotas::verdict(seen.messages, c.messages_per_day, c.messages_per_minute));
    if (!a.refusal && !seen.session_open) a.refusal = "session_closed";
    if (!a.refusal && c.attack_strikes > 0 && seen.strikes >= c.attack_strikes) a.refusal = "locked_out";
    const bool plain = turn.action == store::TurnAction::none;
    turn.running = !a.refusal && scope == store::ScopeVerdict::none && plain;  // a plain turn starts at once
    store::turns::create(db, turn, now);
    if (!a.refusal) {
      store::quotas::add(db, turn.user_id, store::Counter::messages, now);
      if (scope != store::ScopeVerdict::none) {
        a.scope = apply_scope(db, c, turn.user_id, turn.session_id, turn.id, scope, now);
        a.refusal = a.scope->code;
      }
    }
    if (a.refusal || plain) {
      a.events = ending_events(turn.id, a, plain_answer);
      const std::string at = store::iso_utc(now);
      store::turns::EventWriter writer(db);
      for (std::size_t i = 0; i < a.events.size(); ++i)
        writer.append(turn.id, static_cast<std::int64_t>(i + 1), a.events[i].name, a.events[i].data, at);
      writer.finish_own(turn.id, a.refusal ? "refused" : "ok", a.refusal, at);
    }
    tx.commit();
    return a;
  });
}

std::string refusal_text(const std::string& code) { return std::string(sentence(code)); }

}  // namespace plotq::server
