// TurnSlot on a real io_context: one booked start per turn, the held slot for later jobs, the
// deadline paused while queued and armed in full on grant, cancel, refusal and expiry.
#include <catch2/catch.hpp>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "io_helpers.hpp"
#include "queue/turn_slot.hpp"

using namespace plotq::queue;
using qtest::fast;
using qtest::run_for;
using qtest::run_until;
using qtest::since;

namespace {

struct Log {
  std::vector<std::string> lines;
  TurnSlot::Callbacks cb(const std::string& name) {
    TurnSlot::Callbacks c;
    c.on_position = [this, name](Position p) {
      lines.push_back(name + ":pos " + std::to_string(p.position) + "/" + std::to_string(p.waiting));
    };
    c.on_granted = [this, name](bool booked) { lines.push_back(name + (booked ? ":granted booked" : ":granted held")); };
    c.on_refused = [this, name](std::string_view code) { lines.push_back(name + ":refused " + std::string(code)); };
    c.on_expired = [this, name] { lines.push_back(name + ":expired"); };
    return c;
  }
  bool saw(const std::string& s) const { return std::find(lines.begin(), lines.end(), s) != lines.end(); }
  int count(const std::string& s) const { return int(std::count(lines.begin(), lines.end(), s)); }
};

Holder turn(const char* user) { return Holder{HolderKind::turn, user, std::string("turn of ") + user}; }

}  // namespace

TEST_CASE("a turn books one start, its later jobs run under the held slot and book none", "[turn]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.slots = 2;
  cfg.starts_per_window = 2;
  cfg.rate_window_s = 30;  // 2 starts per 30 s: a second booking by t1 would block t2
  RenderQueue q(io, cfg);
  Log log;
  TurnSlot t1(q, turn("ann"), [] {});
  CHECK(t1.take(log.cb("t1")) == TurnSlot::Take::submitted);
  REQUIRE(run_until(io, [&] { return log.saw("t1:granted booked"); }));
  CHECK(t1.held());
  CHECK(t1.take(log.cb("t1")) == TurnSlot::Take::held);
  CHECK(t1.take(log.cb("t1")) == TurnSlot::Take::held);
  REQUIRE(run_until(io, [&] { return log.count("t1:granted held") == 2; }));
  CHECK(t1.jobs() == 3);
  auto s = q.status();
  CHECK(s.starts_booked == 1);
  CHECK(s.starts_in_window == 1);
  CHECK(s.holders.at(0).jobs == 3);

  TurnSlot t2(q, turn("bob"), [] {});
  CHECK(t2.take(log.cb("t2")) == TurnSlot::Take::submitted);
  REQUIRE(run_until(io, [&] { return log.saw("t2:granted booked"); }));
  CHECK_FALSE(log.saw("t2:pos 1/1"));  // it never had to wait
  CHECK(q.status().starts_booked == 2);
}

TEST_CASE("the turn holds the slot until it ends, then the next holder gets it", "[turn]") {
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Log log;
  TurnSlot t1(q, turn("ann"), [] {});
  t1.take(log.cb("t1"));
  REQUIRE(run_until(io, [&] { return log.saw("t1:granted booked"); }));
  // A non-turn caller (/run-data) goes through the same queue: take -> run -> release.
  SlotLease job_lease;
  Callbacks jc;
  jc.on_position = [&](Position p) { log.lines.push_back("job:pos " + std::to_string(p.position)); };
  jc.on_granted = [&](SlotLease l) {
    log.lines.push_back("job:granted");
    job_lease = std::move(l);
  };
  Ticket job = q.submit({HolderKind::job, "svc", "/run-data"}, jc);
  REQUIRE(run_until(io, [&] { return log.saw("job:pos 1"); }));
  // t1's job is over but the turn is not: the slot stays with t1.
  run_for(io, 0.03);
  CHECK_FALSE(log.saw("job:granted"));
  t1.end();
  t1.end();  // idempotent
  CHECK(t1.ended());
  REQUIRE(run_until(io, [&] { return log.saw("job:granted"); }));
  CHECK(t1.take(log.cb("t1")) == TurnSlot::Take::ended);
  job_lease.release();
  CHECK(job.state() == TicketState::done);
}

TEST_CASE("the deadline does not run while queued and is armed in full when granted", "[turn][deadline]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.turn_deadline_s = 0.1;
  RenderQueue q(io, cfg);
  Log log;
  TurnSlot holder(q, turn("ann"), [] {});
  holder.take(log.cb("h"));
  REQUIRE(run_until(io, [&] { return log.saw("h:granted booked"); }));

  int fired = 0;
  qtest::Clock::time_point granted_at;
  TurnSlot t(q, turn("bob"), [&] { ++fired; });
  CHECK(t.deadline().armed());  // runs from the turn's start
  auto cb = log.cb("t");
  cb.on_granted = [&](bool booked) {
    granted_at = qtest::Clock::now();
    log.lines.push_back(booked ? "t:granted booked" : "t:granted held");
  };
  CHECK(t.take(cb) == TurnSlot::Take::submitted);
  CHECK(t.waiting());
  CHECK(t.deadline().paused());
  // Queued for 2.5 deadlines: it must not fire, and nothing is used up.
  run_for(io, 0.25);
  CHECK(fired == 0);
  CHECK(t.deadline().paused());
  const double left = t.deadline_remaining();
  CHECK(left > 0.05);
  CHECK(left <= 0.1);

  // The deadline is armed at the grant, which this end() causes: before on_granted is delivered
  // (a posted callback), so it is measured from here, the last moment before the grant.
  const auto before_grant = qtest::Clock::now();
  holder.end();
  REQUIRE(run_until(io, [&] { return log.saw("t:granted booked"); }));
  CHECK(t.deadline().armed());
  CHECK(t.deadline_remaining() > 0.08);  // the full 0.1 s again, not what was left
  REQUIRE(run_until(io, [&] { return fired > 0; }));
  CHECK(since(before_grant) >= 0.1);
  CHECK(since(granted_at) >= 0.09);  // and about that long after the grant was delivered
  run_for(io, 0.05);
  CHECK(fired == 1);  // once
}

