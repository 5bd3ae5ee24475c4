// Server-sent event streams of the in-process HTTP server (test_server.hpp): framing, order,
// threads, the buffer cap, a client that goes away, pings.
#include <catch2/catch.hpp>

#include "tests/server/test_server.hpp"

using namespace plotq::server;
using namespace plotq::test;
using namespace plotq::server::test_server;

TEST_CASE("sse: a stream has the SSE headers / frames in order / and ends on close()", "[sse]") {
  Silence quiet;
  TestServer t;
  Box<CloseReason> reason;
  Box<std::vector<bool>> results;  // what the handler saw (asserted on the test thread)
  t.router.get("/events", [&](Request, std::shared_ptr<Responder> res) {
    res->on_close([&](CloseReason r) { reason.set(r); });
    StreamOptions o;
    o.retry_ms = 3000;
    o.headers = {{"X-Stream", "yes"}};
    std::vector<bool> r;
    r.push_back(res->start_stream(o));
    r.push_back(res->write_json_event("ready", {{"v", "plotq/1"}}, "1"));
    r.push_back(res->write_event("message", "two\nlines", "2"));
    r.push_back(res->write_event("bad\nname", "x"));  // refused
    r.push_back(res->write_raw(": note\n\n"));
    r.push_back(res->write_event("done", "{}", "3"));
    res->close();
    r.push_back(res->write_event("late", "x"));  // refused: nothing after close()
    r.push_back(res->answered());
    results.set(r);
  });
  t.start();
  SseStream s(t.port, "GET", "/events");
  CHECK(s.head().status == 200);
  CHECK(s.head().header("Content-Type") == "text/event-stream");
  CHECK(s.head().header("Cache-Control") == "no-store");
  CHECK(s.head().header("X-Accel-Buffering") == "no");
  CHECK(s.head().header("Connection") == "close");
  CHECK(s.head().header("X-Stream") == "yes");
  CHECK_FALSE(s.head().header("Content-Length"));
  auto f = s.next();
  REQUIRE(f);
  CHECK(f->retry == 3000);
  f = s.next();
  REQUIRE(f);
  CHECK(f->event == "ready");
  CHECK(f->id == "1");
  CHECK(nlohmann::json::parse(f->data) == nlohmann::json{{"v", "plotq/1"}});
  f = s.next();
  REQUIRE(f);
  CHECK(f->data == "two\nlines");
  f = s.next();
  REQUIRE(f);
  CHECK(f->comments == std::vector<std::string>{"note"});
  f = s.next();
  REQUIRE(f);
  CHECK(f->event == "done");
  CHECK_FALSE(s.next(5s));
  CHECK(s.ended());
  CHECK(reason.wait() == CloseReason::done);
  CHECK(results.wait() == std::vector<bool>{true, true, true, false, true, true, false, true});
}

TEST_CASE("sse: events written from another thread arrive complete and in order", "[sse]") {
  Silence quiet;
  TestServer t;
  t.router.get("/events", [](Request, std::shared_ptr<Responder> res) {
    res->start_stream();
    std::thread([res] {
      for (int i = 0; i < 200; ++i) res->write_event("n", std::to_string(i), std::to_string(i));
      res->close();
    }).detach();
  });
  t.start();
  SseStream s(t.port, "GET", "/events");
  for (int i = 0; i < 200; ++i) {
    auto f = s.next_event();
    REQUIRE(f);
    CHECK(f->data == std::to_string(i));
  }
  CHECK_FALSE(s.next(5s));
  CHECK(s.ended());
}

