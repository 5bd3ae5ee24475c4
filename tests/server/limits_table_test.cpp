// common/limits.hpp, the one table of fixed limits: docs/limits.md is it, each limit a setting is
// bounded by is that setting's registered maximum, and no doc names a limit the table lacks.
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/limits.hpp"
#include "common/settings.hpp"
#include "server/plotqd_config.hpp"

using namespace plotq;

namespace {
std::string read(const std::string& path) {
  std::ifstream in(std::string(PLOTQ_SOURCE_DIR) + "/" + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("limits: docs/limits.md is common/limits.hpp's table as generated", "[limits]") {
  std::string want = limits::markdown();
  if (read("docs/limits.md") != want) {
    std::string fresh = std::string(PLOTQ_BINARY_DIR) + "/limits.md";
    std::ofstream(fresh) << want;
    FAIL("docs/limits.md is stale: cp " << fresh << " " << PLOTQ_SOURCE_DIR << "/docs/limits.md");
  }
}

TEST_CASE("limits: each name once, each with its unit and reason", "[limits]") {
  std::set<std::string_view> seen;
  for (const auto& l : limits::kLimits) {
    INFO(l.name);
    CHECK(seen.insert(l.name).second);
    CHECK(l.bound > 0);
    CHECK(!l.unit.empty());
    CHECK(l.why.size() > 10);
  }
}

TEST_CASE("limits: a setting bounded by a limit is registered with that maximum", "[limits]") {
  server::PlotqdConfig c;
  Settings s;
  server::register_settings(s, c);
  int bounded = 0;
  for (const auto& l : limits::kLimits) {
    if (l.setting.empty()) continue;
    INFO(l.name << " bounds " << l.setting);
    const Setting* st = s.find(l.setting);
    REQUIRE(st != nullptr);
    REQUIRE(st->has_range());
    CHECK(static_cast<double>(st->max()) == l.bound);
    ++bounded;
  }
  CHECK(bounded >= 3);
}
