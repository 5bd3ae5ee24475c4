#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "server/config.hpp"
#include "server/plotqd_config.hpp"

using namespace plotq::server;

namespace {
// A fake environment for Settings::load.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  Settings::Lookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

struct Sample {
  int count = 3;
  std::size_t bytes = 1024;
  double ratio = 0.5;
  bool flag = false;
  std::string mode = "a";
  std::string secret;
  std::chrono::milliseconds wait{1500};
};

Settings sample_settings(Sample& c) {
  Settings s;
  s.add("PLOTQ_T_COUNT", &c.count, "a count").range(1, 10);
  s.add("PLOTQ_T_BYTES", &c.bytes, "bytes");
  s.add("PLOTQ_T_RATIO", &c.ratio, "ratio").range(0, 1);
  s.add("PLOTQ_T_FLAG", &c.flag, "flag");
  s.add("PLOTQ_T_MODE", &c.mode, "mode").choices({"a", "b"});
  s.add("PLOTQ_T_SECRET", &c.secret, "secret").secret();
  s.add("PLOTQ_T_WAIT_S", &c.wait, "wait").range(0.01, 60);
  return s;
}
}  // namespace

TEST_CASE("config: defaults are the fields' values; unset and empty keep them", "[config]") {
  Sample c;
  Settings s = sample_settings(c);
  FakeEnv env{{{"PLOTQ_T_COUNT", ""}}};
  CHECK(s.load(env.lookup()).empty());
  CHECK(c.count == 3);
  CHECK(c.wait == std::chrono::milliseconds(1500));
  CHECK(s.find("PLOTQ_T_COUNT")->default_value() == 3);
  CHECK(s.find("PLOTQ_T_WAIT_S")->default_value() == 1.5);
  CHECK_FALSE(s.find("PLOTQ_T_COUNT")->was_set());
}

TEST_CASE("config: good values are parsed into the fields", "[config]") {
  Sample c;
  Settings s = sample_settings(c);
  FakeEnv env{{{"PLOTQ_T_COUNT", "10"}, {"PLOTQ_T_BYTES", "18446744073709551615"}, {"PLOTQ_T_RATIO", "0.25"},
               {"PLOTQ_T_FLAG", "yes"}, {"PLOTQ_T_MODE", "b"}, {"PLOTQ_T_SECRET", "hunter2"}, {"PLOTQ_T_WAIT_S", "0.05"}}};
  auto errors = s.load(env.lookup());
  CHECK(errors.empty());
  CHECK(c.count == 10);
  CHECK(c.bytes == 18446744073709551615ull);
  CHECK(c.ratio == 0.25);
  CHECK(c.flag);
  CHECK(c.mode == "b");
  CHECK(c.secret == "hunter2");
  CHECK(c.wait == std::chrono::milliseconds(50));
  CHECK(s.find("PLOTQ_T_COUNT")->was_set());
}

TEST_CASE("config: bad values are refused / every one reported / fields untouched", "[config]") {
  const std::pair<const char*, const char*> bad[] = {
      {"PLOTQ_T_COUNT", "11"},     {"PLOTQ_T_COUNT", "0"},     {"PLOTQ_T_COUNT", "3x"},  {"PLOTQ_T_COUNT", " 3"},
      {"PLOTQ_T_COUNT", "3.0"},    {"PLOTQ_T_BYTES", "-1"},    {"PLOTQ_T_BYTES", "1e3"},
      {"PLOTQ_T_BYTES", "18446744073709551616"},                 {"PLOTQ_T_RATIO", "1.5"}, {"PLOTQ_T_RATIO", "nan"},
      {"PLOTQ_T_RATIO", "0x1p-2"}, {"PLOTQ_T_FLAG", "maybe"},  {"PLOTQ_T_MODE", "c"},   {"PLOTQ_T_WAIT_S", "0"},
      {"PLOTQ_T_WAIT_S", "61"},    {"PLOTQ_T_WAIT_S", "5s"}};
  for (auto [name, value] : bad) {
    INFO(name << "=" << value);
    Sample c;
    Settings s = sample_settings(c);
    FakeEnv env{{{name, value}}};
    auto errors = s.load(env.lookup());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind(std::string(name) + ": ", 0) == 0);
    CHECK(errors[0].find(value) != std::string::npos);  // the bad value is shown (not a secret)
    Sample untouched;
    CHECK(c.count == untouched.count);
    CHECK(c.bytes == untouched.bytes);
    CHECK(c.ratio == untouched.ratio);
    CHECK(c.mode == untouched.mode);
    CHECK(c.wait == untouched.wait);
  }
  Sample c;
  Settings s = sample_settings(c);
  FakeEnv env{{{"PLOTQ_T_COUNT", "99"}, {"PLOTQ_T_FLAG", "2"}}};
  CHECK(s.load(env.lookup()).size() == 2);
}

