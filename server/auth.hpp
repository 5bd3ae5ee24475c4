// Caller check for plotqd routes: bearer tokens from configuration, or development mode.
//
//   PLOTQ_TOKENS="tokenA=alice,tokenB=bob,tokenC=chat-svc:assistant"
//
// names one user per token and, after a colon, its role (user by default; assistant = the trusted
// assistant service that calls /render, /run-data and marks scope verdicts). Tokens are 16..256
// characters of [A-Za-z0-9._~+/=-].
//
// Verdicts: no/malformed Authorization header or an unknown token -> 401 unauthenticated; a known
// token whose role is not enough for the route -> 403 forbidden. Development mode (PLOTQ_ENVIRONMENT=
// development and no tokens configured): a request without a token from a loopback peer passes as the
// user named by X-Plotq-User (default "dev") with every role; from any other peer -> 403 forbidden.
// Production with no tokens configured lets nobody through (401), like an empty allow-list.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http.hpp"

namespace plotq::server {

enum class Role { user, assistant };
std::string_view to_string(Role r);

struct Caller {
  std::string user;  // the token's user, or X-Plotq-User in development mode
  Role role = Role::user;
  bool development = false;  // passed by development mode, not by a token
};

struct AuthConfig {
  std::string tokens;                   // PLOTQ_TOKENS (secret)
  std::string environment = "production";  // PLOTQ_ENVIRONMENT: production | development
  std::string metrics_token;               // PLOTQ_METRICS_TOKEN (secret): GET /metrics off loopback
};

// What a route needs: any known caller, or the assistant service.
enum class Need { user, assistant };

struct CallerVerdict {
  std::optional<Caller> caller;
  std::string_view error;  // vocabulary code when caller is empty: unauthenticated, forbidden, bad_request
};

class CallerCheck {
 public:
  // Throws std::invalid_argument with a clear message when the token list is malformed.
  explicit CallerCheck(const AuthConfig& config);

  CallerVerdict verify(const Request& req, Need need = Need::user) const;
  bool development() const { return development_; }
  std::size_t token_count() const { return tokens_.size(); }

  // "" when a PLOTQ_TOKENS value is well formed, else the reason (never echoing a token).
  static std::string validate_tokens(std::string_view text);

 private:
  struct Entry {
    std::string token;
    Caller caller;
  };
  std::vector<Entry> tokens_;
  bool development_ = false;
};

// For route handlers: the caller, or nullopt after answering the error (401/403/400) on res.
//   auto caller = check_caller(app.callers, req, *res);  if (!caller) return;
std::optional<Caller> check_caller(const CallerCheck& check, const Request& req, Responder& res, Need need = Need::user);

// GET /metrics: a loopback peer passes (a scraper on the host); any other peer needs
// `Authorization: Bearer <PLOTQ_METRICS_TOKEN>`. "" when allowed, else the code: unauthenticated
// (no or another token while one is configured), forbidden (off loopback, no metrics token set).
// The metrics token is not a user token: it opens /metrics and nothing else.
std::string_view check_metrics_caller(const Request& req, std::string_view metrics_token);
// "" when a PLOTQ_METRICS_TOKEN value is empty or well formed (16..256 of [A-Za-z0-9._~+/=-]).
std::string validate_metrics_token(std::string_view text);

// User names (token users, X-Plotq-User): 1..64 of [A-Za-z0-9_.@-].
bool valid_user_name(std::string_view name);

}  // namespace plotq::server
