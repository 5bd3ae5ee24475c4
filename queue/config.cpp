#include "queue/config.hpp"

#include <climits>
#include <cmath>

#include "common/env.hpp"

namespace plotq::queue {

int Config::capacity() const {
  if (rate_window_s <= 0 || max_wait_s <= 0 || starts_per_window <= 0) return 0;
  const double c = std::floor(double(starts_per_window) * max_wait_s / rate_window_s + 1e-9);
  return c >= double(INT_MAX) ? INT_MAX : int(c);
}

std::string Config::invalid_reason() const {
  if (slots < 1) return "slots must be at least 1";
  if (starts_per_window < 1) return "starts_per_window must be at least 1";
  if (!(rate_window_s > 0) || !std::isfinite(rate_window_s)) return "rate_window_s must be > 0";
  if (!(max_wait_s >= 0) || !std::isfinite(max_wait_s)) return "max_wait_s must be >= 0";
  if (!(heartbeat_s > 0) || !std::isfinite(heartbeat_s)) return "heartbeat_s must be > 0";
  if (!(turn_deadline_s > 0) || !std::isfinite(turn_deadline_s)) return "turn_deadline_s must be > 0";
  return {};
}

Config Config::from_env() {
  Config c;
  c.slots = int(env_int("PLOTQ_SLOTS", c.slots, 1, 64));
  c.starts_per_window = int(env_int("PLOTQ_RUNS_PER_MINUTE", c.starts_per_window, 1, 100000));
  c.rate_window_s = env_double("PLOTQ_RATE_WINDOW_S", c.rate_window_s, 0.001, 86400);
  c.max_wait_s = env_double("PLOTQ_QUEUE_MAX_WAIT_S", c.max_wait_s, 0, 86400);
  c.heartbeat_s = env_double("PLOTQ_HEARTBEAT_S", c.heartbeat_s, 0.001, 3600);
  c.turn_deadline_s = env_double("PLOTQ_TURN_DEADLINE_S", c.turn_deadline_s, 0.001, 86400);
  return c;
}

}  // namespace plotq::queue
