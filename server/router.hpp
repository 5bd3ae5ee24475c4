// Method + path pattern -> handler. Patterns are literal segments and whole-segment parameters:
//   "/healthz", "/v1/sessions/{id}/messages", "/render/{job_id}/cancel".
// A literal segment beats a parameter at the first segment where two matching patterns differ, so
// "/v1/sessions/active" wins over "/v1/sessions/{id}" for that path. Matching is exact: no trailing
// slash folding, no empty segments. Routes are registered at startup, before the server listens.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http.hpp"

namespace plotq::server {

struct RouteOptions {
  // Overrides the server's body limit (PLOTQ_HTTP_BODY_LIMIT) for this route.
  std::optional<std::size_t> body_limit;
};

struct Route {
  std::string method;
  std::string pattern;
  Handler handler;
  RouteOptions options;
  std::vector<std::string> segments;  // "{id}" kept as written
};

struct RouteMatch {
  enum Kind { found, not_found, method_not_allowed, bad_path } kind = not_found;
  const Route* route = nullptr;  // when found
  Params params;                 // when found
  std::string allow;             // when method_not_allowed: "GET, POST"
};

class Router {
 public:
  // Throws std::invalid_argument on a malformed pattern or a method+shape registered twice.
  void add(std::string method, std::string pattern, Handler handler, RouteOptions options = {});
  void get(std::string pattern, Handler h, RouteOptions o = {}) { add("GET", std::move(pattern), std::move(h), o); }
  void post(std::string pattern, Handler h, RouteOptions o = {}) { add("POST", std::move(pattern), std::move(h), o); }

  // path is the raw (undecoded) path, without the query.
  RouteMatch match(std::string_view method, std::string_view path) const;

  // The largest body any route accepts (the server's limit or a route's override).
  std::size_t max_body_limit(std::size_t server_limit) const;
  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

// Percent-decoding; nullopt on a bad escape or a decoded NUL. plus_is_space for query strings.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);
// "a=1&b=x%20y" -> {{"a","1"},{"b","x y"}}; nullopt on a bad escape.
std::optional<Params> parse_query(std::string_view query);

}  // namespace plotq::server
