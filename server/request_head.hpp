// What HttpSession decides about a request, as pure functions (no socket, no Beast type in this
// header): the head's checks before the body is read, what a read error answers, and, once the body
// is in, the Request its route's handler gets. fuzz/http_request drives Beast's parser over a
// stranger's bytes and calls these same functions.
#pragma once
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/http.hpp"
#include "server/router.hpp"

namespace plotq::server {

// Beast's header_limit bounds one parse call, not the whole header: fields that come a few hundred
// bytes at a time would be parsed and dropped from the buffer as they come, so a peer could pile
// them up without end. The session counts the bytes the parser took (`parsed`) and, while the
// header is unfinished, those still buffered.
bool header_over_limit(std::size_t parsed, std::size_t buffered, bool header_done, std::size_t limit);

// The head read, before the body: the route matched, the body limit that applies (the route's or the
// server's; it also bounds a chunked body), whether to send 100 Continue, or the error answered at
// once, after which the connection closes.
struct HeadCheck {
  std::string error;  // bad_request: a target not in origin form; too_large: Content-Length over the limit
  RouteMatch match;
  std::size_t body_limit = 0;
  bool send_continue = false;  // Expect: 100-continue and a body still to come
};
HeadCheck check_request_head(const Router& router, std::size_t server_body_limit, std::string_view method,
                             std::string_view target, std::optional<std::uint64_t> content_length,
                             std::string_view expect, bool body_done);

// A failed read: the error answered (headers_too_large, too_large, bad_request: the connection
// then closes), or empty when the connection just closes (EOF, reset, a timeout).
std::string_view read_error_answer(const boost::system::error_code& ec);

// The whole request read: the Request its route's handler gets (peer, id and time are the
// session's), or the error answered: not_found, method_not_allowed (with `allow`), bad_request (a
// bad path or query). The connection stays open as the client asked.
struct Routed {
  std::optional<Request> request;
  const Route* route = nullptr;  // with request: whose handler gets it
  std::string error;
  std::string allow;
};
Routed route_request(RouteMatch match, std::string method, std::string_view target, Fields headers, std::string body);

}  // namespace plotq::server
