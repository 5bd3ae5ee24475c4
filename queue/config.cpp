#include "queue/config.hpp"

#include <climits>
#include <cmath>

#include "common/settings.hpp"

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
  if (!(status_min_interval_s >= 0) || !std::isfinite(status_min_interval_s)) return "status_min_interval_s must be >= 0";
  return {};
}

void register_settings(Settings& s, Config& c) {
  s.add("PLOTQ_SLOTS", &c.slots, "sandbox jobs (turns) holding a render slot at once").range(1, 64);
  s.add("PLOTQ_RUNS_PER_MINUTE", &c.starts_per_window, "slot starts allowed per rate window").range(1, 100000);
  s.add("PLOTQ_RATE_WINDOW_S", &c.rate_window_s, "length of the sliding rate window, seconds").range(0.001, 86400);
  s.add("PLOTQ_QUEUE_MAX_WAIT_S", &c.max_wait_s, "a waiting turn or job expires after this many seconds").range(0, 86400);
  s.add("PLOTQ_HEARTBEAT_S", &c.heartbeat_s, "unchanged queue positions are re-sent this often, seconds").range(0.001, 3600);
  s.add("PLOTQ_TURN_DEADLINE_S", &c.turn_deadline_s, "a turn's budget once it holds the slot, seconds").range(0.001, 86400);
  // Why merged: with n waiting, every arrival or departure changes every waiter's count, so
  // sending each change costs n per change and n squared to open n turns; merged, it costs n per
  // interval however fast they come.
  s.add("PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S", &c.status_min_interval_s,
        "queue positions are broadcast at most this often, and a waiting turn's queued statuses are at least this far "
        "apart (changes in between are merged), seconds; 0 = every change")
      .range(0, 60);
}

Config Config::from_env() { return load_from_env<Config>(register_settings); }

}  // namespace plotq::queue
