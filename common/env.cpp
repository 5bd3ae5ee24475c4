#include "common/env.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace plotq {

std::string env_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0' || x < min || x > max)
    throw ConfigError(std::string(name) + " must be an integer in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]");
  return x;
}

double env_double(const char* name, double fallback, double min, double max) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(v, &end);
  if (errno != 0 || *end != '\0' || !std::isfinite(x) || x < min || x > max)
    throw ConfigError(std::string(name) + " must be a number in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]");
  return x;
}

bool env_bool(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  std::string s(v);
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  throw ConfigError(std::string(name) + " must be a boolean (1/0, true/false)");
}

std::string project_home() { return env_string("PLOTQ_HOME", PLOTQ_SOURCE_DIR); }

}  // namespace plotq