TEST_CASE("the deadline fires for a turn that holds the slot too long", "[turn][deadline]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.turn_deadline_s = 0.04;
  RenderQueue q(io, cfg);
  Log log;
  int fired = 0;
  TurnSlot t(q, turn("ann"), [&] { ++fired; });
  t.take(log.cb("t"));
  REQUIRE(run_until(io, [&] { return fired == 1; }));
  CHECK(t.held());  // firing does not release: the caller kills its job, then ends the turn
  CHECK(t.cancel() == CancelOutcome::kill_requested);
  t.end();
  CHECK(q.status().in_flight == 0);
}

TEST_CASE("cancel while queued withdraws the turn, later takes answer ended", "[turn][cancel]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.heartbeat_s = 0.02;
  RenderQueue q(io, cfg);
  Log log;
  TurnSlot t1(q, turn("ann"), [] {});
  t1.take(log.cb("t1"));
  TurnSlot t2(q, turn("bob"), [] {});
  CHECK(t2.take(log.cb("t2")) == TurnSlot::Take::submitted);
  CHECK(t2.take(log.cb("t2")) == TurnSlot::Take::busy);
  REQUIRE(run_until(io, [&] { return log.saw("t2:pos 1/1"); }));
  CHECK(t2.cancel() == CancelOutcome::withdrawn);
  CHECK(t2.ended());
  CHECK(t2.cancel() == CancelOutcome::none);
  CHECK(q.status().waiting == 0);
  const int lines = int(log.lines.size());
  t1.end();
  run_for(io, 0.06);
  CHECK(int(log.lines.size()) == lines);  // no heartbeat, no grant for t2
  CHECK(t2.take(log.cb("t2")) == TurnSlot::Take::ended);
}

TEST_CASE("a full queue refuses the turn with capacity, a long wait expires it", "[turn]") {
  boost::asio::io_context io;
  Config cfg = fast();
  cfg.starts_per_window = 1;
  cfg.rate_window_s = 0.05;
  cfg.max_wait_s = 0.06;  // capacity 1
  RenderQueue q(io, cfg);
  Log log;
  TurnSlot t1(q, turn("a"), [] {});
  TurnSlot t2(q, turn("b"), [] {});
  TurnSlot t3(q, turn("c"), [] {});
  t1.take(log.cb("t1"));
  t2.take(log.cb("t2"));
  t3.take(log.cb("t3"));
  REQUIRE(run_until(io, [&] { return log.saw("t3:refused capacity"); }));
  CHECK(t3.ended());
  REQUIRE(run_until(io, [&] { return log.saw("t2:expired"); }));
  CHECK(t2.ended());
  CHECK(t1.held());
  CHECK_FALSE(log.saw("t2:granted booked"));
}

TEST_CASE("ending a turn before its first job, and destroying a waiting one", "[turn]") {
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Log log;
  TurnSlot t0(q, turn("z"), [] {});
  CHECK(t0.cancel() == CancelOutcome::none);  // never took: nothing queued, but it is over
  CHECK(t0.take(log.cb("t0")) == TurnSlot::Take::ended);

  TurnSlot t1(q, turn("a"), [] {});
  t1.take(log.cb("t1"));
  {
    TurnSlot t2(q, turn("b"), [] {});
    t2.take(log.cb("t2"));
    CHECK(q.status().waiting == 1);
  }
  CHECK(q.status().waiting == 0);
  run_for(io, 0.02);
  CHECK_FALSE(log.saw("t2:pos 1/1"));
}

TEST_CASE("a position callback may cancel its own turn", "[turn][cancel]") {
  boost::asio::io_context io;
  RenderQueue q(io, fast());
  Log log;
  TurnSlot t1(q, turn("a"), [] {});
  t1.take(log.cb("t1"));
  auto t2 = std::make_unique<TurnSlot>(q, turn("b"), [] {});
  auto cb = log.cb("t2");
  std::string captured(64, 'x');  // a capture too big for std::function's small buffer
  cb.on_position = [&, captured](Position) {
    log.lines.push_back("t2:cancel " + std::to_string(captured.size()));
    CHECK(t2->cancel() == CancelOutcome::withdrawn);
  };
  t2->take(cb);
  REQUIRE(run_until(io, [&] { return log.saw("t2:cancel 64"); }));
  CHECK(t2->ended());
  CHECK(q.status().waiting == 0);
}
