#include <catch2/catch.hpp>
#include <cstdlib>

#include "common/env.hpp"

// docs/settings.md: an empty variable counts as unset. Tools that only ask "did the operator set
// it?" (plotq sweep run's choices) read it the same way as the registry.
TEST_CASE("env_set: an empty variable is unset, any value is set") {
  ::unsetenv("PLOTQ_TEST_ENV_SET");
  CHECK_FALSE(plotq::env_set("PLOTQ_TEST_ENV_SET"));
  ::setenv("PLOTQ_TEST_ENV_SET", "", 1);
  CHECK_FALSE(plotq::env_set("PLOTQ_TEST_ENV_SET"));
  CHECK(plotq::env_string("PLOTQ_TEST_ENV_SET", "fallback") == "fallback");
  ::setenv("PLOTQ_TEST_ENV_SET", "0", 1);
  CHECK(plotq::env_set("PLOTQ_TEST_ENV_SET"));
  CHECK(plotq::env_string("PLOTQ_TEST_ENV_SET", "fallback") == "0");
  ::unsetenv("PLOTQ_TEST_ENV_SET");
}