TEST_CASE("config: secrets are masked and never echoed", "[config]") {
  Sample c;
  Settings s = sample_settings(c);
  s.find("PLOTQ_T_SECRET");
  CHECK(s.to_json()["PLOTQ_T_SECRET"] == "");
  FakeEnv env{{{"PLOTQ_T_SECRET", "hunter2"}}};
  REQUIRE(s.load(env.lookup()).empty());
  auto j = s.to_json();
  CHECK(j["PLOTQ_T_SECRET"] == "***");
  CHECK(j.dump().find("hunter2") == std::string::npos);
  CHECK(s.help_text().find("hunter2") == std::string::npos);

  // A malformed secret: the message names the setting, not the value.
  PlotqdConfig pc;
  Settings ps;
  register_settings(ps, pc);
  FakeEnv bad{{{"PLOTQ_TOKENS", "short=alice"}}};
  auto errors = ps.load(bad.lookup());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].rfind("PLOTQ_TOKENS: ", 0) == 0);
  CHECK(errors[0].find("short") == std::string::npos);
}

TEST_CASE("config: names are checked at registration", "[config]") {
  Settings s;
  int x = 0, y = 0;
  s.add("PLOTQ_X", &x, "x");
  CHECK_THROWS_AS(s.add("PLOTQ_X", &y, "again"), std::logic_error);
  CHECK_THROWS_AS(s.add("X", &y, "no prefix"), std::logic_error);
  CHECK_THROWS_AS(s.add("PLOTQ_lower", &y, "lower case"), std::logic_error);
}

TEST_CASE("config: add_custom for other field types", "[config]") {
  Settings s;
  std::vector<std::string> list;
  s.add_custom("PLOTQ_T_LIST", "list", "comma list",
               [&](std::string_view t) {
                 if (t.find(' ') != std::string_view::npos) return std::string("no spaces");
                 list.clear();
                 std::string cur;
                 for (char ch : t) {
                   if (ch == ',') list.push_back(cur), cur.clear();
                   else cur += ch;
                 }
                 list.push_back(cur);
                 return std::string();
               },
               [&] { return nlohmann::json(list); });
  FakeEnv env{{{"PLOTQ_T_LIST", "a,b"}}};
  CHECK(s.load(env.lookup()).empty());
  CHECK(list == std::vector<std::string>{"a", "b"});
  CHECK(s.to_json()["PLOTQ_T_LIST"] == nlohmann::json({"a", "b"}));
  FakeEnv bad{{{"PLOTQ_T_LIST", "a, b"}}};
  CHECK(s.load(bad.lookup()).size() == 1);
}

TEST_CASE("config: unknown PLOTQ_ names are found", "[config]") {
  Sample c;
  Settings s = sample_settings(c);
  const char* env[] = {"PATH=/bin", "PLOTQ_T_COUNT=3", "PLOTQ_T_CONUT=4", nullptr};
  CHECK(s.unknown_names(env) == std::vector<std::string>{"PLOTQ_T_CONUT"});
}

