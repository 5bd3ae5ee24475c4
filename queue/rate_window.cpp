#include "queue/rate_window.hpp"

namespace plotq::queue {

int RateWindow::count(double now) const {
  int n = 0;
  // Newest first: the in-window starts are a suffix of the ascending deque.
  for (auto it = starts_.rbegin(); it != starts_.rend() && *it + window_s_ > now; ++it) ++n;
  return n;
}

std::optional<double> RateWindow::opens_at(double now) const {
  const int n = count(now);
  if (n < limit_) return std::nullopt;
  // The window opens when all but limit-1 of the in-window starts have left it.
  const std::size_t first_in = starts_.size() - std::size_t(n);
  return starts_[first_in + std::size_t(n - limit_)] + window_s_;
}

void RateWindow::book(double now) {
  prune(now);
  starts_.push_back(now);
}

void RateWindow::prune(double now) {
  while (!starts_.empty() && starts_.front() + window_s_ <= now) starts_.pop_front();
}

}  // namespace plotq::queue
