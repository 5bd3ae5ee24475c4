// sessions: chat sessions. A session closes once (after 3 scope refusals, by an admin, ...).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"
#include "store/types.hpp"

namespace plotq::store {

struct Session {
  std::string id;
  std::string user_id;
  UnixSeconds created_at = 0;
  std::optional<UnixSeconds> closed_at;
  std::optional<CloseReason> close_reason;
  bool open() const { return !closed_at.has_value(); }
};

namespace sessions {
// Creates the session (and its user when new). A taken id: StoreError "constraint".
void create(Db& db, const std::string& id, const std::string& user_id, UnixSeconds now);
std::optional<Session> get(Db& db, const std::string& id);
// Closes an open session: true when this call closed it, false when it was already closed
// (the first reason stays). Unknown id: StoreError "not_found".
bool close(Db& db, const std::string& id, CloseReason reason, UnixSeconds now);
// Turns of the session judged out_of_scope or attack (needs_data never counts).
std::int64_t scope_refusals(Db& db, const std::string& id);
// Newest first; open_only skips closed ones.
std::vector<Session> list_for_user(Db& db, const std::string& user_id, bool open_only = false,
                                   int limit = 100);
}  // namespace sessions

}  // namespace plotq::store
