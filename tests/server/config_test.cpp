#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/settings.hpp"
#include "sweep/bare.hpp"
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

TEST_CASE("config: defaults are the fields' values - unset and empty keep them", "[config]") {
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

TEST_CASE("config: help lists every setting - README tables name only registered settings", "[config]") {
  PlotqdConfig c;
  Settings s;
  register_settings(s, c);
  std::string help = s.help_text();
  plotq::runs::BareConfig bare;  // plotq sweep's own (the CLI's, so not in plotqd's --help)
  Settings sweep;
  plotq::runs::register_sweep_settings(sweep, bare);
  std::set<std::string> registered;
  for (const Setting& st : s.all()) {
    INFO(st.name());
    registered.insert(st.name());
    CHECK(help.find(st.name()) != std::string::npos);
    CHECK_FALSE(st.help().empty());
  }
  for (const Setting& st : sweep.all()) registered.insert(st.name());
  // A settings table in any folder's README names nothing that does not exist (docs/settings.md
  // is the full list; a README may show a few of its own).
  std::regex row(R"(\|\s*`(PLOTQ_[A-Z0-9_]+)`\s*\|)");
  int rows = 0;
  for (const char* readme_path : {"server/README.md", "sandbox/README.md", "sandbox/figure/README.md", "store/README.md",
                                  "queue/README.md", "runs/README.md", "sweep/README.md", "tools/README.md", "README.md"}) {
    std::ifstream in(std::string(PLOTQ_SOURCE_DIR) + "/" + readme_path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string readme = ss.str();
    for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row); it != std::sregex_iterator(); ++it) {
      INFO(readme_path << ": " << (*it)[1].str());
      CHECK(registered.count((*it)[1].str()) == 1);
      ++rows;
    }
  }
  CHECK(rows > 0);  // the scan really read the tables
}

