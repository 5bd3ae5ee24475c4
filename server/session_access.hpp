// Who may touch a chat session: its own user, or the trusted assistant service (a token with the
// assistant role) acting for that user. Anyone else is told the session does not exist.
#pragma once
#include <optional>
#include <string_view>

#include "server/app.hpp"
#include "store/sessions.hpp"

namespace plotq::server {

// The session, or nullopt after answering 404 session_not_found (or 503 store_unavailable).
std::optional<store::Session> owned_session(App& app, const Caller& caller, std::string_view id, Responder& res);

}  // namespace plotq::server
