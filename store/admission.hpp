// What a chat message's admission reads (server/limits.cpp admit_message), in one statement, so on
// PostgreSQL it is one round trip inside the admission's transaction: the user's message counts,
// their recent strikes, and the session's state as the transaction sees it (a session cached as
// the user's on the node may have been closed or removed since, on this node or another).
#pragma once
#include <cstdint>
#include <string>

#include "store/db.hpp"
#include "store/quotas.hpp"
#include "store/time.hpp"

namespace plotq::store::admission {

struct Seen {
  CounterCounts messages;     // the day's and the minute's of `now`
  std::int64_t strikes = 0;   // the user's, at or after strikes_since
  bool session_found = false;
  bool session_open = false;
  // The user has a turn not yet done (on any node of a cluster): one in flight per user.
  bool turn_in_flight = false;
};
Seen read(Db& db, const std::string& user_id, const std::string& session_id, UnixSeconds now, UnixSeconds strikes_since);

}  // namespace plotq::store::admission
