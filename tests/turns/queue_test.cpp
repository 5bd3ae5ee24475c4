// Turns behind the render slot: queued positions counting down, capacity, max-wait expiry, cancel
// while queued and while running, the turn deadline (paused while queued), a slow reader, pings,
// GET /v1/status. Short settings; the slot is held by a snippet that never ends until stopped.
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <thread>

#include "store/turns.hpp"
#include "tests/turns/turn_client.hpp"

using namespace turns_test;

namespace {

// Opens a turn that holds the slot (running) and returns its stream and turn id.
std::pair<std::unique_ptr<SseStream>, std::string> hold_slot(Server& s, const std::string& user,
                                                             const std::string& session) {
  auto st = s.turn(user, session, data(kForever));
  auto ready = next_event(*st);
  REQUIRE(ready);
  auto running = next_event(*st, 30s);
  REQUIRE(running);
  REQUIRE(running->data == json{{"step", "running"}, {"attempt", 1}});
  return {std::move(st), ready->data["turn"].get<std::string>()};
}

json queued(int position, int waiting) { return {{"step", "queued"}, {"position", position}, {"waiting", waiting}}; }

}  // namespace

TEST_CASE("queued turns see their position count down, FIFO, and run when the slot frees") {
  Server s;
  auto sa = s.session("ann"), sb = s.session("bob"), sc = s.session("cyd");
  auto [a, a_turn] = hold_slot(s, "ann", sa);

  auto b = s.turn("bob", sb, data(kQuick));
  REQUIRE(next_event(*b)->name == "ready");
  auto b1 = next_event(*b);
  REQUIRE(b1);
  CHECK(b1->data == queued(1, 1));  // at once

  auto c = s.turn("cyd", sc, data(kQuick));
  REQUIRE(next_event(*c)->name == "ready");
  auto c1 = next_event(*c);
  REQUIRE(c1);
  CHECK(c1->data == queued(2, 2));
  auto b2 = next_event(*b);  // the queue grew: bob hears it
  REQUIRE(b2);
  CHECK(b2->data == queued(1, 2));
  json st = s.status();
  CHECK(st["waiting"] == 2);
  CHECK(st["in_flight"] == 1);
  CHECK(st["holder_age_s"].is_number());

  // ann's run ends (cancelled): bob starts, cyd moves up to 1 of 1.
  REQUIRE(s.cancel("ann", sa, a_turn).json()["state"] == "cancelling");
  CHECK(names(until_done(*a, 30s)) == std::vector<std::string>{"error", "done"});
  std::vector<Event> b_rest = until_done(*b, 90s);
  CHECK(names(b_rest) == std::vector<std::string>{"status", "dataset", "message", "done"});
  CHECK(b_rest[0].data == json{{"step", "running"}, {"attempt", 1}});
  auto c2 = next_event(*c);
  REQUIRE(c2);
  CHECK(c2->data == queued(1, 1));
  std::vector<Event> c_rest = until_done(*c, 90s);
  REQUIRE(!c_rest.empty());
  CHECK(c_rest.back().data["state"] == "ok");
  CHECK(c_rest[0].data == json{{"step", "running"}, {"attempt", 1}});
  CHECK(s.status()["waiting"] == 0);
}

TEST_CASE("capacity 1: the second waiting turn ends at once with error{capacity}, and the run still counts") {
  // floor(1 start x 60 s / 60 s) = 1 waiting place.
  Server s(Env{{"PLOTQ_RUNS_PER_MINUTE", "1"}, {"PLOTQ_RATE_WINDOW_S", "60"}, {"PLOTQ_QUEUE_MAX_WAIT_S", "60"}});
  CHECK(s.status()["capacity"] == 1);
  auto sa = s.session("ann"), sb = s.session("bob"), sc = s.session("cyd");
  auto [a, a_turn] = hold_slot(s, "ann", sa);
  auto b = s.turn("bob", sb, data(kQuick));
  REQUIRE(wait_for(*b, "status", 10s)->data == queued(1, 1));
  auto c = s.turn("cyd", sc, data(kQuick));
  auto evs = until_done(*c, 10s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "error", "done"});
  CHECK(evs[1].data["code"] == "capacity");
  CHECK(evs[1].data["ref"] == evs[0].data["turn"]);
  CHECK(evs[2].data["state"] == "error");
  // A refused pipeline call still counts against the day, and is a refused ledger row.
  CHECK(s.scalar("SELECT count FROM quota_days WHERE user_id = 'cyd' AND counter = 'data_runs'") == 1);
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE user_id = 'cyd' AND outcome = 'refused' AND refusal_code = 'capacity'") == 1);
  CHECK(s.status()["waiting"] == 1);
}

