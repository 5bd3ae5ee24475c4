#include "store/strikes.hpp"

#include "store/sql.hpp"

#include "store/sql_util.hpp"
#include "store/write_tx.hpp"

namespace plotq::store::strikes {

std::int64_t add(Db& db, const std::string& user_id, const std::string& kind, UnixSeconds now,
                 const std::optional<std::string>& session_id, const std::optional<std::string>& turn_id) {
  return guarded("add strike", [&] {
    WriteTx tx(db, "strike");  // inserts only; joins a transaction already open (a message's admission)
    detail::ensure_user(db, user_id, now);
    Stmt q(db, "INSERT INTO strikes(user_id, kind, at, session_id, turn_id) VALUES (?, ?, ?, ?, ?) RETURNING id");
    q.bind(1, user_id);
    q.bind(2, kind);
    q.bind(3, iso_utc(now));
    detail::bind_opt(q, 4, session_id);
    detail::bind_opt(q, 5, turn_id);
    std::int64_t id = q.executeStep() ? q.getColumn(0).getInt64() : 0;
    q.reset();  // a RETURNING statement is in progress until reset: SQLite would refuse the COMMIT
    tx.commit();
    return id;
  });
}

std::int64_t count_since(Db& db, const std::string& user_id, UnixSeconds since,
                         const std::optional<std::string>& kind) {
  return guarded("count strikes", [&] {
    Stmt q(db, std::string("SELECT count(*) FROM strikes WHERE user_id = ?1 AND at >= ?2") +
                                      (kind ? " AND kind = ?3" : ""));
    q.bind(1, user_id);
    q.bind(2, iso_utc(since));
    if (kind) q.bind(3, *kind);
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
}

bool locked_out(Db& db, const std::string& user_id, UnixSeconds now, std::int64_t threshold,
                std::int64_t window_s) {
  if (threshold <= 0) return false;
  return count_since(db, user_id, now - window_s) >= threshold;
}

std::vector<Strike> list(Db& db, const std::string& user_id, int limit) {
  return guarded("list strikes", [&] {
    std::vector<Strike> out;
    Stmt q(db,
        "SELECT id, user_id, kind, at, session_id, turn_id FROM strikes WHERE user_id = ? "
        "ORDER BY at DESC, id DESC LIMIT ?");
    q.bind(1, user_id);
    q.bind(2, limit);
    while (q.executeStep())
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                     detail::time_of(q.getColumn(3)), detail::opt_text(q.getColumn(4)),
                     detail::opt_text(q.getColumn(5))});
    return out;
  });
}

std::int64_t clear(Db& db, const std::string& user_id) {
  return guarded("clear strikes", [&] {
    Stmt q(db, "DELETE FROM strikes WHERE user_id = ?");
    q.bind(1, user_id);
    return std::int64_t(q.exec());
  });
}

}  // namespace plotq::store::strikes