TEST_CASE("config: plotqd's settings have the documented defaults", "[config]") {
  PlotqdConfig c;
  Settings s;
  register_settings(s, c);
  FakeEnv none;
  REQUIRE(s.load(none.lookup()).empty());
  CHECK(check_config(c).empty());
  auto j = s.to_json();
  CHECK(j["PLOTQ_LISTEN"] == "127.0.0.1:8080");
  CHECK(j["PLOTQ_DB"] == "./var/plotq.db");
  CHECK(j["PLOTQ_HTTP_HEADER_LIMIT"] == 8192);
  CHECK(j["PLOTQ_HTTP_BODY_LIMIT"] == 4 * 1024 * 1024);
  CHECK(j["PLOTQ_DB_SYNCHRONOUS_FULL"] == false);
  CHECK(j["PLOTQ_DB_BUSY_TIMEOUT_MS"] == 5000);
  CHECK(j["PLOTQ_ENVIRONMENT"] == "production");
  CHECK(j["PLOTQ_SHUTDOWN_GRACE_S"] == 10.0);
  CHECK(j["PLOTQ_SSE_PING_S"] == 15.0);
  CHECK(j["PLOTQ_TOKENS"] == "");
}

TEST_CASE("config: plotqd's settings refuse bad values", "[config]") {
  const std::pair<const char*, const char*> bad[] = {
      {"PLOTQ_LISTEN", "localhost:8080"}, {"PLOTQ_LISTEN", "127.0.0.1"},      {"PLOTQ_LISTEN", "127.0.0.1:65536"},
      {"PLOTQ_LISTEN", "::1:80"},         {"PLOTQ_HTTP_BODY_LIMIT", "10"},    {"PLOTQ_HTTP_READ_TIMEOUT_S", "-1"},
      {"PLOTQ_ENVIRONMENT", "staging"},   {"PLOTQ_DB_BUSY_TIMEOUT_MS", "x"},  {"PLOTQ_DB_SYNCHRONOUS_FULL", "2"},
      {"PLOTQ_TOKENS", "abcdefghijklmnop"}, {"PLOTQ_SLOTS", "0"},             {"PLOTQ_HTTP_MAX_CONNECTIONS", "0"}};
  for (auto [name, value] : bad) {
    INFO(name << "=" << value);
    PlotqdConfig c;
    Settings s;
    register_settings(s, c);
    FakeEnv env{{{name, value}}};
    auto errors = s.load(env.lookup());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].find(name) == 0);
  }
}

TEST_CASE("config: cross-field checks", "[config]") {
  PlotqdConfig c;
  Settings s;
  register_settings(s, c);
  FakeEnv env{{{"PLOTQ_ENVIRONMENT", "development"}, {"PLOTQ_LISTEN", "0.0.0.0:8080"}}};
  REQUIRE(s.load(env.lookup()).empty());
  auto errors = check_config(c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("loopback") != std::string::npos);

  PlotqdConfig ok;
  Settings s2;
  register_settings(s2, ok);
  FakeEnv env2{{{"PLOTQ_ENVIRONMENT", "development"}, {"PLOTQ_LISTEN", "[::1]:0"}}};
  REQUIRE(s2.load(env2.lookup()).empty());
  CHECK(check_config(ok).empty());
}

TEST_CASE("config: help lists every setting; README documents every setting", "[config]") {
  PlotqdConfig c;
  Settings s;
  register_settings(s, c);
  std::string help = s.help_text();
  std::ifstream in(std::string(PLOTQ_SOURCE_DIR) + "/server/README.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string readme = ss.str();
  std::set<std::string> registered;
  for (const Setting& st : s.all()) {
    INFO(st.name());
    registered.insert(st.name());
    CHECK(help.find(st.name()) != std::string::npos);
    CHECK(readme.find("`" + st.name() + "`") != std::string::npos);
    CHECK_FALSE(st.help().empty());
  }
  // ... and the README's settings table names nothing that does not exist.
  std::regex row(R"(\|\s*`(PLOTQ_[A-Z0-9_]+)`\s*\|)");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row); it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(registered.count((*it)[1].str()) == 1);
  }
}
