#include <catch2/catch.hpp>

#include "common/theme.hpp"

TEST_CASE("themes: one table, and the one rule every route and the sweep apply to a list of them") {
  CHECK(plotq::kThemes.size() == 2);
  CHECK(plotq::kDefaultTheme == "light");
  CHECK(plotq::known_theme("light"));
  CHECK(plotq::known_theme("dark"));
  CHECK_FALSE(plotq::known_theme("Dark"));
  CHECK_FALSE(plotq::known_theme(""));
  using V = std::vector<std::string>;
  CHECK(plotq::themes_problem(V{"light"}).empty());
  CHECK(plotq::themes_problem(V{"dark", "light"}).empty());
  CHECK(plotq::themes_problem(V{}) == "count");
  CHECK(plotq::themes_problem(V{"light", "dark", "light"}) == "count");
  CHECK(plotq::themes_problem(V{"sepia"}) == "unknown");
  CHECK(plotq::themes_problem(V{"light", "light"}) == "repeated");
}
