#include "store/admission.hpp"

#include "store/error.hpp"
#include "store/sql.hpp"
#include "store/sql_util.hpp"

namespace plotq::store::admission {

Seen read(Db& db, const std::string& user_id, const std::string& session_id, UnixSeconds now, UnixSeconds strikes_since) {
  detail::require_id("user id", user_id);
  return guarded("read a message's admission", [&] {
    Stmt q(db,
        "SELECT (SELECT count FROM quota_days WHERE user_id = ?1 AND counter = 'messages' AND day = ?2), "
        "(SELECT count FROM quota_minutes WHERE user_id = ?1 AND counter = 'messages' AND minute = ?3), "
        "(SELECT count(*) FROM strikes WHERE user_id = ?1 AND at >= ?4), "
        "(SELECT CASE WHEN closed_at IS NULL THEN 1 ELSE 0 END FROM sessions WHERE id = ?5), "
        "(SELECT count(*) FROM turns WHERE user_id = ?1 AND status <> 'done')");
    q.bind(1, user_id);
    q.bind(2, utc_day(now));
    q.bind(3, utc_minute(now));
    q.bind(4, iso_utc(strikes_since));
    q.bind(5, session_id);
    Seen s;
    if (q.executeStep()) {
      s.messages.day = q.getColumn(0).getInt64();
      s.messages.minute = q.getColumn(1).getInt64();
      s.strikes = q.getColumn(2).getInt64();
      s.session_found = !q.getColumn(3).isNull();
      s.session_open = q.getColumn(3).getInt64() == 1;
      s.turn_in_flight = q.getColumn(4).getInt64() > 0;
    }
    return s;
  });
}

}  // namespace plotq::store::admission
