#include "store/sessions.hpp"

#include "store/sql.hpp"

#include "store/sql_util.hpp"

namespace plotq::store::sessions {
namespace {

constexpr const char* kCols = "id, user_id, created_at, closed_at, close_reason";

Session row(Stmt& q) {
  Session s;
  s.id = q.getColumn(0).getString();
  s.user_id = q.getColumn(1).getString();
  s.created_at = detail::time_of(q.getColumn(2));
  s.closed_at = detail::opt_time(q.getColumn(3));
  if (!q.getColumn(4).isNull()) s.close_reason = detail::enum_of(q.getColumn(4), parse_close_reason);
  return s;
}

}  // namespace

void create(Db& db, const std::string& id, const std::string& user_id, UnixSeconds now) {
  detail::require_id("session id", id);
  guarded("create session", [&] {
    Tx tx(db, "");  // inserts only
    detail::ensure_user(db, user_id, now);
    Stmt q(db, "INSERT INTO sessions(id, user_id, created_at) VALUES (?, ?, ?)");
    q.bind(1, id);
    q.bind(2, user_id);
    q.bind(3, iso_utc(now));
    q.exec();
    tx.commit();
  });
}

std::optional<Session> get(Db& db, const std::string& id) {
  return guarded("get session", [&]() -> std::optional<Session> {
    Stmt q(db, std::string("SELECT ") + kCols + " FROM sessions WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return row(q);
  });
}

bool close(Db& db, const std::string& id, CloseReason reason, UnixSeconds now) {
  return guarded("close session", [&] {
    Stmt q(db,
        "UPDATE sessions SET closed_at = ?, close_reason = ? WHERE id = ? AND closed_at IS NULL");
    q.bind(1, iso_utc(now));
    detail::bind_sv(q, 2, to_string(reason));
    q.bind(3, id);
    if (q.exec() == 1) return true;
    Stmt e(db, "SELECT 1 FROM sessions WHERE id = ?");
    e.bind(1, id);
    if (!e.executeStep()) throw StoreError("not_found", "no session " + id);
    return false;
  });
}

std::int64_t scope_refusals(Db& db, const std::string& id) {
  return guarded("count scope refusals", [&] {
    Stmt q(db,
        "SELECT count(*) FROM turns WHERE session_id = ? AND scope IN ('out_of_scope', 'attack')");
    q.bind(1, id);
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
}

std::vector<Session> list_for_user(Db& db, const std::string& user_id, bool open_only, int limit) {
  return guarded("list sessions", [&] {
    std::vector<Session> out;
    Stmt q(db, std::string("SELECT ") + kCols +
                                      " FROM sessions WHERE user_id = ?" +
                                      (open_only ? " AND closed_at IS NULL" : "") +
                                      // Ties (one second) by id: PostgreSQL has no rowid, and both
                                      // engines must list alike.
                                      " ORDER BY created_at DESC, id DESC LIMIT ?");
    q.bind(1, user_id);
    q.bind(2, limit);
    while (q.executeStep()) out.push_back(row(q));
    return out;
  });
}

}  // namespace plotq::store::sessions
