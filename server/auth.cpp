#include "server/auth.hpp"

#include <stdexcept>

namespace plotq::server {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '~' || c == '+' || c == '/' || c == '-' || c == '=';
}

bool valid_token(std::string_view t) {
  if (t.size() < 16 || t.size() > 256) return false;
  for (char c : t)
    if (!token_char(c)) return false;
  return true;
}

// Compares without an early exit: the time depends on the given token's length only.
bool same_secret(std::string_view given, std::string_view known) {
  unsigned diff = given.size() != known.size() ? 1u : 0u;
  for (std::size_t i = 0; i < given.size(); ++i) {
    unsigned char k = i < known.size() ? static_cast<unsigned char>(known[i]) : 0;
    diff |= static_cast<unsigned char>(given[i]) ^ k;
  }
  return diff == 0;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

struct Parsed {
  std::string token;
  Caller caller;
};

// Parses PLOTQ_TOKENS; on error returns the reason in *err (entries are named by position only).
std::vector<Parsed> parse_tokens(std::string_view text, std::string* err) {
  std::vector<Parsed> out;
  std::size_t index = 0;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view entry = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    ++index;
    std::string where = "entry " + std::to_string(index);
    if (entry.empty()) {
      *err = where + " is empty";
      return {};
    }
    // A token may itself contain '=' (base64 padding): the user is after the last '='.
    std::size_t eq = entry.rfind('=');
    if (eq == std::string_view::npos) {
      *err = where + " must be token=user[:role]";
      return {};
    }
    std::string_view token = entry.substr(0, eq), rest = entry.substr(eq + 1);
    if (!valid_token(token)) {
      *err = where + ": a token must be 16..256 characters of [A-Za-z0-9._~+/=-]";
      return {};
    }
    Parsed p;
    p.token = std::string(token);
    std::size_t colon = rest.find(':');
    std::string_view user = rest.substr(0, colon);
    if (!valid_user_name(user)) {
      *err = where + ": the user must be 1..64 characters of [A-Za-z0-9_.@-]";
      return {};
    }
    p.caller.user = std::string(user);
    if (colon != std::string_view::npos) {
      std::string_view role = rest.substr(colon + 1);
      if (role == "user") p.caller.role = Role::user;
      else if (role == "assistant") p.caller.role = Role::assistant;
      else {
        *err = where + ": the role must be user or assistant";
        return {};
      }
    }
    for (const Parsed& q : out)
      if (q.token == p.token) {
        *err = where + " repeats an earlier token";
        return {};
      }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::string_view to_string(Role r) { return r == Role::assistant ? "assistant" : "user"; }

bool valid_user_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '@' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string CallerCheck::validate_tokens(std::string_view text) {
  std::string err;
  parse_tokens(text, &err);
  return err;
}

CallerCheck::CallerCheck(const AuthConfig& config) {
  std::string err;
  for (Parsed& p : parse_tokens(config.tokens, &err)) tokens_.push_back({std::move(p.token), std::move(p.caller)});
  if (!err.empty()) throw std::invalid_argument("PLOTQ_TOKENS: " + err);
  if (config.environment != "production" && config.environment != "development")
    throw std::invalid_argument("PLOTQ_ENVIRONMENT must be production or development");
  development_ = config.environment == "development" && tokens_.empty();
}

CallerVerdict CallerCheck::verify(const Request& req, Need need) const {
  CallerVerdict v;
  auto auth = req.header("Authorization");
  if (!auth) {
    if (!development_) {
      v.error = "unauthenticated";
      return v;
    }
    if (!req.peer.loopback) {
      v.error = "forbidden";
      return v;
    }
    std::string_view user = req.header("X-Plotq-User").value_or("dev");
    if (!valid_user_name(user)) {
      v.error = "bad_request";
      return v;
    }
    v.caller = Caller{std::string(user), need == Need::assistant ? Role::assistant : Role::user, true};
    return v;
  }
  std::string_view h = trim(*auth);
  if (h.size() < 7 || !iequals(h.substr(0, 6), "bearer") || h[6] != ' ') {
    v.error = "unauthenticated";
    return v;
  }
  std::string_view token = trim(h.substr(7));
  const Entry* found = nullptr;
  for (const Entry& e : tokens_)  // every entry is compared, matched or not
    if (same_secret(token, e.token) && !found) found = &e;
  if (!found) {
    v.error = "unauthenticated";
    return v;
  }
  if (need == Need::assistant && found->caller.role != Role::assistant) {
    v.error = "forbidden";
    return v;
  }
  v.caller = found->caller;
  return v;
}

std::string_view check_metrics_caller(const Request& req, std::string_view metrics_token) {
  if (req.peer.loopback) return {};
  if (metrics_token.empty()) return "forbidden";
  auto auth = req.header("Authorization");
  if (!auth) return "unauthenticated";
  std::string_view h = trim(*auth);
  if (h.size() < 7 || !iequals(h.substr(0, 6), "bearer") || h[6] != ' ') return "unauthenticated";
  return same_secret(trim(h.substr(7)), metrics_token) ? std::string_view{} : std::string_view("unauthenticated");
}

std::string validate_metrics_token(std::string_view text) {
  if (text.empty() || valid_token(text)) return {};
  return "must be 16..256 characters of [A-Za-z0-9._~+/=-]";
}

std::optional<Caller> check_caller(const CallerCheck& check, const Request& req, Responder& res, Need need) {
  CallerVerdict v = check.verify(req, need);
  if (!v.caller) res.send_error(v.error);
  return v.caller;
}

}  // namespace plotq::server
