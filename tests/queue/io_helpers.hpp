// Running a real io_context in tests: until a condition holds (bounded), or for a while.
#pragma once
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <thread>

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
