#include "common/env.hpp"

#include <cstdlib>

namespace plotq {

std::string env_string(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

std::string project_home() { return env_string("PLOTQ_HOME", PLOTQ_SOURCE_DIR); }

}  // namespace plotq
