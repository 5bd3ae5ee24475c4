// Running a real io_context in tests: until a condition holds (bounded), or for a while; the
// millisecond-friendly settings the adapter tests share.
#pragma once
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <thread>

#include "queue/config.hpp"

namespace qtest {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class Pred>
bool run_until(boost::asio::io_context& io, Pred pred, double timeout_s = 5.0) {
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  while (!pred()) {
    if (Clock::now() >= end) return false;
    if (io.stopped()) io.restart();
    if (io.run_one_for(std::chrono::milliseconds(5)) == 0 && io.stopped())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // no work at all right now
  }
  return true;
}

// 1000 starts per 1 s window and 10 s max wait (capacity 10000); heartbeat and turn deadline 10 s,
// so neither fires unless a test asks for it.
inline plotq::queue::Config fast() {
  plotq::queue::Config c;
  c.starts_per_window = 1000;
  c.rate_window_s = 1;
  c.max_wait_s = 10;
  c.heartbeat_s = 10;
  c.turn_deadline_s = 10;
  return c;
}

inline void run_for(boost::asio::io_context& io, double seconds) {
  const auto t0 = Clock::now();
  run_until(io, [&] { return since(t0) >= seconds; }, seconds + 1);
}

}  // namespace qtest

#include <catch2/catch.hpp>

#include "queue/queue_core.hpp"

namespace Catch {
template <>
struct StringMaker<plotq::queue::Position> {
  static std::string convert(const plotq::queue::Position& p) {
    return "{" + std::to_string(p.position) + "/" + std::to_string(p.waiting) + "}";
  }
};
}  // namespace Catch