TEST_CASE("a turn that waits longer than the max wait ends with error{capacity}") {
  // 10 starts per 1 s window, 1 s max wait: capacity 10, but the holder never ends.
  Server s(Env{{"PLOTQ_RATE_WINDOW_S", "1"}, {"PLOTQ_RUNS_PER_MINUTE", "10"}, {"PLOTQ_QUEUE_MAX_WAIT_S", "1"}});
  auto sa = s.session("ann"), sb = s.session("bob");
  auto [a, a_turn] = hold_slot(s, "ann", sa);
  auto b = s.turn("bob", sb, data(kQuick));
  auto evs = until_done(*b, 15s);
  REQUIRE(names(evs).size() >= 4);
  CHECK(evs[1].data == queued(1, 1));
  CHECK(evs[evs.size() - 2].name == "error");
  CHECK(evs[evs.size() - 2].data["code"] == "capacity");
  CHECK(evs.back().data["state"] == "error");
  CHECK(s.status()["waiting"] == 0);
  CHECK(s.status()["in_flight"] == 1);  // ann still runs
}

TEST_CASE("cancel while queued withdraws the turn - cancel while running kills its job") {
  Server s;
  auto sa = s.session("ann"), sb = s.session("bob");
  auto [a, a_turn] = hold_slot(s, "ann", sa);
  auto b = s.turn("bob", sb, data(kQuick));
  auto b_ready = next_event(*b);
  REQUIRE(b_ready);
  std::string b_turn = b_ready->data["turn"];
  REQUIRE(next_event(*b)->data == queued(1, 1));

  auto cb = s.cancel("bob", sb, b_turn);
  REQUIRE(cb.status == 200);
  CHECK(cb.json()["state"] == "cancelled");
  auto b_rest = until_done(*b, 10s);
  REQUIRE(names(b_rest) == std::vector<std::string>{"error", "done"});
  CHECK(b_rest[0].data["code"] == "cancelled");
  CHECK(b_rest[1].data["state"] == "cancelled");
  CHECK(s.status()["waiting"] == 0);
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE turn_id = '" + b_turn + "' AND refusal_code = 'cancelled'") == 1);
  // Cancelling an ended turn says so.
  CHECK(s.cancel("bob", sb, b_turn).json()["state"] == "done");
  // Someone else's turn is not found.
  CHECK(s.cancel("bob", sa, a_turn).status == 404);

  auto ca = s.cancel("ann", sa, a_turn);
  CHECK(ca.json()["state"] == "cancelling");
  auto a_rest = until_done(*a, 30s);
  REQUIRE(names(a_rest) == std::vector<std::string>{"error", "done"});
  CHECK(a_rest[0].data["code"] == "cancelled");
  CHECK(s.status()["in_flight"] == 0);
  // The job really stopped: its ledger row says cancelled, long before its 30 s timeout.
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE turn_id = '" + a_turn + "' AND reason = 'cancelled' AND wall_s < 25") == 1);
}

TEST_CASE("the turn deadline kills a running job - time spent queued does not count against it") {
  Server s(Env{{"PLOTQ_TURN_DEADLINE_S", "3"}});
  auto sa = s.session("ann"), sb = s.session("bob");
  auto a = s.turn("ann", sa, data(kForever));
  REQUIRE(wait_for(*a, "status", 30s));  // running
  auto b_started = std::chrono::steady_clock::now();
  auto b = s.turn("bob", sb, data(kQuick));
  REQUIRE(next_event(*b)->name == "ready");
  REQUIRE(next_event(*b)->data == queued(1, 1));

  auto a_rest = until_done(*a, 30s);
  REQUIRE(names(a_rest) == std::vector<std::string>{"error", "done"});
  CHECK(a_rest[0].data["code"] == "deadline");

  auto b_rest = until_done(*b, 60s);
  CHECK(names(b_rest) == std::vector<std::string>{"status", "dataset", "message", "done"});
  CHECK(b_rest.back().data["state"] == "ok");
  // bob's turn lived longer than the deadline (it waited ~3 s behind ann, then ran) and still
  // finished: its deadline was paused while queued and armed in full when the slot came.
  CHECK(std::chrono::steady_clock::now() - b_started > std::chrono::seconds(3));
}

