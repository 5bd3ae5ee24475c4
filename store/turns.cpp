#include "store/turns.hpp"

#include "store/sql.hpp"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "store/sql_util.hpp"

namespace plotq::store::turns {
namespace {

constexpr const char* kCols =
    "id, session_id, user_id, created_at, text_chars, action, scope, status, outcome, code, ended_at";

Turn row(Stmt& q) {
  Turn t;
  t.id = q.getColumn(0).getString();
  t.session_id = q.getColumn(1).getString();
  t.user_id = q.getColumn(2).getString();
  t.created_at = detail::time_of(q.getColumn(3));
  t.text_chars = q.getColumn(4).getInt64();
  t.action = detail::enum_of(q.getColumn(5), parse_turn_action);
  t.scope = detail::enum_of(q.getColumn(6), parse_scope_verdict);
  t.status = detail::enum_of(q.getColumn(7), parse_turn_status);
  t.outcome = detail::opt_text(q.getColumn(8));
  t.code = detail::opt_text(q.getColumn(9));
  t.ended_at = detail::opt_time(q.getColumn(10));
  return t;
}

}  // namespace

void create(Db& db, const NewTurn& t, UnixSeconds now) {
  detail::require_id("turn id", t.id);
  guarded("create turn", [&] {
    // A cluster node's turn names its node; a single node's writes the columns every schema since
    // 0001 has.
    Stmt q(db, t.node ? "INSERT INTO turns(id, session_id, user_id, created_at, text_chars, action, status, node, node_epoch) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                      : "INSERT INTO turns(id, session_id, user_id, created_at, text_chars, action, status) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)");
    q.bind(1, t.id);
    q.bind(2, t.session_id);
    q.bind(3, t.user_id);
    q.bind(4, iso_utc(now));
    q.bind(5, static_cast<std::int64_t>(t.text_chars));
    detail::bind_sv(q, 6, to_string(t.action));
    q.bind(7, t.running ? "running" : "queued");
    if (t.node) {
      q.bind(8, *t.node);
      q.bind(9, t.node_epoch);
    }
    q.send();  // in a transaction (a message's admission) it goes out with the next that waits
  });
}

std::optional<Turn> get(Db& db, const std::string& id) {
  return guarded("get turn", [&]() -> std::optional<Turn> {
    Stmt q(db, std::string("SELECT ") + kCols + " FROM turns WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return row(q);
  });
}

void start(Db& db, const std::string& id) {
  guarded("start turn", [&] {
    Stmt q(db, "UPDATE turns SET status = 'running' WHERE id = ? AND status = 'queued'");
    q.bind(1, id);
    if (q.exec() == 0) detail::explain_turn_no_change(db, id, "queued");
  });
}

void set_scope(Db& db, const std::string& id, ScopeVerdict scope) {
  guarded("set turn scope", [&] {
    Stmt q(db, "UPDATE turns SET scope = ? WHERE id = ?");
    detail::bind_sv(q, 1, to_string(scope));
    q.bind(2, id);
    if (q.exec() == 0) throw StoreError("not_found", "no turn " + id);
  });
}

void finish(Db& db, const std::string& id, const std::string& outcome,
            const std::optional<std::string>& code, UnixSeconds now) {
  guarded("finish turn", [&] {
    Stmt q(db,
        "UPDATE turns SET status = 'done', outcome = ?, code = ?, ended_at = ? "
        "WHERE id = ? AND status <> 'done'");
    q.bind(1, outcome);
    detail::bind_opt(q, 2, code);
    q.bind(3, iso_utc(now));
    q.bind(4, id);
    if (q.exec() == 0) detail::explain_turn_no_change(db, id, "queued or running");
  });
}

std::int64_t append_event(Db& db, const std::string& turn_id, const std::string& event,
                          const std::string& data_json, UnixSeconds now) {
  return guarded("append turn event", [&] {
    // The next seq is computed and inserted in one statement, under the turn's lock: SQLite's
    // statement holds the write lock anyway, PostgreSQL's would hold none (two appends to one turn
    // would read the same max(seq)). Not a WriteTx: it must lock even where it joins nothing.
    Tx tx(db, "turn:" + turn_id);
    Stmt q(db,
        "INSERT INTO turn_events(turn_id, seq, event, data, created_at) "
        "SELECT ?1, coalesce(max(seq), 0) + 1, ?2, ?3, ?4 FROM turn_events WHERE turn_id = ?1 "
        "RETURNING seq");
    q.bind(1, turn_id);
    q.bind(2, event);
    q.bind(3, data_json);
    q.bind(4, iso_utc(now));
    q.executeStep();
    std::int64_t seq = q.getColumn(0).getInt64();
    while (q.executeStep()) {
    }
    q.reset();  // a RETURNING statement is in progress until reset: SQLite would refuse the COMMIT
    tx.commit();
    return seq;
  });
}

std::vector<TurnEvent> events_after(Db& db, const std::string& turn_id, std::int64_t after_seq, int limit) {
  return guarded("read turn events", [&] {
    std::vector<TurnEvent> out;
    Stmt q(db,
        "SELECT seq, event, data, created_at FROM turn_events "
        "WHERE turn_id = ? AND seq > ? ORDER BY seq LIMIT ?");
    q.bind(1, turn_id);
    q.bind(2, static_cast<std::int64_t>(after_seq));
    q.bind(3, limit);
    while (q.executeStep())
      out.push_back({turn_id, q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                     q.getColumn(2).getString(), detail::time_of(q.getColumn(3))});
    return out;
  });
}

std::optional<Turn> active_for_user(Db& db, const std::string& user_id) {
  return guarded("find active turn", [&]() -> std::optional<Turn> {
    Stmt q(db, std::string("SELECT ") + kCols +
                                      " FROM turns WHERE user_id = ? AND status <> 'done' "
                                      "ORDER BY created_at, id LIMIT 1");
    q.bind(1, user_id);
    if (!q.executeStep()) return std::nullopt;
    return row(q);
  });
}

void end_with_error(Db& s, const std::vector<std::pair<std::string, std::int64_t>>& turns,
                    const std::string& outcome, const std::string& code, UnixSeconds now) {
  const std::string at = iso_utc(now);
  Stmt ev(s, "INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES (?, ?, ?, ?, ?)");
  Stmt end(s, "UPDATE turns SET status = 'done', outcome = ?, code = ?, ended_at = ? WHERE id = ?");
  auto append = [&](const std::string& turn, std::int64_t seq, const char* name, const nlohmann::json& data) {
    ev.reset();
    ev.bind(1, turn);
    ev.bind(2, seq);
    ev.bind(3, name);
    ev.bind(4, data.dump());  // compact, keys sorted: the form plotqd's own events have
    ev.bind(5, at);
    ev.exec();
  };
  for (const auto& [turn, last] : turns) {
    append(turn, last + kAbandonedSeqGap, "error", {{"code", code}, {"ref", turn}});
    append(turn, last + kAbandonedSeqGap + 1, "done",
           {{"turn", turn}, {"state", outcome == "cancelled" ? "cancelled" : "error"}});
    end.reset();
    end.bind(1, outcome);
    end.bind(2, code);
    end.bind(3, at);
    end.bind(4, turn);
    end.exec();
  }
}

namespace {
constexpr const char* kLastSeq = "coalesce((SELECT max(seq) FROM turn_events e WHERE e.turn_id = t.id), 0)";
}  // namespace

std::int64_t finish_abandoned(Db& db, UnixSeconds now) {
  return guarded("finish abandoned turns", [&] {
    Db& s = db;
    Tx tx(s);
    std::vector<std::pair<std::string, std::int64_t>> left;  // turn id, its last stored seq
    Stmt q(s, std::string("SELECT t.id, ") + kLastSeq + " FROM turns t WHERE t.status <> 'done'");
    while (q.executeStep()) left.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getInt64());
    end_with_error(s, left, "abandoned", "abandoned", now);
    tx.commit();
    return std::int64_t(left.size());
  });
}

void end_unstored(Db& db, const std::string& turn_id, const std::string& code, UnixSeconds now) {
  guarded("end a turn the store refused", [&] {
    Db& s = db;
    Tx tx(s, "turn:" + turn_id);
    std::vector<std::pair<std::string, std::int64_t>> left;
    Stmt q(s, std::string("SELECT t.id, ") + kLastSeq + " FROM turns t WHERE t.id = ? AND t.status <> 'done'");
    q.bind(1, turn_id);
    while (q.executeStep()) left.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getInt64());
    end_with_error(s, left, "error", code, now);
    tx.commit();
  });
}

std::vector<Turn> list_for_session(Db& db, const std::string& session_id, int limit) {
  return guarded("list turns", [&] {
    std::vector<Turn> out;
    Stmt q(db, std::string("SELECT ") + kCols +
                                      // Ties (one second) by id: PostgreSQL has no rowid, and both
                                      // engines must list alike.
                                      " FROM turns WHERE session_id = ? ORDER BY created_at, id LIMIT ?");
    q.bind(1, session_id);
    q.bind(2, limit);
    while (q.executeStep()) out.push_back(row(q));
    return out;
  });
}

}  // namespace plotq::store::turns
