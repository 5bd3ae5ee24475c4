// The queue's metrics on a real RenderQueue and io_context (millisecond settings): a refusal at
// capacity, two max-wait expiries, the grants' slot waits, and the waiting and busy gauges read
// at scrape time, each checked as the change it caused in the process's registry.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "common/metrics.hpp"
#include "queue/queue_metrics.hpp"
#include "queue/render_queue.hpp"

using namespace plotq;
using namespace plotq::queue;

namespace {

std::map<std::string, double> scrape() {
  std::map<std::string, double> out;
  std::istringstream in(metrics::registry().render());
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] == '#') continue;
    auto sp = l.rfind(' ');
    out[l.substr(0, sp)] = std::stod(l.substr(sp + 1));
  }
  return out;
}
double at(const std::map<std::string, double>& s, const std::string& k) {
  auto it = s.find(k);
  return it == s.end() ? 0 : it->second;
}

template <class Pred>
bool run_until(boost::asio::io_context& io, Pred pred) {
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    if (io.stopped()) io.restart();
    io.run_one_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace

TEST_CASE("queue: refusals expiries slot waits and the gauges", "[metrics][queue]") {
  boost::asio::io_context io;
  Config c;
  c.slots = 1;
  c.starts_per_window = 20;
  c.rate_window_s = 1;
  c.max_wait_s = 0.1;  // capacity floor(20 x 0.1 / 1) = 2
  c.heartbeat_s = 10;
  c.turn_deadline_s = 10;
  RenderQueue q(io, c);
  REQUIRE(q.capacity() == 2);
  register_queue_metrics(q);
  const auto a = scrape();

  SlotLease held;
  int expired = 0, refused = 0;
  Callbacks first;
  first.on_granted = [&](SlotLease l) { held = std::move(l); };
  Ticket t1 = q.submit({HolderKind::turn, "u1", "t1"}, std::move(first));
  auto waiter = [&] {
    Callbacks cb;
    cb.on_expired = [&] { ++expired; };
    return cb;
  };
  Ticket j1 = q.submit({HolderKind::job, "u2", "j1"}, waiter());
  Ticket j2 = q.submit({HolderKind::job, "u3", "j2"}, waiter());
  Callbacks third;
  third.on_refused = [&](std::string_view) { ++refused; };
  Ticket t2 = q.submit({HolderKind::turn, "u4", "t2"}, std::move(third));  // position 3 > capacity 2

  const auto mid = scrape();  // while two jobs wait and the turn holds the slot
  CHECK(at(mid, R"(plotq_queue_waiting{holder="job"})") == 2);
  CHECK(at(mid, R"(plotq_queue_waiting{holder="turn"})") == 0);
  CHECK(at(mid, R"(plotq_queue_slot_busy{slot="0"})") == 1);

  REQUIRE(run_until(io, [&] { return expired == 2 && refused == 1; }));
  held.release();
  const auto b = scrape();
  auto d = [&](const std::string& k) { return at(b, k) - at(a, k); };
  CHECK(d(R"(plotq_queue_capacity_refusals_total{holder="turn"})") == 1);
  CHECK(d(R"(plotq_queue_capacity_refusals_total{holder="job"})") == 0);
  CHECK(d(R"(plotq_queue_max_wait_expiries_total{holder="job"})") == 2);
  CHECK(d(R"(plotq_queue_max_wait_expiries_total{holder="turn"})") == 0);
  CHECK(d(R"(plotq_queue_slot_wait_seconds_count{holder="turn"})") == 1);  // t1, at once
  CHECK(d(R"(plotq_queue_slot_wait_seconds_bucket{holder="turn",le="0.005"})") == 1);
  CHECK(d(R"(plotq_queue_slot_wait_seconds_count{holder="job"})") == 0);   // neither job was granted
  CHECK(at(b, R"(plotq_queue_waiting{holder="job"})") == 0);
  CHECK(at(b, R"(plotq_queue_slot_busy{slot="0"})") == 0);

  // A job that waits for the slot (on a queue with a long max wait): its grant observes the wait.
  c.max_wait_s = 5;
  RenderQueue q2(io, c);
  SlotLease held2;
  Callbacks holder;
  holder.on_granted = [&](SlotLease l) { held2 = std::move(l); };
  Ticket t3 = q2.submit({HolderKind::turn, "u5", "t3"}, std::move(holder));
  bool granted = false;
  Callbacks late;
  late.on_granted = [&](SlotLease) { granted = true; };
  Ticket j3 = q2.submit({HolderKind::job, "u6", "j3"}, std::move(late));
  REQUIRE(run_until(io, [&] { return held2.held(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // kept: the hold the wait metric must measure
  held2.release();
  REQUIRE(run_until(io, [&] { return granted; }));
  const auto e = scrape();
  const std::string count = R"(plotq_queue_slot_wait_seconds_count{holder="job"})";
  const std::string sum = R"(plotq_queue_slot_wait_seconds_sum{holder="job"})";
  CHECK(at(e, count) - at(b, count) == 1);
  CHECK(at(e, sum) - at(b, sum) >= 0.03);  // it waited the 30 ms the turn held the slot, at least

  // The gauges read this queue: forget them before it goes.
  metrics::registry().drop("plotq_queue_waiting");
  metrics::registry().drop("plotq_queue_slot_busy");
}
