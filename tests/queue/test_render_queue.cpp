// The Asio adapter on a real io_context with millisecond settings. Lower bounds on elapsed time
// are safe (timers never fire early); upper bounds are generous because the machine may be busy.
#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "io_helpers.hpp"
#include "queue/render_queue.hpp"

using namespace plotq::queue;
using qtest::fast;
using qtest::run_for;
using qtest::run_until;
using qtest::since;

namespace {

// Records every callback of named tickets as "name:what" lines, and keeps granted leases.
struct Recorder {
  std::vector<std::string> log;
  std::vector<double> position_times;
  std::map<std::string, SlotLease> leases;
  qtest::Clock::time_point t0 = qtest::Clock::now();

  Callbacks cb(const std::string& name, bool keep_lease = true) {
    Callbacks c;
    c.on_position = [this, name](Position p) {
      log.push_back(name + ":pos " + std::to_string(p.position) + "/" + std::to_string(p.waiting));
      position_times.push_back(since(t0));
    };
    c.on_granted = [this, name, keep_lease](SlotLease l) {
      log.push_back(name + ":granted");
      if (keep_lease) leases[name] = std::move(l);
    };
    c.on_refused = [this, name](std::string_view code) { log.push_back(name + ":refused " + std::string(code)); };
    c.on_expired = [this, name] { log.push_back(name + ":expired"); };
    return c;
  }
  bool saw(const std::string& line) const { return std::find(log.begin(), log.end(), line) != log.end(); }
  int count(const std::string& line) const { return int(std::count(log.begin(), log.end(), line)); }
};

}  // namespace

TEST_CASE("callbacks come from the loop, in core order, then one position broadcast", "[adapter]") {
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Recorder r;
  Ticket a = q.submit({HolderKind::turn, "u1", "a"}, r.cb("a"));
  CHECK(a.state() == TicketState::running);  // current at once
  Ticket b = q.submit({HolderKind::job, "u2", "b"}, r.cb("b"));
  Ticket c = q.submit({HolderKind::job, "u3", "c"}, r.cb("c"));
  CHECK(b.state() == TicketState::waiting);
  CHECK(b.position() == Position{1, 2});
  CHECK(r.log.empty());  // nothing ran inside submit

  REQUIRE(run_until(io, [&] { return r.log.size() >= 3; }));
  CHECK(r.log == std::vector<std::string>{"a:granted", "b:pos 1/2", "c:pos 2/2"});

  r.log.clear();
  r.leases.at("a").release();
  CHECK(b.state() == TicketState::running);
  CHECK(a.state() == TicketState::done);
  REQUIRE(run_until(io, [&] { return r.log.size() >= 2; }));
  CHECK(r.log == std::vector<std::string>{"b:granted", "c:pos 1/1"});

  r.log.clear();
  r.leases.at("b").release();
  r.leases.at("b").release();  // idempotent
  REQUIRE(run_until(io, [&] { return r.log.size() >= 1; }));
  run_for(io, 0.02);
  CHECK(r.log == std::vector<std::string>{"c:granted"});
}

TEST_CASE("a refusal is delivered as on_refused(capacity), never inside submit", "[adapter]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.max_wait_s = 0;  // capacity 0: only an entry that can start at once is admitted
  RenderQueue q(io, cfg);
  Recorder r;
  Ticket a = q.submit({}, r.cb("a"));
  Ticket b = q.submit({}, r.cb("b"));
  CHECK(a.state() == TicketState::running);
  CHECK(b.state() == TicketState::refused);
  CHECK(b.id() == 0);
  CHECK(r.log.empty());
  REQUIRE(run_until(io, [&] { return r.log.size() >= 2; }));
  CHECK(r.log == std::vector<std::string>{"a:granted", "b:refused capacity"});
  CHECK(q.status().waiting == 0);
}