// plotqd bounds the kernel's send buffer of a stream (SO_SNDBUF): without it, on loopback the
// buffer autotunes up to tcp_wmem's max (4 MiB) and a reader that never reads would take megabytes
// before the PLOTQ_SSE_BUFFER_BYTES cap is reached.
TEST_CASE("a slow reader's stream is closed at its buffer cap - the turn goes on and the resume has it all") {
  Server s(Env{{"PLOTQ_SSE_BUFFER_BYTES", "2048"}, {"PLOTQ_HEARTBEAT_S", "0.002"}});
  auto sa = s.session("ann"), sb = s.session("bob");
  auto [a, a_turn] = hold_slot(s, "ann", sa);

  // bob's client: a tiny receive window and it never reads.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  int small = 1024;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(s.port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  std::string body = data(kQuick).dump();
  std::string req = format_request("POST", "/v1/sessions/" + sb + "/messages", body, {{"X-Plotq-User", "bob"}}, true);
  REQUIRE(::send(fd, req.data(), req.size(), 0) == static_cast<ssize_t>(req.size()));

  // The queued heartbeats pile up until the server closes the stream.
  auto overflow = s.d.wait_log("stream_end", 30s, [](const json& e) {
    return e.value("reason", "") == "overflow" && e.value("route", "") == "/v1/sessions/{id}/messages";
  });
  REQUIRE(overflow);
  // bob's turn is still queued: free the slot, it runs and ends without a reader.
  REQUIRE(s.cancel("ann", sa, a_turn).status == 200);
  until_done(*a, 30s);
  for (int i = 0; i < 600 && s.scalar("SELECT count(*) FROM turns WHERE user_id = 'bob' AND status = 'done'") == 0; ++i)
    std::this_thread::sleep_for(100ms);
  REQUIRE(s.scalar("SELECT count(*) FROM turns WHERE user_id = 'bob' AND outcome = 'ok'") == 1);
  ::close(fd);

  // The resume replays every stored event (paced under the small buffer) through done.
  auto conn = s.db();
  plotq::store::Stmt q(*conn, "SELECT id FROM turns WHERE user_id = 'bob'");
  REQUIRE(q.executeStep());
  std::string b_turn = q.getColumn(0).getString();
  std::int64_t stored = s.scalar("SELECT count(*) FROM turn_events WHERE turn_id = '" + b_turn + "'");
  CHECK(stored > 20);  // many heartbeats
  SseStream again(s.port(), "GET", "/v1/sessions/" + sb + "/turns/" + b_turn + "/events?after=0", {}, {{"X-Plotq-User", "bob"}});
  auto all = until_done(again, 60s);
  CHECK(static_cast<std::int64_t>(all.size()) == stored);
  CHECK(consecutive(all));
  REQUIRE(!all.empty());
  CHECK(all.front().name == "ready");
  CHECK(all.back().name == "done");
  CHECK(all[all.size() - 3].name == "dataset");
}

TEST_CASE("queued streams get ': ping' comments and re-sent positions while nothing changes") {
  Server s(Env{{"PLOTQ_SSE_PING_S", "0.05"}, {"PLOTQ_HEARTBEAT_S", "0.2"}});
  auto sa = s.session("ann"), sb = s.session("bob");
  auto [a, a_turn] = hold_slot(s, "ann", sa);
  auto b = s.turn("bob", sb, data(kQuick));
  int pings = 0, positions = 0;
  auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    auto f = b->next(1s);
    if (!f) break;
    for (const auto& c : f->comments) pings += c == "ping";
    if (f->event == "status") {
      CHECK(json::parse(f->data) == queued(1, 1));
      ++positions;
    }
  }
  CHECK(pings >= 3);
  CHECK(positions >= 3);  // at once, then every heartbeat unchanged
}

TEST_CASE("queued statuses close together are merged: the first at once, the newest at the interval's end") {
  Server s(Env{{"PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S", "1"}});
  auto sa = s.session("ann");
  auto [a, a_turn] = hold_slot(s, "ann", sa);
  auto sb = s.session("bob");
  auto b = s.turn("bob", sb, data(kQuick));
  REQUIRE(next_event(*b)->name == "ready");
  auto first = next_event(*b, 5s);
  REQUIRE(first);
  CHECK(first->data == queued(1, 1));  // at once
  auto t_first = std::chrono::steady_clock::now();
  // Three more turns join within the interval: bob hears one status, with the newest count.
  std::vector<std::unique_ptr<SseStream>> others;
  for (const std::string u : {"c1", "c2", "c3"}) {
    others.push_back(s.turn(u, s.session(u), data(kQuick)));
    REQUIRE(wait_for(*others.back(), "status", 5s));
  }
  auto merged = next_event(*b, 5s);
  REQUIRE(merged);
  CHECK(merged->data == queued(1, 4));
  CHECK(std::chrono::steady_clock::now() - t_first >= 900ms);
  CHECK_FALSE(next_event(*b, 1500ms));  // nothing else changed
}

