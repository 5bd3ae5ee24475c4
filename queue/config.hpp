// Settings of the render slot and its queue. Every limit is a named field with its default; its
// PLOTQ_* name, bound and reason are declared once in register_settings() (config.cpp).
#pragma once
#include <string>

namespace plotq {
class Settings;
}

namespace plotq::queue {

struct Config {
  int slots = 1;                 // PLOTQ_SLOTS: sandbox jobs (turns) holding a render slot at once
  int starts_per_window = 1;     // PLOTQ_RUNS_PER_MINUTE: starts allowed per rate window
  double rate_window_s = 60;     // PLOTQ_RATE_WINDOW_S: length of the sliding rate window
  double max_wait_s = 600;       // PLOTQ_QUEUE_MAX_WAIT_S: a waiting entry expires after this
  double heartbeat_s = 15;       // PLOTQ_HEARTBEAT_S: unchanged positions are re-sent this often
  // PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S: positions changed by others' arrivals and departures are
  // sent at most this often, merged (the queue's broadcast, and each waiting turn's status{queued})
  double status_min_interval_s = 0.5;
  double turn_deadline_s = 180;  // PLOTQ_TURN_DEADLINE_S: a turn's budget once it holds the slot

  // Waiting entries admitted: floor(starts per window x max wait / window). At the defaults this is
  // anyplot's floor(per_minute x 600 / 60) = 10. A tiny epsilon keeps 0.7/0.1-style settings exact.
  int capacity() const;

  // Empty when the values are usable, else a sentence naming the bad field.
  std::string invalid_reason() const;

  // The registration loaded alone from the environment; throws plotq::ConfigError on a bad value.
  static Config from_env();
};

// Registers every field of c as its PLOTQ_* setting (defaults: c's values).
void register_settings(Settings& s, Config& c);

}  // namespace plotq::queue
