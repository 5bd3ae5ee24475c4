// Who may touch a chat session: its own user, or the trusted assistant service (a token with the
// assistant role) acting for that user. Anyone else is told the session does not exist.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "server/app.hpp"
#include "store/sessions.hpp"
#include "store/turns.hpp"

namespace plotq::server {

// Whether the caller may use this session (pure: the answer for a session read from the store).
bool may_use(const Caller& caller, const std::optional<store::Session>& s);
// The same by the session's owner alone (who owns a session never changes).
bool may_use(const Caller& caller, const std::string& owner);

// Reads the session through app.store and calls `then` with it on the loop when the caller may use
// it; otherwise answers 404 session_not_found (or 503 store_unavailable / storage_full) itself.
void with_owned_session(App& app, const Caller& caller, std::string_view id, std::shared_ptr<Responder> res,
                        std::function<void(const store::Session&)> then);

// The same, and the turn must belong to the session (else 404 not_found): one store call for both.
void with_turn_in_session(App& app, const Caller& caller, std::string_view session_id, std::string_view turn_id,
                          std::shared_ptr<Responder> res,
                          std::function<void(const store::Session&, const store::Turn&)> then);

}  // namespace plotq::server
