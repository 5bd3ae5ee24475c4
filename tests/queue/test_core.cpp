// The pure core with synthetic times: every clause of the queue contract in queue/README.md.
#include <catch2/catch.hpp>
#include <algorithm>

#include "io_helpers.hpp"
#include "queue/queue_core.hpp"

using namespace plotq::queue;

namespace {

Holder job(const char* label) { return Holder{HolderKind::job, "u", label}; }
Holder turn(const char* label) { return Holder{HolderKind::turn, "u", label}; }

// Many starts per window: tests that are not about the rate window are not limited by it.
Config unrated(int slots = 1) {
  Config c;
  c.slots = slots;
  c.starts_per_window = 1000;
  c.rate_window_s = 60;
  c.max_wait_s = 600;  // capacity 10000
  return c;
}

std::vector<TicketId> started(const std::vector<QueueEvent>& evs) {
  std::vector<TicketId> out;
  for (auto& e : evs)
    if (e.kind == EventKind::started) out.push_back(e.id);
  return out;
}

bool has(const std::vector<QueueEvent>& evs, EventKind k, TicketId id = 0) {
  return std::find(evs.begin(), evs.end(), QueueEvent{k, id}) != evs.end();
}

}  // namespace

TEST_CASE("an entry that can start at once starts, the next ones queue FIFO", "[core]") {
  QueueCore q(unrated());
  auto a = q.submit(job("a"), 0);
  CHECK(a.admission == Admission::started);
  CHECK(q.state(a.id) == TicketState::running);
  CHECK(started(q.take_events()) == std::vector<TicketId>{a.id});

  auto b = q.submit(job("b"), 1);
  auto c = q.submit(job("c"), 2);
  auto d = q.submit(job("d"), 3);
  CHECK(b.admission == Admission::queued);
  CHECK(b.position == Position{1, 1});
  CHECK(c.position == Position{2, 2});
  CHECK(d.position == Position{3, 3});
  auto evs = q.take_events();
  CHECK(started(evs).empty());
  CHECK(has(evs, EventKind::positions_changed));

  std::vector<TicketId> order;
  TicketId holder = a.id;
  for (double t = 10; q.in_flight() > 0; t += 10) {
    REQUIRE(q.release(holder, t));
    auto s = started(q.take_events());
    if (s.empty()) break;
    REQUIRE(s.size() == 1);
    order.push_back(s[0]);
    holder = s[0];
  }
  CHECK(order == std::vector<TicketId>{b.id, c.id, d.id});
  CHECK(q.waiting() == 0);
}

TEST_CASE("positions count down and waiting counts every queued entry", "[core]") {
  QueueCore q(unrated());
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 0);
  auto c = q.submit(job("c"), 0);
  auto d = q.submit(job("d"), 0);
  CHECK(q.position(d.id) == Position{3, 3});
  CHECK(q.position(b.id) == Position{1, 3});
  CHECK_FALSE(q.position(a.id));  // running, not waiting

  q.release(a.id, 1);
  CHECK(q.position(d.id) == Position{2, 2});
  CHECK(q.position(c.id) == Position{1, 2});
  q.release(b.id, 2);
  CHECK(q.position(d.id) == Position{1, 1});
  q.release(c.id, 3);
  CHECK(q.state(d.id) == TicketState::running);
  CHECK_FALSE(q.position(d.id));
}

TEST_CASE("past capacity a submit is refused with capacity and nothing is queued", "[core]") {
  QueueCore q(Config{});  // defaults: capacity 10
  REQUIRE(q.capacity() == 10);
  auto a = q.submit(job("a"), 0);
  REQUIRE(a.admission == Admission::started);
  for (int i = 0; i < 10; ++i) REQUIRE(q.submit(job("w"), 1).admission == Admission::queued);
  q.take_events();

  auto r = q.submit(job("late"), 2);
  CHECK(r.admission == Admission::refused);
  CHECK(std::string(r.code) == "capacity");
  CHECK(r.id == 0);
  CHECK(q.waiting() == 10);
  CHECK(q.take_events().empty());  // no positions changed, nothing queued
  CHECK(q.status(2).waiting == 10);
}

