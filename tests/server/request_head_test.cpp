// HttpSession's decisions as pure functions (server/request_head.hpp), the ones fuzz/http_request
// calls: the head before the body, a read error's answer, and the route once the body is in.
#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>
#include <catch2/catch.hpp>

#include "server/request_head.hpp"

using namespace plotq::server;
namespace http = boost::beast::http;

namespace {
Router routes() {
  Router r;
  Handler none = [](Request, std::shared_ptr<Responder>) {};
  r.get("/healthz", none);
  RouteOptions big;
  big.body_limit = 1000;
  r.post("/v1/sessions/{id}/messages", none, big);
  return r;
}
}  // namespace

TEST_CASE("request head: target form, route, body limit, 413 before the body", "[request_head]") {
  Router r = routes();
  HeadCheck h = check_request_head(r, 100, "POST", "/v1/sessions/s1/messages?x=1", 1000, "", false);
  CHECK(h.error.empty());
  CHECK(h.match.kind == RouteMatch::found);
  CHECK(h.body_limit == 1000);  // the route's own
  CHECK(check_request_head(r, 100, "POST", "/v1/sessions/s1/messages", 1001, "", false).error == "too_large");
  CHECK(check_request_head(r, 100, "GET", "/healthz", 101, "", false).error == "too_large");  // the server's
  CHECK(check_request_head(r, 100, "GET", "/healthz", 100, "", false).error.empty());
  CHECK(check_request_head(r, 100, "GET", "/healthz", std::nullopt, "", false).body_limit == 100);
  // Not origin form: answered 400 before anything else.
  CHECK(check_request_head(r, 100, "GET", "http://x/healthz", std::nullopt, "", true).error == "bad_request");
  CHECK(check_request_head(r, 100, "GET", "", std::nullopt, "", true).error == "bad_request");
  CHECK(check_request_head(r, 100, "GET", "*", std::nullopt, "", true).error == "bad_request");
  // A route that does not exist is answered after the body (the connection can stay open).
  HeadCheck missing = check_request_head(r, 100, "GET", "/nope", std::nullopt, "", true);
  CHECK(missing.error.empty());
  CHECK(missing.match.kind == RouteMatch::not_found);
}

TEST_CASE("request head: 100 Continue only when asked and a body is still to come", "[request_head]") {
  Router r = routes();
  CHECK(check_request_head(r, 100, "POST", "/v1/sessions/s/messages", 10, "100-Continue", false).send_continue);
  CHECK_FALSE(check_request_head(r, 100, "POST", "/v1/sessions/s/messages", 10, "100-continue", true).send_continue);
  CHECK_FALSE(check_request_head(r, 100, "POST", "/v1/sessions/s/messages", 10, "", false).send_continue);
  CHECK_FALSE(check_request_head(r, 100, "POST", "/v1/sessions/s/messages", 10, "100-continue2", false).send_continue);
}

TEST_CASE("request head: the header's bytes are counted across reads", "[request_head]") {
  CHECK_FALSE(header_over_limit(8000, 192, false, 8192));
  CHECK(header_over_limit(8000, 193, false, 8192));  // parsed and still buffered together
  CHECK_FALSE(header_over_limit(8192, 5000, true, 8192));  // once done, the buffer holds the body
  CHECK(header_over_limit(8193, 0, true, 8192));
}

TEST_CASE("read errors: 431, 413, 400 for a malformed request, else a silent close", "[request_head]") {
  CHECK(read_error_answer(http::error::header_limit) == "headers_too_large");
  CHECK(read_error_answer(http::error::body_limit) == "too_large");
  CHECK(read_error_answer(http::error::bad_method) == "bad_request");
  CHECK(read_error_answer(http::error::bad_target) == "bad_request");
  CHECK(read_error_answer(http::error::bad_chunk) == "bad_request");
  CHECK(read_error_answer(http::error::end_of_stream).empty());
  CHECK(read_error_answer(http::error::partial_message).empty());
  CHECK(read_error_answer(boost::asio::error::connection_reset).empty());
  CHECK(read_error_answer(boost::asio::error::operation_aborted).empty());
}

TEST_CASE("route: the Request its handler gets, or 404, 405 with Allow, 400", "[request_head]") {
  Router r = routes();
  Routed ok = route_request(r.match("POST", "/v1/sessions/s%201/messages"), "POST",
                            "/v1/sessions/s%201/messages?after=3&q=a+b", {{"X-A", "1"}}, "{}");
  REQUIRE(ok.request);
  CHECK(ok.route == &r.routes()[1]);
  CHECK(ok.request->route == "/v1/sessions/{id}/messages");
  CHECK(ok.request->path == "/v1/sessions/s%201/messages");
  CHECK(ok.request->param("id") == "s 1");
  CHECK(ok.request->query_value("q") == "a b");
  CHECK(ok.request->header("x-a") == "1");
  CHECK(ok.request->body == "{}");

  Routed missing = route_request(r.match("GET", "/nope"), "GET", "/nope", {}, "");
  CHECK_FALSE(missing.request);
  CHECK(missing.error == "not_found");
  Routed method = route_request(r.match("DELETE", "/healthz"), "DELETE", "/healthz", {}, "");
  CHECK(method.error == "method_not_allowed");
  CHECK(method.allow == "GET");
  CHECK(route_request(r.match("GET", "/healthz"), "GET", "/healthz?a=%zz", {}, "").error == "bad_request");
  CHECK(route_request(r.match("GET", "/v1/sessions/%zz/messages"), "GET", "/v1/sessions/%zz/messages", {}, "").error ==
        "bad_request");
}