TEST_CASE("sse: a reader that stops reading is cut off at the buffer cap", "[sse]") {
  Silence quiet;
  TestServer t;
  Box<CloseReason> reason;
  std::shared_ptr<Responder> held;
  Box<bool> started;
  t.router.get("/flood", [&](Request, std::shared_ptr<Responder> res) {
    res->on_close([&](CloseReason r) { reason.set(r); });
    res->start_stream();
    held = res;
    started.set(true);
  });
  HttpConfig cfg;
  cfg.stream_buffer_bytes = 64 * 1024;
  t.start(cfg);
  Connection c(t.port);
  c.send(format_request("GET", "/flood"));
  REQUIRE(started.wait());
  // The client reads nothing: first the kernel's socket buffers fill, then the stream's queue.
  std::string chunk = ": " + std::string(16 * 1024, 'x') + "\n\n";
  std::size_t max_pending = 0, written = 0;
  bool refused = false;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!held->write_raw(chunk)) {
      refused = true;
      break;
    }
    written += chunk.size();
    max_pending = std::max(max_pending, held->pending_bytes());
    std::this_thread::sleep_for(Ms(1));  // a writer's pace (the loop sends between writes), not a wait
  }
  INFO("written " << written << " bytes");
  CHECK(refused);
  CHECK(reason.wait() == CloseReason::overflow);
  CHECK(max_pending <= cfg.stream_buffer_bytes);
  CHECK_FALSE(held->is_open());
  CHECK(written > cfg.stream_buffer_bytes);  // the kernel took some, then the cap was hit
  // The client finds the stream closed after what had been sent.
  CHECK(c.wait_closed(10s));
  held.reset();
}

TEST_CASE("sse: the hook reports a client that goes away", "[sse]") {
  Silence quiet;
  TestServer t;
  Box<CloseReason> stream_reason, request_reason;
  std::shared_ptr<Responder> pending;
  Box<bool> got_request;
  std::shared_ptr<Responder> stream;
  t.router.get("/events", [&](Request, std::shared_ptr<Responder> res) {
    res->on_close([&](CloseReason r) { stream_reason.set(r); });
    res->start_stream();
    res->write_event("ready", "{}");
    stream = res;  // held: the stream stays open until the client leaves
  });
  t.router.post("/slow", [&](Request, std::shared_ptr<Responder> res) {
    res->on_close([&](CloseReason r) { request_reason.set(r); });
    pending = res;  // answered never: the client leaves first
    got_request.set(true);
  });
  t.start();
  {
    SseStream s(t.port, "GET", "/events");
    REQUIRE(s.next_event());
  }  // the client closes its socket
  CHECK(stream_reason.wait() == CloseReason::client_gone);
  {
    Connection c(t.port);
    c.send(format_request("POST", "/slow", "x"));
    REQUIRE(got_request.wait());
  }
  CHECK(request_reason.wait() == CloseReason::client_gone);
  // Afterwards: the responder says closed, a late answer is ignored, and a hook registered now is
  // called at once with the reason.
  Box<bool> open_after;
  Box<CloseReason> late_hook;
  t.on_loop([&] {
    open_after.set(pending->is_open());
    pending->send_json(200, {{"late", true}});
    pending->on_close([&](CloseReason r) { late_hook.set(r); });
    pending.reset();
  });
  CHECK(open_after.wait() == false);
  CHECK(late_hook.wait() == CloseReason::client_gone);
  CHECK(http_request(t.port, "GET", "/nope").status == 404);  // the server carries on
}

TEST_CASE("sse: dropping the last Responder ends the stream after what was queued", "[sse]") {
  Silence quiet;
  TestServer t;
  Box<CloseReason> reason;
  t.router.get("/events", [&](Request, std::shared_ptr<Responder> res) {
    res->on_close([&](CloseReason r) { reason.set(r); });
    res->start_stream();
    for (int i = 0; i < 50; ++i) res->write_event("n", std::string(1000, 'a' + i % 26));
  });  // res dropped here
  t.start();
  SseStream s(t.port, "GET", "/events");
  int n = 0;
  while (auto f = s.next_event(5s)) {
    CHECK(f->data == std::string(1000, 'a' + n % 26));
    ++n;
  }
  CHECK(n == 50);
  CHECK(s.ended());
  CHECK(reason.wait() == CloseReason::done);
}

TEST_CASE("sse: idle streams get pings", "[sse]") {
  Silence quiet;
  TestServer t;
  std::shared_ptr<Responder> held;
  t.router.get("/events", [&](Request, std::shared_ptr<Responder> res) {
    res->start_stream();
    held = res;
  });
  HttpConfig cfg;
  cfg.stream_ping = Ms(50);
  t.start(cfg);
  SseStream s(t.port, "GET", "/events");
  for (int i = 0; i < 3; ++i) {
    auto f = s.next(5s);
    REQUIRE(f);
    CHECK(f->comments == std::vector<std::string>{"ping"});
  }
  t.on_loop([&] { held.reset(); });  // dropping the last reference ends the stream
  while (s.next(5s)) {
  }
  CHECK(s.ended());
}
