// The HTTP server in-process: a Server on its own io_context thread with test routes, spoken to over
// real loopback sockets. (Integration against the plotqd binary is in plotqd_test.cpp.)
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <thread>

#include "tests/server/test_server.hpp"

using namespace plotq::server;
using namespace plotq::test;
using namespace plotq::server::test_server;
namespace asio = boost::asio;

TEST_CASE("http: a handler sees method / path / params / query / headers / body / peer", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.post("/v1/sessions/{id}/messages", echo_json(201));
  t.start();
  auto r = http_request(t.port, "POST", "/v1/sessions/s%201/messages?a=1&b=x+y", "hello", {{"X-Agent", "t1"}});
  CHECK(r.status == 201);
  CHECK(r.header("Content-Type") == "application/json");
  CHECK(r.header("Cache-Control") == "no-store");
  auto j = r.json();
  CHECK(j["method"] == "POST");
  CHECK(j["path"] == "/v1/sessions/s%201/messages");
  CHECK(j["route"] == "/v1/sessions/{id}/messages");
  CHECK(j["params"]["id"] == "s 1");
  CHECK(j["query"] == nlohmann::json::parse(R"([["a","1"],["b","x y"]])"));
  CHECK(j["body"] == "hello");
  CHECK(j["loopback"] == true);
  CHECK(j["peer"] == "127.0.0.1");
  CHECK(j["agent"] == "t1");
}

TEST_CASE("http: errors are {detail} from the vocabulary / with no-store", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/x", echo_json());
  t.start();
  auto r = http_request(t.port, "GET", "/nope");
  CHECK(r.status == 404);
  CHECK(r.json() == nlohmann::json{{"detail", "not_found"}});
  CHECK(r.header("Cache-Control") == "no-store");
  r = http_request(t.port, "DELETE", "/x");
  CHECK(r.status == 405);
  CHECK(r.json()["detail"] == "method_not_allowed");
  CHECK(r.header("Allow") == "GET");
  r = http_request(t.port, "GET", "/x?a=%zz");
  CHECK(r.status == 400);
  CHECK(r.json()["detail"] == "bad_request");
  r = http_request(t.port, "GET", "/x/%g0");
  CHECK(r.status == 400);
  CHECK(r.json()["detail"] == "bad_request");
}

TEST_CASE("http: malformed requests get 400 bad_request and the connection closes", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/x", echo_json());
  t.start();
  for (std::string bad : {"GARBAGE\r\n\r\n", "GET /x HTTP/9.9\r\n\r\n", "GET  /x HTTP/1.1\r\n\r\n",
                          "GET /x HTTP/1.1\r\nBad Header\r\n\r\n", "GET http://example.com/x HTTP/1.1\r\nHost: a\r\n\r\n",
                          "GET /x HTTP/1.1\r\nContent-Length: abc\r\n\r\n"}) {
    INFO(bad);
    Connection c(t.port);
    c.send(bad);
    auto r = c.read_response(5s);
    REQUIRE(r);
    CHECK(r->status == 400);
    CHECK(r->json()["detail"] == "bad_request");
    CHECK(r->header("Connection") == "close");
    CHECK(c.wait_closed(5s));
  }
}

TEST_CASE("http: keep-alive serves several requests on one connection / pipelined too", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/x", echo_json());
  t.start();
  Connection c(t.port);
  for (int i = 0; i < 3; ++i) {
    c.send(format_request("GET", "/x?i=" + std::to_string(i)));
    auto r = c.read_response();
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->json()["query"][0][1] == std::to_string(i));
  }
  // Two requests in one write: both answered, in order.
  c.send(format_request("GET", "/x?i=a") + format_request("GET", "/nope"));
  auto a = c.read_response();
  auto b = c.read_response();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->json()["query"][0][1] == "a");
  CHECK(b->status == 404);
  // Connection: close is honoured.
  c.send(format_request("GET", "/x", "", {}, false));
  auto last = c.read_response();
  REQUIRE(last);
  CHECK(last->status == 200);
  CHECK(c.wait_closed(5s));
}