// docs/settings.md is the registry printed: every setting's name, type, default, bound and why, under
// the file that declares it. Regenerate it with the file this test writes when they differ.
TEST_CASE("config: docs/settings.md is the registry as generated", "[config]") {
  PlotqdConfig c;
  Settings s;
  register_settings(s, c);
  // Longest prefix first: the build dir may lie inside the source dir.
  // The sweep's own settings belong to the CLI (plotq sweep), not to plotqd: their own section.
  plotq::runs::BareConfig bare;
  s.section("plotq sweep (sweep/README.md)", "sweep/settings.cpp");
  plotq::runs::register_sweep_settings(s, bare);
  std::string want = s.markdown({{PLOTQ_BINARY_DIR, "<build>"}, {PLOTQ_SOURCE_DIR, "<home>"}});
  std::ifstream in(std::string(PLOTQ_SOURCE_DIR) + "/docs/settings.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string fresh = std::string(PLOTQ_BINARY_DIR) + "/settings.md";
  if (ss.str() != want) {
    std::ofstream(fresh) << want;
    FAIL("docs/settings.md is stale: cp " << fresh << " " << PLOTQ_SOURCE_DIR << "/docs/settings.md");
  }
  for (const Setting& st : s.all()) {
    INFO(st.name());
    CHECK(want.find("| `" + st.name() + "` |") != std::string::npos);
  }
  // The defaults printed are the code's (the drift this file replaces: a README said 30 s here).
  CHECK(want.find("| `PLOTQ_FIGURE_START_TIMEOUT_S` | number | `" +
                  nlohmann::json(c.figure.figure_start_timeout_s).dump() + "` |") != std::string::npos);
}

// plotqd maps every sandbox::Config / FigureConfig field itself; the CLI and tests still read them
// with sandbox::config_from_env(). Both must read the same names into the same fields.
TEST_CASE("config: the sandbox and figure settings read the same variables as sandbox::config_from_env", "[config]") {
  const std::map<std::string, std::string> values = {
      {"PLOTQ_PYTHON", "/opt/py/bin/python3"}, {"PLOTQ_HARNESS_DIR", "/opt/h"}, {"PLOTQ_CONFINE_LIB", "/opt/c.so"},
      {"PLOTQ_RUNS_DIR", "/srv/runs"}, {"PLOTQ_SANDBOX_LOCK_DIR", "/srv/lock"}, {"PLOTQ_HIDDEN_PATHS", "/a,,/b"},
      {"PLOTQ_SANDBOX_UID_BASE", "70000"}, {"PLOTQ_SANDBOX_UID_COUNT", "64"}, {"PLOTQ_SANDBOX_MAX_JOBS", "3"},
      {"PLOTQ_RLIMIT_AS_MB", "2048"}, {"PLOTQ_RLIMIT_NPROC", "32"}, {"PLOTQ_RLIMIT_CPU_S", "30"},
      {"PLOTQ_RLIMIT_FSIZE_MB", "20"}, {"PLOTQ_RLIMIT_NOFILE", "128"}, {"PLOTQ_SANDBOX_NICE", "15"}, {"PLOTQ_SANDBOX_CGROUP", "false"},
      {"PLOTQ_CGROUP_MEMORY_MB", "512"}, {"PLOTQ_CGROUP_PIDS_MAX", "40"}, {"PLOTQ_CGROUP_PARENT", "/x"},
      {"PLOTQ_WATCH_INTERVAL_MS", "25"}, {"PLOTQ_RUN_BUDGET_MB", "32"}, {"PLOTQ_MAX_RUN_ENTRIES", "500"},
      {"PLOTQ_MAX_RUN_DEPTH", "8"}, {"PLOTQ_MIN_MEM_AVAILABLE_MB", "100"}, {"PLOTQ_KILL_MEM_AVAILABLE_MB", "50"},
      {"PLOTQ_STDOUT_HEAD_BYTES", "100"}, {"PLOTQ_STDOUT_TAIL_BYTES", "200"}, {"PLOTQ_STDERR_KEEP_BYTES", "300"},
      {"PLOTQ_STDERR_TAIL_CHARS", "400"}, {"PLOTQ_READER_GRACE_MS", "500"}, {"PLOTQ_SANDBOX_MAX_TIMEOUT_S", "90.5"},
      {"PLOTQ_MIN_RETRY_S", "2.5"}, {"PLOTQ_KILL_GRACE_S", "4"}, {"PLOTQ_SANDBOX_COLD", "true"},
      {"PLOTQ_WARM_MODES", "data"}, {"PLOTQ_ZYGOTE_FALLBACK_COLD", "true"}, {"PLOTQ_ZYGOTE_START_TIMEOUT_S", "7"},
      {"PLOTQ_ZYGOTE_MAX_RESTARTS", "2"}, {"PLOTQ_RAW_PRELOAD", "numpy,pandas"}, {"PLOTQ_REQUIRED_LAYERS", "uid"},
      {"PLOTQ_REQUIRE_EXEC_FILTER", "false"},
      {"PLOTQ_NODE", "/opt/node"}, {"PLOTQ_CHROMIUM", "/opt/chromium"}, {"PLOTQ_PLOTLY_JS", "/opt/plotly.js"},
      {"PLOTQ_BOKEH_JS", "/opt/bokeh"},
      {"PLOTQ_FIGURE_SCRIPT", "/opt/r.mjs"}, {"PLOTQ_FIGURE_TMP_ROOT", "/srv/tmp"}, {"PLOTQ_FIGURE_RESTART_AFTER", "9"},
      {"PLOTQ_FIGURE_START_TIMEOUT_S", "11"}, {"PLOTQ_FIGURE_KILL_GRACE_S", "3"}, {"PLOTQ_FIGURE_MAX_TIMEOUT_S", "33"},
      {"PLOTQ_FIGURE_MAX_QUEUE", "5"}, {"PLOTQ_FIGURE_SPARES", "1"}, {"PLOTQ_FIGURE_NETNS", "false"},
      {"PLOTQ_FIGURE_PIDNS", "false"}, {"PLOTQ_FIGURE_UID", "1234"}, {"PLOTQ_FIGURE_GID", "4321"},
      {"PLOTQ_FIGURE_CHROMIUM_SANDBOX", "false"}, {"PLOTQ_FIGURE_WEBGL", "false"}, {"PLOTQ_FIGURE_MAX_BYTES", "4096"},
      {"PLOTQ_FIGURE_MAX_DEPTH", "16"}, {"PLOTQ_FIGURE_HEAP_MB", "256"}, {"PLOTQ_FIGURE_STDERR_KEEP_BYTES", "1024"},
  };
  PlotqdConfig cfg;
  Settings s;
  register_settings(s, cfg);
  for (const auto& [name, value] : values) {
    INFO(name);
    CHECK(s.find(name) != nullptr);
  }
  FakeEnv env{{values.begin(), values.end()}};
  REQUIRE(s.load(env.lookup()).empty());
  for (const auto& [name, value] : values) ::setenv(name.c_str(), value.c_str(), 1);
  plotq::sandbox::Config e = plotq::sandbox::config_from_env();
  plotq::sandbox::FigureConfig f = plotq::sandbox::figure_config_from_env();
  for (const auto& [name, value] : values) ::unsetenv(name.c_str());
  const plotq::sandbox::Config& r = cfg.sandbox;
  CHECK(r.python == e.python);
  CHECK(r.harness_dir == e.harness_dir);
  CHECK(r.confine_lib == e.confine_lib);
  CHECK(r.runs_dir == e.runs_dir);
  CHECK(r.sandbox_lock_dir == e.sandbox_lock_dir);
  CHECK(r.hidden_paths == e.hidden_paths);
  CHECK(r.hidden_paths == std::vector<std::string>{"/a", "/b"});
  CHECK(r.sandbox_uid_base == e.sandbox_uid_base);
  CHECK(r.sandbox_uid_count == e.sandbox_uid_count);
  CHECK(r.sandbox_max_jobs == e.sandbox_max_jobs);
  CHECK(r.rlimit_as_mb == e.rlimit_as_mb);
  CHECK(r.rlimit_nproc == e.rlimit_nproc);
  CHECK(r.rlimit_cpu_s == e.rlimit_cpu_s);
  CHECK(r.rlimit_fsize_mb == e.rlimit_fsize_mb);
  CHECK(r.rlimit_nofile == e.rlimit_nofile);
  CHECK(r.sandbox_nice == e.sandbox_nice);
  CHECK(r.sandbox_nice == 15u);
  CHECK(r.sandbox_cgroup == e.sandbox_cgroup);
  CHECK(r.cgroup_memory_mb == e.cgroup_memory_mb);
  CHECK(r.cgroup_pids_max == e.cgroup_pids_max);
  CHECK(r.cgroup_parent == e.cgroup_parent);
  CHECK(r.watch_interval_ms == e.watch_interval_ms);
  CHECK(r.run_budget_mb == e.run_budget_mb);
  CHECK(r.max_run_entries == e.max_run_entries);
  CHECK(r.max_run_depth == e.max_run_depth);
  CHECK(r.min_mem_available_mb == e.min_mem_available_mb);
  CHECK(r.kill_mem_available_mb == e.kill_mem_available_mb);
  CHECK(r.stdout_head_bytes == e.stdout_head_bytes);
  CHECK(r.stdout_tail_bytes == e.stdout_tail_bytes);
  CHECK(r.stderr_keep_bytes == e.stderr_keep_bytes);
  CHECK(r.stderr_tail_chars == e.stderr_tail_chars);
  CHECK(r.reader_grace_ms == e.reader_grace_ms);
  CHECK(r.sandbox_max_timeout_s == e.sandbox_max_timeout_s);
  CHECK(r.min_retry_s == e.min_retry_s);
  CHECK(r.kill_grace_s == e.kill_grace_s);
  CHECK(r.sandbox_cold == e.sandbox_cold);
  CHECK(r.warm_modes == e.warm_modes);
  CHECK(r.zygote_fallback_cold == e.zygote_fallback_cold);
  CHECK(r.zygote_start_timeout_s == e.zygote_start_timeout_s);
  CHECK(r.zygote_max_restarts == e.zygote_max_restarts);
  CHECK(r.raw_preload == e.raw_preload);
  CHECK(r.required_layers == e.required_layers);
  CHECK(r.require_exec_filter == e.require_exec_filter);
  const plotq::sandbox::FigureConfig& g = cfg.figure;
  CHECK(g.node == f.node);
  CHECK(g.chromium == f.chromium);
  CHECK(g.plotly_js == f.plotly_js);
  CHECK(g.bokeh_js == f.bokeh_js);
  CHECK(g.bokeh_js == "/opt/bokeh");
  CHECK(g.figure_script == f.figure_script);
  CHECK(g.figure_tmp_root == f.figure_tmp_root);
  CHECK(g.figure_restart_after == f.figure_restart_after);
  CHECK(g.figure_start_timeout_s == f.figure_start_timeout_s);
  CHECK(g.figure_kill_grace_s == f.figure_kill_grace_s);
  CHECK(g.figure_max_timeout_s == f.figure_max_timeout_s);
  CHECK(g.figure_max_queue == f.figure_max_queue);
  CHECK(g.figure_spares == f.figure_spares);
  CHECK(g.figure_netns == f.figure_netns);
  CHECK(g.figure_pidns == f.figure_pidns);
  CHECK(g.figure_uid == f.figure_uid);
  CHECK(g.figure_gid == f.figure_gid);
  CHECK(g.figure_chromium_sandbox == f.figure_chromium_sandbox);
  CHECK(g.figure_webgl == f.figure_webgl);
  CHECK(g.figure_max_bytes == f.figure_max_bytes);
  CHECK(g.figure_max_depth == f.figure_max_depth);
  CHECK(g.figure_heap_mb == f.figure_heap_mb);
  CHECK(g.figure_stderr_keep_bytes == f.figure_stderr_keep_bytes);
  // Every field really changed from its default (so the comparison above compared something).
  CHECK(r.sandbox_uid_base == 70000u);
  CHECK(g.figure_heap_mb == 256u);
}