TEST_CASE("an unchanged position is re-sent every heartbeat", "[adapter][heartbeat]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.heartbeat_s = 0.03;
  RenderQueue q(io, cfg);
  Recorder r;
  Ticket a = q.submit({}, r.cb("a"));
  Ticket b = q.submit({}, r.cb("b"));
  REQUIRE(run_until(io, [&] { return r.count("b:pos 1/1") >= 5; }));
  // 1 at once + 4 heartbeats: at least 4 x 30 ms, and each gap at least one heartbeat.
  REQUIRE(r.position_times.size() >= 5);
  for (std::size_t i = 1; i < r.position_times.size(); ++i)
    CHECK(r.position_times[i] - r.position_times[i - 1] >= 0.03 - 0.002);
  CHECK(r.position_times.back() - r.position_times.front() >= 4 * 0.03 - 0.002);
  // Every line was b's unchanged 1/1 (besides a's grant).
  CHECK(r.count("b:pos 1/1") == int(r.position_times.size()));
}

TEST_CASE("heartbeats stop when nobody waits", "[adapter][heartbeat]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.heartbeat_s = 0.02;
  RenderQueue q(io, cfg);
  Recorder r;
  Ticket a = q.submit({}, r.cb("a"));
  Ticket b = q.submit({}, r.cb("b"));
  REQUIRE(run_until(io, [&] { return r.count("b:pos 1/1") >= 2; }));
  r.leases.at("a").release();
  REQUIRE(run_until(io, [&] { return r.saw("b:granted"); }));
  const auto n = r.position_times.size();
  run_for(io, 0.1);
  CHECK(r.position_times.size() == n);
}

TEST_CASE("a waiter that waits past max wait gets on_expired, not the slot", "[adapter][expiry]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.max_wait_s = 0.06;
  cfg.rate_window_s = 0.01;  // capacity 1000 x 0.06 / 0.01
  RenderQueue q(io, cfg);
  Recorder r;
  Ticket a = q.submit({}, r.cb("a"));
  const auto t0 = qtest::Clock::now();
  Ticket b = q.submit({}, r.cb("b"));
  REQUIRE(run_until(io, [&] { return r.saw("b:expired"); }));
  CHECK(since(t0) >= 0.06);
  CHECK(b.state() == TicketState::expired);
  CHECK(r.log == std::vector<std::string>{"a:granted", "b:pos 1/1", "b:expired"});
  r.leases.at("a").release();
  run_for(io, 0.02);
  CHECK_FALSE(r.saw("b:granted"));
  CHECK(q.status().in_flight == 0);
}

TEST_CASE("the rate window delays the second start, the queue's one timer wakes it", "[adapter][rate]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.slots = 2;
  cfg.starts_per_window = 1;
  cfg.rate_window_s = 0.08;
  cfg.max_wait_s = 1;
  RenderQueue q(io, cfg);
  Recorder r;
  const auto t0 = qtest::Clock::now();
  Ticket a = q.submit({}, r.cb("a"));
  Ticket b = q.submit({}, r.cb("b"));
  CHECK(b.state() == TicketState::waiting);
  REQUIRE(run_until(io, [&] { return r.saw("b:granted"); }));
  CHECK(since(t0) >= 0.08);
  CHECK(r.log == std::vector<std::string>{"a:granted", "b:pos 1/1", "b:granted"});
  CHECK(q.status().in_flight == 2);
}

TEST_CASE("cancel withdraws a waiting ticket, nothing more comes for it", "[adapter][cancel]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.heartbeat_s = 0.02;
  RenderQueue q(io, cfg);
  Recorder r;
  Ticket a = q.submit({}, r.cb("a"));
  Ticket b = q.submit({}, r.cb("b"));
  Ticket c = q.submit({}, r.cb("c"));
  REQUIRE(run_until(io, [&] { return r.saw("c:pos 2/2"); }));
  CHECK(b.cancel() == CancelOutcome::withdrawn);
  CHECK(b.state() == TicketState::withdrawn);
  CHECK(b.cancel() == CancelOutcome::none);
  REQUIRE(run_until(io, [&] { return r.saw("c:pos 1/1"); }));
  const int b_lines = r.count("b:pos 1/2");
  r.leases.at("a").release();
  REQUIRE(run_until(io, [&] { return r.saw("c:granted"); }));
  run_for(io, 0.06);
  CHECK(r.count("b:pos 1/2") == b_lines);
  CHECK_FALSE(r.saw("b:granted"));
  CHECK_FALSE(r.saw("b:pos 1/1"));
}

