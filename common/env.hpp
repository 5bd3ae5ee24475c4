// ConfigError (a bad PLOTQ_* value: thrown, never silently replaced by the default), a plain string
// read where a tool only needs a path or address as text, and where the project's files are.
// Settings are registered and parsed strictly by common/settings.hpp.
#pragma once
#include <stdexcept>
#include <string>

namespace plotq {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string env_string(const char* name, const std::string& fallback);
// Whether the operator set the variable, as the registry reads it: an empty value counts as unset
// (docs/settings.md).
bool env_set(const char* name);

// Where the project's sources are (harness, migrations, web page): PLOTQ_HOME, else the
// source tree this binary was built from.
std::string project_home();

}  // namespace plotq
