#include "store/target.hpp"

#include <cctype>

namespace plotq::store {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_uri(std::string_view t) { return starts_with(t, "postgresql://") || starts_with(t, "postgres://"); }

// libpq's conninfo keywords are lowercase letters and `_`; a value names PostgreSQL when it starts
// with one of them followed by `=` (spaces allowed around it, as libpq allows).
bool is_conninfo(std::string_view t) {
  size_t i = 0;
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  size_t k = i;
  while (i < t.size() && (std::islower(static_cast<unsigned char>(t[i])) || t[i] == '_')) ++i;
  if (i == k) return false;
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
  return i < t.size() && t[i] == '=';
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// libpq percent-decodes a URI's parameter names: `pass%77ord` is the password too.
std::string percent_decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// libpq looks for a URI's user credentials up to the first `@` or `/` anywhere in it, the query
// included: a `/` that went with a removed password could turn a later `@` into credentials when
// the printed text is read again. The query is printed with `@` and `/` percent-encoded (libpq
// decodes them: the same target), so what is printed reads as what was given.
std::string encode_at_slash(std::string_view s) {
  std::string out;
  for (char ch : s) out += ch == '@' ? std::string("%40") : ch == '/' ? std::string("%2F") : std::string(1, ch);
  return out;
}

std::string redact_uri(std::string_view t) {
  size_t scheme_end = t.find("://") + 3;
  std::string out(t.substr(0, scheme_end));
  std::string_view rest = t.substr(scheme_end);
  // As libpq reads it: user credentials end at the first `@`, unless a `/` comes first.
  size_t at_or_slash = rest.find_first_of("@/");
  if (at_or_slash != std::string_view::npos && rest[at_or_slash] == '@') {
    std::string_view user = rest.substr(0, at_or_slash);
    size_t colon = user.find(':');
    out += colon == std::string_view::npos ? std::string(user) : std::string(user.substr(0, colon)) + ":***";
    out += '@';
    rest = rest.substr(at_or_slash + 1);
  }
  size_t q = rest.find('?');
  out += rest.substr(0, q);
  if (q == std::string_view::npos) return out;
  out += '?';
  std::string_view params = rest.substr(q + 1);
  bool first = true;
  while (true) {
    size_t amp = params.find('&');
    std::string_view p = params.substr(0, amp);
    size_t eq = p.find('=');
    std::string key = percent_decoded(p.substr(0, eq));
    if (!first) out += '&';
    first = false;
    out += key == "password" && eq != std::string_view::npos ? encode_at_slash(p.substr(0, eq)) + "=***"
                                                              : encode_at_slash(p);
    if (amp == std::string_view::npos) break;
    params = params.substr(amp + 1);
  }
  return out;
}

// keyword = value pairs; a value is 'quoted' (\' and \\ escapes) or runs to the next space (a
// backslash escapes the next character). On anything else the rest is dropped: better to lose the
// tail of a malformed target in a message than to print a password from it.
std::string redact_conninfo(std::string_view t) {
  std::string out;
  size_t i = 0;
  auto space = [&](size_t j) { return j < t.size() && std::isspace(static_cast<unsigned char>(t[j])); };
  while (true) {
    while (space(i)) ++i;
    if (i >= t.size()) break;
    size_t k = i;
    while (i < t.size() && !space(i) && t[i] != '=') ++i;
    std::string_view key = t.substr(k, i - k);
    while (space(i)) ++i;
    if (i >= t.size() || t[i] != '=' || key.empty()) {
      out += out.empty() ? "..." : " ...";
      break;
    }
    ++i;
    while (space(i)) ++i;
    size_t v = i;
    bool ok = true;
    if (i < t.size() && t[i] == '\'') {
      ++i;
      while (i < t.size() && t[i] != '\'') i += (t[i] == '\\' && i + 1 < t.size()) ? 2 : 1;
      if (i >= t.size()) ok = false;
      else ++i;
    } else {
      while (i < t.size() && !space(i)) i += (t[i] == '\\' && i + 1 < t.size()) ? 2 : 1;
    }
    if (!out.empty()) out += ' ';
    if (!ok) {  // an unterminated quote: nothing after it is printed
      out += std::string(key) + (key == "password" ? "=***" : "=...");
      break;
    }
    out += std::string(key) + "=" + (key == "password" ? std::string("***") : std::string(t.substr(v, i - v)));
  }
  return out;
}

}  // namespace

std::string_view to_string(Engine e) { return e == Engine::postgresql ? "postgresql" : "sqlite"; }

Engine engine_of(std::string_view target) {
  return is_uri(target) || is_conninfo(target) ? Engine::postgresql : Engine::sqlite;
}

std::string redacted(std::string_view target) {
  if (is_uri(target)) return redact_uri(target);
  if (is_conninfo(target)) return redact_conninfo(target);
  return std::string(target);
}

}  // namespace plotq::store
