#include "server/session_access.hpp"
#include "server/errors.hpp"

namespace plotq::server {

std::optional<store::Session> owned_session(App& app, const Caller& caller, std::string_view id, Responder& res) {
  if (id.empty() || id.size() > 128) {
    res.send_error("session_not_found");
    return std::nullopt;
  }
  std::optional<store::Session> s;
  try {
    s = store::sessions::get(app.db, std::string(id));
  } catch (const std::exception& e) {
    res.send_error(store_failure_code(e));
    return std::nullopt;
  }
  bool trusted = caller.role == Role::assistant && !caller.development;
  if (!s || (s->user_id != caller.user && !trusted)) {
    res.send_error("session_not_found");
    return std::nullopt;
  }
  return s;
}

}  // namespace plotq::server
