// Sliding rate window of start timestamps: a run may start only while fewer than `limit` starts
// happened in the last `window_s` seconds; a start leaves the window when now - t >= window_s
// (computed as t + window_s <= now everywhere, so opens_at() and allows() agree to the bit).
#pragma once
#include <deque>
#include <optional>

namespace plotq::queue {

class RateWindow {
 public:
  RateWindow(int limit, double window_s) : limit_(limit), window_s_(window_s) {}

  bool allows(double now) const { return count(now) < limit_; }
  // Starts still inside the window at `now`.
  int count(double now) const;
  // When allows() next becomes true; nullopt when it is true at `now`.
  std::optional<double> opens_at(double now) const;
  // Records a start at `now` (times must not go backwards; the queue core clamps them).
  void book(double now);
  // Forgets starts that left the window; keeps memory bounded by `limit`.
  void prune(double now);

 private:
  int limit_;
  double window_s_;
  std::deque<double> starts_;  // ascending
};

}  // namespace plotq::queue
