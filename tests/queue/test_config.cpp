#include <catch2/catch.hpp>
#include <cstdlib>

#include "common/env.hpp"
#include "queue/config.hpp"

using plotq::queue::Config;

TEST_CASE("capacity is floor(starts per window x max wait / window)", "[config]") {
  Config c;
  CHECK(c.capacity() == 10);  // anyplot defaults: 1 per minute, 600 s
  c.starts_per_window = 2;
  CHECK(c.capacity() == 20);
  c.max_wait_s = 89;  // 2 x 89 / 60 = 2.97
  CHECK(c.capacity() == 2);
  c.max_wait_s = 0;
  CHECK(c.capacity() == 0);
  Config s;  // short test settings whose quotient is a hair under an integer in binary
  s.starts_per_window = 3;
  s.rate_window_s = 0.1;
  s.max_wait_s = 0.7;
  CHECK(s.capacity() == 21);
}

TEST_CASE("invalid settings are named", "[config]") {
  Config c;
  CHECK(c.invalid_reason().empty());
  c.slots = 0;
  CHECK(c.invalid_reason().find("slots") != std::string::npos);
  c = Config{};
  c.rate_window_s = 0;
  CHECK(c.invalid_reason().find("rate_window_s") != std::string::npos);
  c = Config{};
  c.max_wait_s = -1;
  CHECK(c.invalid_reason().find("max_wait_s") != std::string::npos);
  c = Config{};
  c.heartbeat_s = 0;
  CHECK(c.invalid_reason().find("heartbeat_s") != std::string::npos);
  c = Config{};
  c.turn_deadline_s = -3;
  CHECK(c.invalid_reason().find("turn_deadline_s") != std::string::npos);
}

TEST_CASE("from_env reads the PLOTQ_ names and refuses bad values", "[config]") {
  const char* names[] = {"PLOTQ_SLOTS", "PLOTQ_RUNS_PER_MINUTE", "PLOTQ_RATE_WINDOW_S",
                         "PLOTQ_QUEUE_MAX_WAIT_S", "PLOTQ_HEARTBEAT_S", "PLOTQ_TURN_DEADLINE_S"};
  for (auto* n : names) unsetenv(n);
  Config d = Config::from_env();
  CHECK(d.slots == 1);
  CHECK(d.starts_per_window == 1);
  CHECK(d.rate_window_s == 60);
  CHECK(d.max_wait_s == 600);
  CHECK(d.heartbeat_s == 15);
  CHECK(d.turn_deadline_s == 180);

  setenv("PLOTQ_SLOTS", "2", 1);
  setenv("PLOTQ_RUNS_PER_MINUTE", "4", 1);
  setenv("PLOTQ_RATE_WINDOW_S", "0.5", 1);
  setenv("PLOTQ_QUEUE_MAX_WAIT_S", "3", 1);
  setenv("PLOTQ_HEARTBEAT_S", "0.25", 1);
  setenv("PLOTQ_TURN_DEADLINE_S", "7", 1);
  Config e = Config::from_env();
  CHECK(e.slots == 2);
  CHECK(e.starts_per_window == 4);
  CHECK(e.rate_window_s == 0.5);
  CHECK(e.max_wait_s == 3);
  CHECK(e.heartbeat_s == 0.25);
  CHECK(e.turn_deadline_s == 7);
  CHECK(e.capacity() == 24);

  setenv("PLOTQ_SLOTS", "0", 1);
  CHECK_THROWS_AS(Config::from_env(), plotq::ConfigError);
  setenv("PLOTQ_SLOTS", "1", 1);
  setenv("PLOTQ_QUEUE_MAX_WAIT_S", "ten", 1);
  CHECK_THROWS_AS(Config::from_env(), plotq::ConfigError);
  for (auto* n : names) unsetenv(n);
}
