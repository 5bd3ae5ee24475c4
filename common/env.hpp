// Reading PLOTQ_* settings from the environment. Parsing is strict: a value that does not parse is
// a configuration error (thrown), never silently replaced by the default.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

namespace plotq {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string env_string(const char* name, const std::string& fallback);
std::int64_t env_int(const char* name, std::int64_t fallback, std::int64_t min, std::int64_t max);
double env_double(const char* name, double fallback, double min, double max);
bool env_bool(const char* name, bool fallback);

// Where the project's sources are (harness, migrations, web page): PLOTQ_HOME, else the
// source tree this binary was built from.
std::string project_home();

}  // namespace plotq
