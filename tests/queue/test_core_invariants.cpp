// Random operation sequences against the queue's invariants, checked after every step:
// slots and rate never exceeded, capacity respected, no entry left waiting past the max wait,
// work-conserving (nothing waits while it could start), FIFO among queued entries, and
// next_change_at is a time when something really changes.
#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "queue/queue_core.hpp"

using namespace plotq::queue;

namespace {

struct Run {
  Config cfg;
  std::mt19937 rng;
  QueueCore q;
  std::vector<double> start_times;  // every booked start
  std::map<TicketId, double> enqueued;  // queued entries' submit times
  std::vector<TicketId> queued_order;   // submit order of entries that were queued
  std::vector<TicketId> start_order;    // start order of entries that had been queued
  std::set<TicketId> running, waiting;
  double now = 0;

  Run(Config c, unsigned seed) : cfg(c), rng(seed), q(c) {}

  void absorb() {
    for (auto& e : q.take_events()) {
      switch (e.kind) {
        case EventKind::started:
          start_times.push_back(now);
          running.insert(e.id);
          if (waiting.erase(e.id)) start_order.push_back(e.id);
          break;
        case EventKind::expired:
          REQUIRE(waiting.erase(e.id) == 1);
          CHECK(enqueued.at(e.id) + cfg.max_wait_s <= now);
          break;
        case EventKind::withdrawn: REQUIRE(waiting.erase(e.id) == 1); break;
        case EventKind::released: REQUIRE(running.erase(e.id) == 1); break;
        case EventKind::positions_changed: break;
      }
    }
  }

  void check() {
    REQUIRE(int(running.size()) == q.in_flight());
    REQUIRE(waiting.size() == q.waiting());
    CHECK(q.in_flight() <= cfg.slots);
    CHECK(int(q.waiting()) <= q.capacity());
    // Sliding window: no window of rate_window_s ever saw more than starts_per_window starts.
    for (std::size_t i = 0; i < start_times.size(); ++i) {
      int n = 0;
      for (std::size_t j = i; j < start_times.size() && start_times[i] + cfg.rate_window_s > start_times[j]; ++j) ++n;
      CHECK(n <= cfg.starts_per_window);
    }
    for (TicketId id : waiting) CHECK(enqueued.at(id) + cfg.max_wait_s > now);
    // Work-conserving: if a slot is free and the window open, nothing is left waiting.
    if (q.in_flight() < cfg.slots && q.starts_in_window(now) < cfg.starts_per_window) CHECK(q.waiting() == 0);
    // FIFO: queued entries start in the order they were queued (skipping the ones that left).
    std::vector<TicketId> expect;
    std::set<TicketId> s(start_order.begin(), start_order.end());
    for (TicketId id : queued_order)
      if (s.count(id)) expect.push_back(id);
    CHECK(expect == start_order);
    auto nc = q.next_change_at(now);
    if (nc) CHECK(*nc > now);
    CHECK((nc.has_value() == !waiting.empty()));
  }

  void step() {
    std::uniform_int_distribution<int> op(0, 9);
    std::uniform_real_distribution<double> dt(0, cfg.rate_window_s * 0.7);
    const int o = op(rng);
    if (o < 4) {
      auto r = q.submit(Holder{}, now);
      if (r.admission == Admission::queued) {
        enqueued[r.id] = now;
        queued_order.push_back(r.id);
        waiting.insert(r.id);
      }
      if (r.admission == Admission::refused) CHECK(int(q.waiting()) == q.capacity());
      absorb();
    } else if (o < 7 && !running.empty()) {
      auto it = running.begin();
      std::advance(it, std::uniform_int_distribution<std::size_t>(0, running.size() - 1)(rng));
      REQUIRE(q.release(*it, now));
      absorb();
    } else if (o < 8 && !waiting.empty()) {
      auto it = waiting.begin();
      std::advance(it, std::uniform_int_distribution<std::size_t>(0, waiting.size() - 1)(rng));
      REQUIRE(q.cancel(*it, now) == CancelOutcome::withdrawn);
      absorb();
    } else {
      // Advance time, sometimes exactly to the next change (the instant edges matter most).
      auto nc = q.next_change_at(now);
      now = (nc && o == 9) ? *nc : now + dt(rng);
      q.pump(now);
      absorb();
    }
    check();
  }
};

}  // namespace

TEST_CASE("random sequences keep every queue invariant", "[core][invariants]") {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    Config c;
    c.slots = 1 + int(seed % 3);
    c.starts_per_window = 1 + int(seed % 4);
    c.rate_window_s = 60;
    c.max_wait_s = (seed % 5) * 45.0;  // includes 0 (capacity 0)
    Run r(c, seed);
    for (int i = 0; i < 400; ++i) r.step();
  }
}