TEST_CASE("http: bodies over the limit get 413 too_large before they are read", "[http]") {
  Silence quiet;
  TestServer t;
  Box<int> seen;
  t.router.post("/up", [&](Request req, std::shared_ptr<Responder> res) {
    seen.set(static_cast<int>(req.body.size()));
    res->send_json(200, {{"n", req.body.size()}});
  });
  t.router.post("/small", echo_json(), RouteOptions{2048});
  HttpConfig cfg;
  cfg.body_limit = 64 * 1024;
  t.start(cfg);

  SECTION("Content-Length over the limit: answered at once, no body sent") {
    Connection c(t.port);
    c.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n");
    auto r = c.read_response(5s);
    REQUIRE(r);
    CHECK(r->status == 413);
    CHECK(r->json()["detail"] == "too_large");
    CHECK(c.wait_closed(5s));
    CHECK_FALSE(seen.wait(Ms(50)));  // the handler never ran
  }
  SECTION("a client that sends the oversized body anyway still gets the answer") {
    Connection c(t.port);
    std::string big(300 * 1024, 'x');
    c.send(format_request("POST", "/up", big));
    auto r = c.read_response(5s);
    REQUIRE(r);
    CHECK(r->status == 413);
  }
  SECTION("exactly the limit is fine") {
    std::string body(64 * 1024, 'y');
    auto r = http_request(t.port, "POST", "/up", body);
    CHECK(r.status == 200);
    CHECK(r.json()["n"] == 64 * 1024);
  }
  SECTION("a chunked body over the limit") {
    Connection c(t.port);
    std::string chunk(32 * 1024, 'z');
    char size[16];
    std::snprintf(size, sizeof size, "%zx", chunk.size());
    std::string req = "POST /up HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 3; ++i) req += std::string(size) + "\r\n" + chunk + "\r\n";
    req += "0\r\n\r\n";
    c.send(req);
    auto r = c.read_response(5s);
    REQUIRE(r);
    CHECK(r->status == 413);
    CHECK(r->json()["detail"] == "too_large");
  }
  SECTION("a route's own smaller limit") {
    CHECK(http_request(t.port, "POST", "/small", std::string(2048, 'a')).status == 200);
    CHECK(http_request(t.port, "POST", "/small", std::string(2049, 'a')).status == 413);
  }
}

TEST_CASE("http: Expect: 100-continue gets a 100 before the body is sent", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.post("/up", echo_json());
  t.start();
  Connection c(t.port);
  c.send("POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  auto cont = c.read_head(5s);
  REQUIRE(cont);
  CHECK(cont->status == 100);
  c.send("abcde");
  auto r = c.read_response(5s);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->json()["body"] == "abcde");
}

TEST_CASE("http: headers over the header limit get 431", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/x", echo_json());
  HttpConfig cfg;
  cfg.header_limit = 2048;
  t.start(cfg);
  Connection c(t.port);
  c.send(format_request("GET", "/x", "", {{"X-Big", std::string(4096, 'h')}}));
  auto r = c.read_response(5s);
  REQUIRE(r);
  CHECK(r->status == 431);
  CHECK(r->json()["detail"] == "headers_too_large");
}

TEST_CASE("http: a client that sends half a request is dropped after the read timeout", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/x", echo_json());
  HttpConfig cfg;
  cfg.read_timeout = Ms(300);
  t.start(cfg);
  Connection c(t.port);
  c.send("GET /x HTTP/1.1\r\nHost: x\r\n");  // no blank line: the request never ends
  auto start = std::chrono::steady_clock::now();
  CHECK(c.wait_closed(5s));
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= Ms(250));
  // Another client is served meanwhile and after.
  CHECK(http_request(t.port, "GET", "/x").status == 200);
}