TEST_CASE("an entry that can start at once is admitted even with capacity 0", "[core]") {
  Config c;
  c.max_wait_s = 0;  // capacity 0
  c.slots = 2;
  QueueCore q(c);
  REQUIRE(q.capacity() == 0);
  auto a = q.submit(job("a"), 0);
  CHECK(a.admission == Admission::started);
  // The second slot is free but the rate window (1 per 60 s) is spent: it cannot start at once.
  auto b = q.submit(job("b"), 1);
  CHECK(b.admission == Admission::refused);
  CHECK(std::string(b.code) == kCapacity);
  // Once the window has opened again it can start at once, and is admitted.
  auto later = q.submit(job("c"), 60);
  CHECK(later.admission == Admission::started);
  CHECK(q.in_flight() == 2);
}

TEST_CASE("a waiting entry expires once it has waited the max wait", "[core]") {
  Config c = unrated();
  c.max_wait_s = 10;
  QueueCore q(c);
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 2);
  auto cc = q.submit(job("c"), 5);
  q.take_events();
  CHECK(q.next_change_at(3) == 12);  // the head's expiry; the slot is held, so no rate opening
  q.pump(11.999);
  CHECK(q.state(b.id) == TicketState::waiting);
  q.pump(12);  // waited exactly max and cannot start (slot held): expired by the >= pass
  auto evs = q.take_events();
  CHECK(has(evs, EventKind::expired, b.id));
  CHECK_FALSE(q.state(b.id));
  CHECK(q.position(cc.id) == Position{1, 1});
  CHECK(q.next_change_at(12) == 15);
  q.pump(100);
  CHECK(has(q.take_events(), EventKind::expired, cc.id));
  CHECK(q.state(a.id) == TicketState::running);  // running entries never expire
}

TEST_CASE("pump order: an entry whose turn comes exactly at its deadline starts", "[core]") {
  Config c;
  c.starts_per_window = 1;
  c.rate_window_s = 60;
  c.max_wait_s = 120;  // capacity 2
  QueueCore q(c);
  auto a = q.submit(job("a"), 0);  // books the window at 0
  auto b = q.submit(job("b"), 0);
  auto cc = q.submit(job("c"), 0);
  q.release(a.id, 1);  // slot free, but the rate window is spent until 60
  CHECK(q.state(b.id) == TicketState::waiting);
  CHECK(q.next_change_at(1) == 60);
  q.pump(60);
  CHECK(q.state(b.id) == TicketState::running);
  q.release(b.id, 61);
  q.take_events();
  // c has waited since 0; its deadline is 120, and the window opens again at 120 (b's start + 60).
  CHECK(q.next_change_at(61) == 120);
  q.pump(120);
  auto evs = q.take_events();
  CHECK(has(evs, EventKind::started, cc.id));
  CHECK_FALSE(has(evs, EventKind::expired, cc.id));
}

TEST_CASE("pump order: an entry that waited more than the max expires before any start", "[core]") {
  Config c;
  c.starts_per_window = 1;
  c.rate_window_s = 60;
  c.max_wait_s = 120;
  QueueCore q(c);
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 0);
  auto cc = q.submit(job("c"), 0);
  q.release(a.id, 1);
  q.pump(60);
  q.release(b.id, 61);
  q.take_events();
  // The adapter woke late: at 120.5 c has waited > 120, so it expires even though the window is
  // open; a stale entry is never started.
  q.pump(120.5);
  auto evs = q.take_events();
  CHECK(has(evs, EventKind::expired, cc.id));
  CHECK(started(evs).empty());
  CHECK(q.in_flight() == 0);
}