TEST_CASE("cancel of a running ticket asks for a kill, the slot waits for the release", "[adapter][cancel]") {
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Recorder r;
  Ticket a = q.submit({}, r.cb("a"));
  Ticket b = q.submit({}, r.cb("b"));
  REQUIRE(run_until(io, [&] { return r.saw("a:granted"); }));
  CHECK(a.cancel() == CancelOutcome::kill_requested);
  CHECK(a.cancel() == CancelOutcome::kill_requested);
  CHECK(q.status().holders.at(0).cancel_requested);
  run_for(io, 0.02);
  CHECK(b.state() == TicketState::waiting);  // the slot is still a's
  r.leases.at("a").release();                // the caller killed its job
  REQUIRE(run_until(io, [&] { return r.saw("b:granted"); }));
  CHECK(a.state() == TicketState::done);
  CHECK(a.cancel() == CancelOutcome::none);
}

TEST_CASE("a ticket cancelled between its grant and the delivery never gets the lease", "[adapter][cancel]") {
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Recorder r;
  Ticket a = q.submit({}, r.cb("a"));
  Ticket b = q.submit({}, r.cb("b"));
  Ticket c = q.submit({}, r.cb("c"));
  REQUIRE(run_until(io, [&] { return r.saw("a:granted"); }));
  r.leases.at("a").release();  // b is granted in the core...
  CHECK(b.state() == TicketState::running);
  CHECK(b.cancel() == CancelOutcome::withdrawn);  // ...but nobody saw the lease: hand it on
  CHECK(b.state() == TicketState::withdrawn);
  CHECK(c.state() == TicketState::running);
  REQUIRE(run_until(io, [&] { return r.saw("c:granted"); }));
  run_for(io, 0.02);
  CHECK_FALSE(r.saw("b:granted"));
}

TEST_CASE("dropping a waiting Ticket withdraws it, an ignored lease returns the slot", "[adapter]") {
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Recorder r;
  Ticket a = q.submit({}, r.cb("a", /*keep_lease=*/false));
  Ticket c;
  {
    Ticket b = q.submit({}, r.cb("b"));
    c = q.submit({}, r.cb("c"));
    CHECK(q.status().waiting == 2);
  }
  CHECK(q.status().waiting == 1);
  // a's lease died inside on_granted, so the slot went straight on to c.
  REQUIRE(run_until(io, [&] { return r.saw("c:granted"); }));
  CHECK_FALSE(r.saw("b:granted"));
  CHECK(a.state() == TicketState::done);
}

TEST_CASE("status reports waiting, in flight, holder age and capacity", "[adapter][status]") {
  boost::asio::io_context io;
  Config cfg;  // defaults
  RenderQueue q(io, cfg);
  Recorder r;
  Ticket a = q.submit({HolderKind::turn, "ann", "turn 1"}, r.cb("a"));
  Ticket b = q.submit({HolderKind::job, "svc", "/run-data"}, r.cb("b"));
  run_for(io, 0.03);
  auto s = q.status();
  CHECK(s.waiting == 1);
  CHECK(s.in_flight == 1);
  CHECK(s.capacity == 10);
  REQUIRE(s.holder_age_s);
  CHECK(*s.holder_age_s >= 0.03);
  CHECK(*s.holder_age_s < 5);
  CHECK(s.holders.at(0).holder.label == "turn 1");
}

TEST_CASE("a throwing callback does not stall the queue", "[adapter]") {
  plotq::set_log_enabled(false);
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Recorder r;
  Callbacks bad = r.cb("a");
  bad.on_granted = [](SlotLease) { throw std::runtime_error("holder bug"); };
  Ticket a = q.submit({}, bad);  // the lease dies with the exception: slot returned
  Ticket b = q.submit({}, r.cb("b"));
  REQUIRE(run_until(io, [&] { return r.saw("b:granted"); }));
  plotq::set_log_enabled(true);
}