TEST_CASE("http: an idle kept-alive connection is closed after the idle timeout", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/x", echo_json());
  HttpConfig cfg;
  cfg.idle_timeout = Ms(200);
  t.start(cfg);
  Connection c(t.port);
  c.send(format_request("GET", "/x"));
  REQUIRE(c.read_response());
  auto start = std::chrono::steady_clock::now();
  CHECK(c.wait_closed(5s));
  CHECK(std::chrono::steady_clock::now() - start >= Ms(150));
}

TEST_CASE("http: a handler's exception is 500 internal / never its message", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/boom", [](Request, std::shared_ptr<Responder>) { throw std::runtime_error("secret detail /etc/x"); });
  t.router.get("/int", [](Request, std::shared_ptr<Responder>) { throw 42; });
  t.router.get("/after-start", [](Request, std::shared_ptr<Responder> res) {
    res->start_stream();
    res->write_event("a", "1");
    throw std::logic_error("late");
  });
  t.start();
  for (const char* path : {"/boom", "/int"}) {
    auto r = http_request(t.port, "GET", path);
    CHECK(r.status == 500);
    CHECK(r.body == R"({"detail":"internal"})");
  }
  // Once a stream has started, the exception ends the stream instead.
  SseStream s(t.port, "GET", "/after-start");
  CHECK(s.head().status == 200);
  auto f = s.next_event(5s);
  REQUIRE(f);
  CHECK(f->event == "a");
  CHECK_FALSE(s.next(5s));
  CHECK(s.ended());
}

TEST_CASE("http: a handler that drops its Responder unanswered gives 500 internal", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/forgot", [](Request, std::shared_ptr<Responder>) {});
  t.router.get("/later", [](Request, std::shared_ptr<Responder> res) {
    std::thread([res] { std::this_thread::sleep_for(Ms(20)); }).detach();  // last ref dropped off the loop
  });
  t.start();
  auto r = http_request(t.port, "GET", "/forgot");
  CHECK(r.status == 500);
  CHECK(r.json()["detail"] == "internal");
  r = http_request(t.port, "GET", "/later");
  CHECK(r.status == 500);
}

TEST_CASE("http: an answer from another thread is sent - a second answer is ignored", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/thread", [](Request, std::shared_ptr<Responder> res) {
    std::thread([res] {
      // Scenario, not a wait: the answer comes after the handler has returned on the loop.
      std::this_thread::sleep_for(Ms(10));
      res->send_json(202, {{"from", "worker"}});
      res->send_json(200, {{"from", "second"}});
    }).detach();
  });
  t.router.get("/ok", [](Request, std::shared_ptr<Responder> res) { res->send_json(200, {{"from", "next"}}); });
  t.start();
  Connection c(t.port);
  c.send(format_request("GET", "/thread"));
  auto r = c.read_response();
  REQUIRE(r);
  CHECK(r->status == 202);
  CHECK(r->json()["from"] == "worker");
  // The connection is still usable: the second answer did not leak into it.
  c.send(format_request("GET", "/ok"));
  r = c.read_response();
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->json()["from"] == "next");
}

TEST_CASE("http: send_error answers the vocabulary's status - an unknown code is 500 internal", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/err", [](Request req, std::shared_ptr<Responder> res) {
    std::string code(req.query_value("code").value_or(""));
    if (req.query_value("status")) res->send_error(std::stoi(std::string(*req.query_value("status"))), code);
    else res->send_error(code);
  });
  t.start();
  auto e = http_request(t.port, "GET", "/err?code=run_active");
  CHECK(e.status == 409);
  CHECK(e.json()["detail"] == "run_active");
  e = http_request(t.port, "GET", "/err?code=not_a_code");
  CHECK(e.status == 500);
  CHECK(e.json()["detail"] == "internal");
  e = http_request(t.port, "GET", "/err?code=capacity&status=418");  // status mismatch: the table wins
  CHECK(e.status == 503);
  CHECK(e.json()["detail"] == "capacity");
}