TEST_CASE("the rate window holds the second start until it opens", "[core]") {
  Config c;
  c.slots = 2;
  c.starts_per_window = 1;
  c.rate_window_s = 60;
  QueueCore q(c);
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 1);
  CHECK(a.admission == Admission::started);
  CHECK(b.admission == Admission::queued);  // a slot is free; the window is not
  CHECK(q.starts_in_window(1) == 1);
  CHECK(q.next_change_at(1) == 60);
  q.pump(59.999);
  CHECK(q.state(b.id) == TicketState::waiting);
  q.pump(60);
  CHECK(q.state(b.id) == TicketState::running);
  CHECK(q.in_flight() == 2);
  CHECK(q.starts_booked() == 2);
  CHECK_FALSE(q.next_change_at(60));  // nothing waits
}

TEST_CASE("a held turn slot books one start, later jobs of the turn book none", "[core][turn]") {
  Config c;
  c.slots = 2;
  c.starts_per_window = 2;
  c.rate_window_s = 60;
  QueueCore q(c);
  auto t1 = q.submit(turn("t1"), 0);
  REQUIRE(t1.admission == Admission::started);
  CHECK(q.add_job(t1.id, 1));
  CHECK(q.add_job(t1.id, 2));
  CHECK(q.starts_booked() == 1);
  CHECK(q.starts_in_window(2) == 1);
  // Had the jobs booked, the window (2 per 60 s) would be spent and t2 would have to wait.
  auto t2 = q.submit(turn("t2"), 3);
  CHECK(t2.admission == Admission::started);
  CHECK(q.status(3).holders.at(0).jobs == 3);
  // t1 and t2 have now spent the window: with t1's slot returned, a job still waits for it.
  q.release(t1.id, 4);
  auto j = q.submit(job("run-data"), 5);
  CHECK(j.admission == Admission::queued);
  CHECK(q.next_change_at(5) == 60);  // the slot is free; the window opens at t1's start + 60
}

TEST_CASE("add_job needs a running ticket", "[core][turn]") {
  QueueCore q(unrated());
  auto a = q.submit(turn("a"), 0);
  auto b = q.submit(turn("b"), 0);
  CHECK_FALSE(q.add_job(b.id, 1));  // waiting
  CHECK_FALSE(q.add_job(9999, 1));  // unknown
  q.release(a.id, 2);
  CHECK_FALSE(q.add_job(a.id, 2));  // ended
  CHECK(q.add_job(b.id, 2));
}

TEST_CASE("withdraw takes a waiting entry out and the others move up", "[core]") {
  QueueCore q(unrated());
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 0);
  auto c = q.submit(job("c"), 0);
  auto d = q.submit(job("d"), 0);
  q.take_events();
  CHECK(q.withdraw(c.id, 1));
  auto evs = q.take_events();
  CHECK(has(evs, EventKind::withdrawn, c.id));
  CHECK(has(evs, EventKind::positions_changed));
  CHECK(q.position(d.id) == Position{2, 2});
  CHECK_FALSE(q.withdraw(c.id, 2));  // already gone
  CHECK_FALSE(q.withdraw(a.id, 2));  // running: withdraw does not touch it
  CHECK(q.state(a.id) == TicketState::running);
  q.release(a.id, 3);
  q.release(b.id, 4);
  CHECK(q.state(d.id) == TicketState::running);
}

TEST_CASE("release is idempotent and withdraws a waiting entry", "[core]") {
  QueueCore q(unrated());
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 0);
  auto c = q.submit(job("c"), 0);
  q.take_events();
  CHECK(q.release(c.id, 1));  // waiting -> withdrawn
  CHECK(has(q.take_events(), EventKind::withdrawn, c.id));
  CHECK(q.release(a.id, 2));
  auto evs = q.take_events();
  CHECK(has(evs, EventKind::released, a.id));
  CHECK(has(evs, EventKind::started, b.id));
  CHECK_FALSE(q.release(a.id, 3));
  CHECK_FALSE(q.release(a.id, 4));
  CHECK_FALSE(q.release(424242, 4));
  CHECK(q.take_events().empty());
  CHECK(q.in_flight() == 1);
}