TEST_CASE("a queue broadcast to many waiting turns: every stream got exactly its stored events and resumes match") {
  constexpr int kWaiting = 24;
  Server s;
  auto sa = s.session("ann");
  auto [a, a_turn] = hold_slot(s, "ann", sa);

  struct Waiter {
    std::string session, turn;
    std::unique_ptr<SseStream> stream;
    std::vector<Event> got;
  };
  std::vector<Waiter> w(kWaiting);
  for (int i = 0; i < kWaiting; ++i) {
    std::string user = "w" + std::to_string(i);
    w[i].session = s.session(user);
    w[i].stream = s.turn(user, w[i].session, data(kQuick));
    auto ready = next_event(*w[i].stream);
    REQUIRE(ready);
    REQUIRE(ready->name == "ready");
    w[i].turn = ready->data["turn"].get<std::string>();
    w[i].got.push_back(*ready);
  }
  // Reads a waiter's events up to the status that says `waiting` turns wait (every change is a
  // status in these tests: PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S=0).
  auto read_until_waiting = [](Waiter& x, int waiting) {
    for (;;) {
      auto e = next_event(*x.stream, 10s);
      REQUIRE(e);
      x.got.push_back(*e);
      REQUIRE(e->name == "status");
      if (e->data["waiting"] == waiting) return;
    }
  };
  for (auto& x : w) read_until_waiting(x, kWaiting);

  // One more turn joins: every waiting turn hears its position among kWaiting + 1.
  auto st = s.session("late");
  auto late = s.turn("late", st, data(kQuick));
  auto late_ready = next_event(*late);
  REQUIRE(late_ready);
  REQUIRE(late_ready->name == "ready");
  const std::string late_turn = late_ready->data["turn"].get<std::string>();
  REQUIRE(wait_for(*late, "status", 10s));
  for (int i = 0; i < kWaiting; ++i) {
    read_until_waiting(w[i], kWaiting + 1);
    CHECK(w[i].got.back().data == queued(i + 1, kWaiting + 1));
  }

  // Any request is served after the loop turn that wrote the frames and committed them, so the
  // store is read after the commit. Each turn's stored events are exactly what its stream got:
  // the same ids, names and data, in order, nothing more.
  (void)s.status();
  auto db = s.db();
  for (auto& x : w) {
    auto stored = plotq::store::turns::events_after(*db, x.turn, 0);
    REQUIRE(stored.size() == x.got.size());
    for (std::size_t k = 0; k < stored.size(); ++k) {
      CHECK(stored[k].seq == x.got[k].id);
      CHECK(stored[k].event == x.got[k].name);
      CHECK(json::parse(stored[k].data) == x.got[k].data);
    }
    CHECK(consecutive(x.got, 1));
  }

  // A client that reconnects after its ready gets the same statuses again (ids 2..), then the
  // live rest: the late turn leaves, and both the old and the resumed stream hear it with the
  // same next id.
  Waiter& mid = w[kWaiting / 2];
  SseStream again(s.port(), "GET", "/v1/sessions/" + mid.session + "/turns/" + mid.turn + "/events", {},
                  {{"X-Plotq-User", "w" + std::to_string(kWaiting / 2)}, {"Last-Event-ID", "1"}});
  REQUIRE(again.head().status == 200);
  for (std::size_t k = 1; k < mid.got.size(); ++k) {
    auto e = next_event(again, 10s);
    REQUIRE(e);
    CHECK(e->id == mid.got[k].id);
    CHECK(e->data == mid.got[k].data);
  }
  REQUIRE(s.cancel("late", st, late_turn).status == 200);
  auto live = next_event(again, 10s);
  REQUIRE(live);
  CHECK(live->id == mid.got.back().id + 1);
  CHECK(live->data == queued(kWaiting / 2 + 1, kWaiting));
  auto old = next_event(*mid.stream, 10s);
  REQUIRE(old);
  CHECK(old->id == live->id);
  CHECK(old->data == live->data);
}