TEST_CASE("http: send_body sends its type and headers - never a header name that is not a token", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/page", [](Request, std::shared_ptr<Responder> res) {
    res->send_body(200, "text/html; charset=utf-8", "<p>hi</p>", {{"Cache-Control", "max-age=60"}, {"X-Bad\r\n", "v"}});
  });
  t.start();
  auto p = http_request(t.port, "GET", "/page");
  CHECK(p.status == 200);
  CHECK(p.header("Content-Type") == "text/html; charset=utf-8");
  CHECK(p.header("Cache-Control") == "max-age=60");
  CHECK_FALSE(p.header("X-Bad"));
  CHECK(p.body == "<p>hi</p>");
}

TEST_CASE("http: connections over the limit are answered 503 unavailable", "[http]") {
  Silence quiet;
  TestServer t;
  t.router.get("/x", echo_json());
  HttpConfig cfg;
  cfg.max_connections = 2;
  t.start(cfg);
  Connection a(t.port), b(t.port);
  a.send(format_request("GET", "/x"));
  REQUIRE(a.read_response());
  b.send(format_request("GET", "/x"));
  REQUIRE(b.read_response());
  Connection c(t.port);
  c.send(format_request("GET", "/x"));
  auto r = c.read_response(5s);
  REQUIRE(r);
  CHECK(r->status == 503);
  CHECK(r->json()["detail"] == "unavailable");
}

TEST_CASE("http: shutdown lets a request in flight finish / ends streams / closes idle connections", "[http]") {
  Silence quiet;
  TestServer t;
  std::shared_ptr<Responder> pending;
  Box<bool> got;
  Box<CloseReason> stream_reason;
  t.router.get("/slow", [&](Request, std::shared_ptr<Responder> res) {
    pending = res;
    got.set(true);
  });
  std::shared_ptr<Responder> stream;
  t.router.get("/events", [&](Request, std::shared_ptr<Responder> res) {
    res->on_close([&](CloseReason r) { stream_reason.set(r); });
    res->start_stream();
    res->write_event("ready", "{}");
    stream = res;
  });
  t.router.get("/x", echo_json());
  t.start();
  Connection idle(t.port);
  idle.send(format_request("GET", "/x"));
  REQUIRE(idle.read_response());
  SseStream s(t.port, "GET", "/events");
  REQUIRE(s.next_event());
  Connection busy(t.port);
  busy.send(format_request("GET", "/slow"));
  REQUIRE(got.wait());

  auto done = t.shutdown(5s);
  CHECK(idle.wait_closed(5s));
  CHECK(stream_reason.wait() == CloseReason::shutdown);
  CHECK_FALSE(s.next(5s));
  CHECK(s.ended());
  CHECK_THROWS(http_request(t.port, "GET", "/x", {}, {}, 2s));  // no longer accepting
  CHECK(done.wait_for(Ms(100)) == std::future_status::timeout);  // the request in flight holds it
  t.on_loop([&] {
    pending->send_json(200, {{"finished", true}});
    pending.reset();
  });
  auto r = busy.read_response(5s);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->header("Connection") == "close");
  CHECK(done.wait_for(5s) == std::future_status::ready);
  t.on_loop([&] { stream.reset(); });
}

TEST_CASE("http: shutdown grace expiry closes what is left", "[http]") {
  Silence quiet;
  TestServer t;
  std::shared_ptr<Responder> pending;
  Box<bool> got;
  Box<CloseReason> reason;
  t.router.get("/never", [&](Request, std::shared_ptr<Responder> res) {
    res->on_close([&](CloseReason r) { reason.set(r); });
    pending = res;
    got.set(true);
  });
  t.start();
  Connection busy(t.port);
  busy.send(format_request("GET", "/never"));
  REQUIRE(got.wait());
  auto start = std::chrono::steady_clock::now();
  auto done = t.shutdown(Ms(200));
  CHECK(done.wait_for(5s) == std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - start >= Ms(150));
  CHECK(reason.wait() == CloseReason::shutdown);
  CHECK(busy.wait_closed(5s));
  t.on_loop([&] { pending.reset(); });
}