TEST_CASE("several slots run several holders and the queue fills the freed one", "[core]") {
  QueueCore q(unrated(3));
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 0);
  auto c = q.submit(job("c"), 0);
  auto d = q.submit(job("d"), 0);
  CHECK(a.admission == Admission::started);
  CHECK(b.admission == Admission::started);
  CHECK(c.admission == Admission::started);
  CHECK(d.admission == Admission::queued);
  CHECK(d.position == Position{1, 1});
  CHECK(q.in_flight() == 3);
  q.take_events();
  q.release(b.id, 5);
  CHECK(started(q.take_events()) == std::vector<TicketId>{d.id});
  auto s = q.status(7);
  REQUIRE(s.holders.size() == 3);
  CHECK(s.holders[0].id == a.id);  // grant order
  CHECK(s.holders[2].id == d.id);
  CHECK(s.holders[2].age_s == 2);
  CHECK(s.holder_age_s == 7);
}

TEST_CASE("cancel withdraws a waiting entry and marks a running one for kill", "[core]") {
  QueueCore q(unrated());
  auto a = q.submit(job("a"), 0);
  auto b = q.submit(job("b"), 0);
  auto c = q.submit(job("c"), 0);
  CHECK(q.cancel(c.id, 1) == CancelOutcome::withdrawn);
  CHECK(q.cancel(c.id, 1) == CancelOutcome::none);
  CHECK(q.cancel(a.id, 2) == CancelOutcome::kill_requested);
  CHECK(q.cancel(a.id, 2) == CancelOutcome::kill_requested);  // still running: same answer
  // The running holder keeps its slot until it releases (the kill is the caller's).
  CHECK(q.state(a.id) == TicketState::running);
  CHECK(q.state(b.id) == TicketState::waiting);
  CHECK(q.status(3).holders.at(0).cancel_requested);
  q.release(a.id, 4);
  CHECK(q.state(b.id) == TicketState::running);
  CHECK(q.cancel(a.id, 5) == CancelOutcome::none);
}

TEST_CASE("next_change_at is empty when only a release can change things", "[core]") {
  QueueCore q(unrated());
  CHECK_FALSE(q.next_change_at(0));
  auto a = q.submit(job("a"), 0);
  CHECK_FALSE(q.next_change_at(0));  // a runs, nothing waits
  q.submit(job("b"), 3);
  CHECK(q.next_change_at(4) == 603);  // b's expiry
  q.release(a.id, 5);
  CHECK_FALSE(q.next_change_at(5));
}

TEST_CASE("status reports waiting, in flight, holder age, capacity", "[core]") {
  Config c;
  QueueCore q(c);
  auto s0 = q.status(0);
  CHECK(s0.waiting == 0);
  CHECK(s0.in_flight == 0);
  CHECK_FALSE(s0.holder_age_s);
  CHECK(s0.capacity == 10);
  CHECK(s0.slots == 1);
  q.submit(Holder{HolderKind::turn, "ann", "turn 1"}, 100);
  q.submit(job("b"), 110);
  auto s = q.status(130);
  CHECK(s.waiting == 1);
  CHECK(s.in_flight == 1);
  CHECK(s.holder_age_s == 30);
  CHECK(s.oldest_wait_s == 20);
  CHECK(s.starts_in_window == 1);
  REQUIRE(s.holders.size() == 1);
  CHECK(s.holders[0].holder.user == "ann");
  CHECK(s.holders[0].holder.kind == HolderKind::turn);
}

TEST_CASE("a time that goes backwards counts as the last time seen", "[core]") {
  Config c = unrated();
  c.max_wait_s = 10;
  QueueCore q(c);
  q.submit(job("a"), 100);
  auto b = q.submit(job("b"), 50);  // clamped to 100
  q.pump(105);
  CHECK(q.state(b.id) == TicketState::waiting);
  CHECK(q.next_change_at(0) == 110);
  q.pump(110.5);
  CHECK_FALSE(q.state(b.id));
}

TEST_CASE("an invalid config is refused at construction", "[core]") {
  Config c;
  c.slots = 0;
  CHECK_THROWS_AS(QueueCore(c), std::invalid_argument);
}
