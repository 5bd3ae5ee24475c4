#include <catch2/catch.hpp>

#include "server/router.hpp"

using namespace plotq::server;

namespace {
Handler tag(int* hit, int value) {
  return [hit, value](Request, std::shared_ptr<Responder>) { *hit = value; };
}
}  // namespace

TEST_CASE("router: literal routes and parameters", "[router]") {
  Router r;
  int hit = 0;
  r.get("/healthz", tag(&hit, 1));
  r.post("/v1/sessions/{id}/messages", tag(&hit, 2));
  r.post("/render/{job_id}/cancel", tag(&hit, 3));
  r.get("/", tag(&hit, 4));

  auto m = r.match("GET", "/healthz");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.route->pattern == "/healthz");
  CHECK(m.params.empty());

  m = r.match("POST", "/v1/sessions/abc-1/messages");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.route->pattern == "/v1/sessions/{id}/messages");
  REQUIRE(m.params.size() == 1);
  CHECK(m.params[0].first == "id");
  CHECK(m.params[0].second == "abc-1");

  m = r.match("POST", "/render/job_7/cancel");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.params[0] == std::pair<std::string, std::string>{"job_id", "job_7"});

  m = r.match("GET", "/");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.route->pattern == "/");
  m.route->handler(Request{}, nullptr);
  CHECK(hit == 4);
}

TEST_CASE("router: not found / wrong method / exactness", "[router]") {
  Router r;
  int hit = 0;
  r.get("/healthz", tag(&hit, 1));
  r.post("/v1/sessions/{id}/messages", tag(&hit, 2));
  r.get("/v1/sessions/{id}/messages", tag(&hit, 3));

  CHECK(r.match("GET", "/nope").kind == RouteMatch::not_found);
  CHECK(r.match("GET", "/healthz/").kind == RouteMatch::not_found);     // no trailing-slash folding
  CHECK(r.match("GET", "/healthz/x").kind == RouteMatch::not_found);
  CHECK(r.match("GET", "//healthz").kind == RouteMatch::not_found);     // empty segment
  CHECK(r.match("POST", "/v1/sessions//messages").kind == RouteMatch::not_found);  // empty parameter
  CHECK(r.match("GET", "/HEALTHZ").kind == RouteMatch::not_found);      // case-sensitive

  auto m = r.match("DELETE", "/v1/sessions/9/messages");
  REQUIRE(m.kind == RouteMatch::method_not_allowed);
  CHECK(m.allow == "GET, POST");
  m = r.match("post", "/healthz");  // methods are case-sensitive too
  CHECK(m.kind == RouteMatch::method_not_allowed);
  CHECK(m.allow == "GET");
}

TEST_CASE("router: a literal segment beats a parameter", "[router]") {
  Router r;
  int hit = 0;
  r.get("/v1/sessions/{id}", tag(&hit, 1));
  r.get("/v1/sessions/active", tag(&hit, 2));
  r.get("/v1/{kind}/active", tag(&hit, 3));

  auto m = r.match("GET", "/v1/sessions/active");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.route->pattern == "/v1/sessions/active");
  m = r.match("GET", "/v1/sessions/42");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.route->pattern == "/v1/sessions/{id}");
  m = r.match("GET", "/v1/turns/active");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.route->pattern == "/v1/{kind}/active");
}

TEST_CASE("router: parameters are percent-decoded per segment", "[router]") {
  Router r;
  int hit = 0;
  r.get("/files/{name}", tag(&hit, 1));
  auto m = r.match("GET", "/files/a%20b%2Fc");
  REQUIRE(m.kind == RouteMatch::found);
  CHECK(m.params[0].second == "a b/c");  // an encoded slash stays inside the segment
  CHECK(r.match("GET", "/files/%zz").kind == RouteMatch::bad_path);
  CHECK(r.match("GET", "/files/%4").kind == RouteMatch::bad_path);
  CHECK(r.match("GET", "/files/%00").kind == RouteMatch::bad_path);
  CHECK(r.match("GET", "files/x").kind == RouteMatch::bad_path);
  CHECK(r.match("GET", "/fil%65s/x").kind == RouteMatch::found);  // literal compared after decoding
}

TEST_CASE("router: malformed or duplicate patterns are refused", "[router]") {
  Router r;
  auto h = [](Request, std::shared_ptr<Responder>) {};
  r.get("/a/{id}", h);
  CHECK_THROWS_AS(r.get("/a/{other}", h), std::invalid_argument);  // same shape, same method
  CHECK_NOTHROW(r.post("/a/{other}", h));
  CHECK_THROWS_AS(r.get("a/b", h), std::invalid_argument);
  CHECK_THROWS_AS(r.get("/a/{}", h), std::invalid_argument);
  CHECK_THROWS_AS(r.get("/a/{Id}", h), std::invalid_argument);
  CHECK_THROWS_AS(r.get("/a/x{id}", h), std::invalid_argument);
  CHECK_THROWS_AS(r.get("/a//b", h), std::invalid_argument);
  CHECK_THROWS_AS(r.get("/b/{id}/{id}", h), std::invalid_argument);
  CHECK_THROWS_AS(r.add("get", "/c", h), std::invalid_argument);
  CHECK_THROWS_AS(r.get("/d", Handler{}), std::invalid_argument);
}

TEST_CASE("router: per-route body limits raise the parser ceiling", "[router]") {
  Router r;
  auto h = [](Request, std::shared_ptr<Responder>) {};
  r.get("/a", h);
  CHECK(r.max_body_limit(4096) == 4096);
  r.post("/upload", h, RouteOptions{8192});
  CHECK(r.max_body_limit(4096) == 8192);
  CHECK(r.match("POST", "/upload").route->options.body_limit == 8192u);
}

TEST_CASE("router: query strings", "[router]") {
  auto q = parse_query("a=1&b=x%20y&c=p+q&&d&a=2");
  REQUIRE(q);
  REQUIRE(q->size() == 5);
  CHECK((*q)[0] == std::pair<std::string, std::string>{"a", "1"});
  CHECK((*q)[1].second == "x y");
  CHECK((*q)[2].second == "p q");
  CHECK((*q)[3] == std::pair<std::string, std::string>{"d", ""});
  CHECK((*q)[4].second == "2");
  CHECK_FALSE(parse_query("a=%g1"));
  CHECK(parse_query("")->empty());

  Request req;
  req.query = *q;
  CHECK(req.query_value("a") == std::string_view("1"));  // first wins
  CHECK_FALSE(req.query_value("zz"));
  req.params = {{"id", "7"}};
  CHECK(req.param("id") == "7");
  CHECK(req.param("nope").empty());
  req.headers = {{"Content-Type", "application/json"}};
  CHECK(req.header("content-type") == std::string_view("application/json"));
  CHECK_FALSE(req.header("accept"));
}
