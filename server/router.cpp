#include "server/router.hpp"

#include <algorithm>
#include <stdexcept>

namespace plotq::server {
namespace {

bool is_param(std::string_view seg) { return seg.size() >= 3 && seg.front() == '{' && seg.back() == '}'; }

bool valid_param_name(std::string_view name) {
  if (name.empty() || !((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

bool valid_literal(std::string_view seg) {
  if (seg.empty()) return false;
  for (char c : seg) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_' || c == '.' || c == '~';
    if (!ok) return false;
  }
  return true;
}

// "/a/b" -> {"a","b"}; "/" -> {}. Empty segments are kept (so they never match).
std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.size() <= 1) return out;
  std::size_t start = 1;
  while (true) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      out.push_back(path.substr(start));
      break;
    }
    out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// Lower is more specific: compare literal(0)/param(1) per segment, first difference decides.
bool more_specific(const Route& a, const Route& b) {
  for (std::size_t i = 0; i < a.segments.size() && i < b.segments.size(); ++i) {
    bool pa = is_param(a.segments[i]), pb = is_param(b.segments[i]);
    if (pa != pb) return !pa;
  }
  return false;
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int h = hex(s[i + 1]), l = hex(s[i + 2]);
      if (h < 0 || l < 0) return std::nullopt;
      char d = static_cast<char>(h * 16 + l);
      if (d == '\0') return std::nullopt;
      out.push_back(d);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::optional<Params> parse_query(std::string_view query) {
  Params out;
  while (!query.empty()) {
    std::size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (part.empty()) continue;
    std::size_t eq = part.find('=');
    auto key = percent_decode(part.substr(0, eq), true);
    auto val = percent_decode(eq == std::string_view::npos ? std::string_view{} : part.substr(eq + 1), true);
    if (!key || !val) return std::nullopt;
    out.emplace_back(std::move(*key), std::move(*val));
  }
  return out;
}

void Router::add(std::string method, std::string pattern, Handler handler, RouteOptions options) {
  if (method.empty() || !std::all_of(method.begin(), method.end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
    throw std::invalid_argument("route method must be upper-case letters: " + method);
  if (pattern.empty() || pattern[0] != '/') throw std::invalid_argument("route pattern must start with '/': " + pattern);
  if (!handler) throw std::invalid_argument("route has no handler: " + pattern);
  Route r;
  r.method = std::move(method);
  r.handler = std::move(handler);
  r.options = options;
  std::vector<std::string> names;
  if (pattern != "/") {
    for (std::string_view seg : split_path(pattern)) {
      if (is_param(seg)) {
        std::string name(seg.substr(1, seg.size() - 2));
        if (!valid_param_name(name)) throw std::invalid_argument("bad parameter name in route: " + pattern);
        if (std::find(names.begin(), names.end(), name) != names.end())
          throw std::invalid_argument("parameter named twice in route: " + pattern);
        names.push_back(name);
      } else if (!valid_literal(seg)) {
        throw std::invalid_argument("bad literal segment in route: " + pattern);
      }
      r.segments.emplace_back(seg);
    }
  }
  r.pattern = std::move(pattern);
  for (const Route& old : routes_) {
    if (old.method != r.method || old.segments.size() != r.segments.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < r.segments.size() && same; ++i) {
      bool pa = is_param(old.segments[i]), pb = is_param(r.segments[i]);
      same = pa == pb && (pa || old.segments[i] == r.segments[i]);
    }
    if (same) throw std::invalid_argument("route registered twice: " + r.method + " " + r.pattern);
  }
  routes_.push_back(std::move(r));
}

RouteMatch Router::match(std::string_view method, std::string_view path) const {
  RouteMatch out;
  if (path.empty() || path[0] != '/') {
    out.kind = RouteMatch::bad_path;
    return out;
  }
  std::vector<std::string> decoded;
  for (std::string_view seg : split_path(path)) {
    auto d = percent_decode(seg, false);
    if (!d) {
      out.kind = RouteMatch::bad_path;
      return out;
    }
    decoded.push_back(std::move(*d));
  }
  const Route* best = nullptr;
  std::vector<std::string> allow;
  for (const Route& r : routes_) {
    if (r.segments.size() != decoded.size()) continue;
    bool ok = true;
    for (std::size_t i = 0; i < decoded.size() && ok; ++i) {
      if (decoded[i].empty()) ok = false;
      else if (!is_param(r.segments[i])) ok = r.segments[i] == decoded[i];
    }
    if (!ok) continue;
    if (r.method != method) {
      if (std::find(allow.begin(), allow.end(), r.method) == allow.end()) allow.push_back(r.method);
      continue;
    }
    if (!best || more_specific(r, *best)) best = &r;
  }
  if (!best) {
    if (allow.empty()) return out;  // not_found
    out.kind = RouteMatch::method_not_allowed;
    std::sort(allow.begin(), allow.end());
    for (const auto& m : allow) out.allow += (out.allow.empty() ? "" : ", ") + m;
    return out;
  }
  out.kind = RouteMatch::found;
  out.route = best;
  for (std::size_t i = 0; i < decoded.size(); ++i)
    if (is_param(best->segments[i]))
      out.params.emplace_back(best->segments[i].substr(1, best->segments[i].size() - 2), std::move(decoded[i]));
  return out;
}

std::size_t Router::max_body_limit(std::size_t server_limit) const {
  std::size_t m = server_limit;
  for (const Route& r : routes_)
    if (r.options.body_limit) m = std::max(m, *r.options.body_limit);
  return m;
}

}  // namespace plotq::server