TEST_CASE("leases and tickets that outlive the queue do nothing", "[adapter]") {
  boost::asio::io_context io;
  Recorder r;
  Ticket b;
  {
    RenderQueue q(io, fast());
    Ticket a = q.submit({}, r.cb("a"));
    b = q.submit({}, r.cb("b"));
    REQUIRE(run_until(io, [&] { return r.saw("a:granted"); }));
  }
  run_for(io, 0.01);
  r.leases.at("a").release();
  CHECK(b.cancel() == CancelOutcome::none);
  CHECK_FALSE(r.saw("b:granted"));
}

TEST_CASE("one broadcast reaches 10,000 waiters with their own positions", "[adapter][scale]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.max_wait_s = 100;  // capacity 100,000
  RenderQueue q(io, cfg);
  SlotLease held;
  Callbacks hc;
  hc.on_granted = [&](SlotLease l) { held = std::move(l); };
  Ticket holder = q.submit({}, hc);
  constexpr int N = 10000;
  std::vector<Position> last(N);
  std::vector<Ticket> tickets;
  tickets.reserve(N);
  int calls = 0;
  for (int i = 0; i < N; ++i) {
    Callbacks c;
    c.on_position = [&, i](Position p) {
      last[i] = p;
      ++calls;
    };
    tickets.push_back(q.submit({}, std::move(c)));
  }
  REQUIRE(run_until(io, [&] { return calls >= N; }));
  CHECK(calls == N);  // the submits coalesced into one broadcast
  CHECK(last[0] == Position{1, N});
  CHECK(last[N - 1] == Position{N, N});
  calls = 0;
  CHECK(tickets[0].cancel() == CancelOutcome::withdrawn);
  REQUIRE(run_until(io, [&] { return calls >= N - 1; }));
  CHECK(last[1] == Position{1, N - 1});
  CHECK(last[N - 1] == Position{N - 1, N - 1});
}

TEST_CASE("positions changed by others are merged: at most one broadcast per interval, a newcomer told its place at once",
          "[adapter][scale]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.max_wait_s = 100;  // capacity 100,000
  cfg.status_min_interval_s = 0.3;
  RenderQueue q(io, cfg);
  SlotLease held;
  Callbacks hc;
  hc.on_granted = [&](SlotLease l) { held = std::move(l); };
  Ticket holder = q.submit({}, hc);
  constexpr int N = 1000;
  std::vector<Position> last(N);
  std::vector<int> calls(N, 0);
  std::vector<Ticket> tickets;
  // N arrivals, one per loop turn (as HTTP requests come): each newcomer hears its own place at
  // once, the others' counts wait for the merged broadcast.
  const auto t0 = qtest::Clock::now();
  for (int i = 0; i < N; ++i) {
    Callbacks c;
    c.on_position = [&, i](Position p) {
      last[i] = p;
      ++calls[i];
    };
    tickets.push_back(q.submit({}, std::move(c)));
    REQUIRE(run_until(io, [&] { return calls[i] >= 1; }));
    CHECK(last[i].position == i + 1);
  }
  const double took = since(t0);
  // Each waiter heard its own arrival, and at most one merged broadcast per interval began since.
  const int broadcasts_possible = 1 + int(took / cfg.status_min_interval_s) + 1;
  CHECK(calls[0] <= broadcasts_possible + 1);
  int total = 0;
  for (int c : calls) total += c;
  // Sending each change would have cost N*(N+1)/2 calls; merged it is N per interval at most.
  CHECK(total <= N + N * broadcasts_possible);
  CHECK(total < N * (N + 1) / 2);
  // The merged broadcast brings everyone the queue as it is now.
  REQUIRE(run_until(io, [&] { return last[0] == Position{1, N}; }, 2.0));
  CHECK(last[N - 1] == Position{N, N});
  // Departures are merged the same way: ten withdrawals in ten loop turns, then one broadcast.
  std::fill(calls.begin(), calls.end(), 0);
  for (int i = 0; i < 10; ++i) {
    CHECK(tickets[i].cancel() == CancelOutcome::withdrawn);
    io.poll();
  }
  REQUIRE(run_until(io, [&] { return last[N - 1] == Position{N - 10, N - 10}; }, 2.0));
  CHECK(calls[N - 1] <= 2);  // not one per withdrawal
  CHECK(last[10] == Position{1, N - 10});
}
