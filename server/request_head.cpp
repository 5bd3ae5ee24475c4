#include "server/request_head.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

namespace plotq::server {

namespace http = boost::beast::http;

bool header_over_limit(std::size_t parsed, std::size_t buffered, bool header_done, std::size_t limit) {
  return parsed + (header_done ? 0 : buffered) > limit;
}

HeadCheck check_request_head(const Router& router, std::size_t server_body_limit, std::string_view method,
                             std::string_view target, std::optional<std::uint64_t> content_length,
                             std::string_view expect, bool body_done) {
  HeadCheck h;
  if (target.empty() || target[0] != '/') {
    h.error = "bad_request";
    return h;
  }
  h.match = router.match(method, target.substr(0, target.find('?')));
  h.body_limit = server_body_limit;
  if (h.match.kind == RouteMatch::found && h.match.route->options.body_limit)
    h.body_limit = *h.match.route->options.body_limit;
  if (content_length && *content_length > h.body_limit) {
    h.error = "too_large";
    return h;
  }
  h.send_continue = !body_done && boost::beast::iequals(boost::beast::string_view(expect.data(), expect.size()), "100-continue");
  return h;
}

std::string_view read_error_answer(const boost::system::error_code& ec) {
  if (ec == http::error::header_limit) return "headers_too_large";
  if (ec == http::error::body_limit) return "too_large";
  // Parse errors of the request itself get 400; anything else (EOF, reset, our own timeout) just closes.
  bool parse_error = ec.category() == http::make_error_code(http::error::bad_method).category() &&
                     ec != http::error::end_of_stream && ec != http::error::partial_message &&
                     ec != http::error::need_more && ec != http::error::need_buffer;
  return parse_error ? "bad_request" : "";
}

Routed route_request(RouteMatch match, std::string method, std::string_view target, Fields headers, std::string body) {
  Routed out;
  if (match.kind == RouteMatch::bad_path) out.error = "bad_request";
  if (match.kind == RouteMatch::not_found) out.error = "not_found";
  if (match.kind == RouteMatch::method_not_allowed) {
    out.error = "method_not_allowed";
    out.allow = std::move(match.allow);
  }
  if (!out.error.empty()) return out;
  std::size_t q = target.find('?');
  auto query = parse_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
  if (!query) {
    out.error = "bad_request";
    return out;
  }
  Request r;
  r.method = std::move(method);
  r.target = std::string(target);
  r.path = std::string(target.substr(0, q));
  r.route = match.route->pattern;
  r.params = std::move(match.params);
  r.query = std::move(*query);
  r.headers = std::move(headers);
  r.body = std::move(body);
  out.request = std::move(r);
  out.route = match.route;
  return out;
}

}  // namespace plotq::server
