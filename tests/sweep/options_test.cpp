// plotq sweep run's decisions before anything runs (sweep/options.hpp, sweep/policy.hpp): a new
// sweep's settings and usage errors, a resume against the stored sweep, the launcher policy.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "sweep/options.hpp"
#include "sweep/policy.hpp"

using namespace plotq;
using namespace plotq::runs;

namespace {

const std::time_t kNoon = 1767268800;  // 2026-01-01T12:00:00Z

std::string error_of(SweepRunArgs a) { return new_sweep_settings(a, kNoon).error; }

store::Sweep stored() {
  store::Sweep s;
  s.label = "nightly";
  s.mode = "sandbox";
  s.root = "/cat";
  s.glob = "plots/*/implementations/python/*.py";
  s.libraries = "plotly,seaborn";
  s.themes = "light,dark";
  s.timeout_s = 60;
  return s;
}

SweepFile file(const std::string& library) {
  SweepFile f;
  f.rel_path = library + ".py";
  f.library = library;
  return f;
}

}  // namespace

TEST_CASE("sweep options: the defaults of a new sweep", "[options]") {
  NewSweepSettings s = new_sweep_settings({.dir = "cat"}, kNoon);
  REQUIRE(s.error.empty());
  CHECK(s.sweep.mode == "sandbox");
  CHECK_FALSE(s.sweep.server_url);
  CHECK(s.sweep.glob == kDefaultSweepGlob);
  CHECK_FALSE(s.sweep.libraries);
  CHECK(s.sweep.themes == "light,dark");
  CHECK(s.sweep.timeout_s == 60);
  CHECK(s.sweep.jobs == 1);
  CHECK(s.sweep.label == "sweep-20260101-120000");
}

TEST_CASE("sweep options: given values are kept and lists normalised", "[options]") {
  NewSweepSettings s = new_sweep_settings({.dir = "cat", .glob = "*/*.py", .library = "plotly,,seaborn,",
                                           .themes = "dark", .label = "mine", .timeout = "7.5",
                                           .server = "http://127.0.0.1:8080", .jobs = 3},
                                          kNoon);
  REQUIRE(s.error.empty());
  CHECK(s.sweep.glob == "*/*.py");
  CHECK(s.sweep.libraries == "plotly,seaborn");
  CHECK(s.sweep.themes == "dark");
  CHECK(s.sweep.label == "mine");
  CHECK(s.sweep.timeout_s == 7.5);
  CHECK(s.sweep.server_url == "http://127.0.0.1:8080");
  CHECK(s.sweep.jobs == 3);
  CHECK(new_sweep_settings({.dir = "cat", .mode = "bare"}, kNoon).sweep.mode == "bare");
}

TEST_CASE("sweep options: each bad value is its usage error", "[options]") {
  CHECK(error_of({.mode = "docker"}) == "--mode is sandbox or bare");
  CHECK(error_of({.mode = "bare", .server = "http://x"}) == "--server goes with --mode sandbox");
  CHECK(error_of({.server = "https://x"}) == "--server must be an http:// URL");
  CHECK(error_of({.themes = ","}) == "--themes is one or two of light,dark");
  CHECK(error_of({.themes = "light,dark,light"}) == "--themes is one or two of light,dark");
  CHECK(error_of({.themes = "sepia"}) == "unknown theme 'sepia'");
  CHECK(error_of({.themes = "dark,dark"}) == "--themes must be distinct");
  for (const char* t : {"0", "-1", "121", "5s", "nan"}) {
    INFO(t);
    CHECK(error_of({.timeout = t}) == "--timeout must be a number of seconds in (0, 120]");
  }
  CHECK(error_of({.timeout = "120"}).empty());
  CHECK(error_of({.label = "a b"}) == "--label must be 1..64 of [A-Za-z0-9._-]");
  CHECK(error_of({.label = std::string(65, 'a')}) == "--label must be 1..64 of [A-Za-z0-9._-]");
  // Reported in that order: the first bad value wins.
  CHECK(error_of({.themes = "sepia", .timeout = "0", .mode = "docker"}) == "--mode is sandbox or bare");
  CHECK(error_of({.themes = "sepia", .timeout = "0"}) == "unknown theme 'sepia'");
  CHECK(new_sweep_settings({.mode = "docker"}, kNoon).sweep.label.empty());
}

TEST_CASE("sweep resume: the same or no settings may go on", "[options]") {
  CHECK_FALSE(resume_difference(stored(), {.resume = "nightly"}, ""));
  CHECK_FALSE(resume_difference(stored(),
                                {.glob = "plots/*/implementations/python/*.py", .library = "plotly,seaborn",
                                 .themes = "light,dark", .label = "nightly", .timeout = "60.0", .mode = "sandbox",
                                 .resume = "nightly"},
                                "/cat"));
}

TEST_CASE("sweep resume: a setting that decides outcomes may not change", "[options]") {
  auto diff = [](SweepRunArgs a, const std::string& root = "") { return resume_difference(stored(), a, root); };
  CHECK(diff({}, "/other")->option == "DIR");
  CHECK(diff({.glob = "*.py"})->option == "--glob");
  CHECK(diff({.library = "plotly"})->option == "--library");
  CHECK(diff({.themes = "dark,light"})->option == "--themes");
  CHECK(diff({.mode = "bare"})->option == "--mode");
  CHECK(diff({.server = "http://x"})->option == "--server");
  CHECK(diff({.label = "other"})->option == "--label");
  auto t = diff({.timeout = "30"});
  REQUIRE(t);
  CHECK(t->option == "--timeout");
  CHECK(t->given == "30");
  CHECK(t->stored == "60.000");
  auto g = diff({.glob = "*.py"});
  CHECK(g->given == "*.py");
  CHECK(g->stored == "plots/*/implementations/python/*.py");
  // The first difference is the one reported.
  CHECK(diff({.glob = "*.py", .mode = "bare"}, "/other")->option == "DIR");
  CHECK(diff({.timeout = "30", .server = "http://x"})->option == "--server");
}

TEST_CASE("sweep resume: a timeout that is not a number is an error once the rest agrees", "[options]") {
  CHECK_THROWS_AS(resume_difference(stored(), {.timeout = "soon"}, ""), std::invalid_argument);
  CHECK(resume_difference(stored(), {.glob = "*.py", .timeout = "soon"}, "")->option == "--glob");
}

TEST_CASE("sweep options: lists split and join", "[options]") {
  CHECK(split_list("a,,b,") == std::vector<std::string>{"a", "b"});
  CHECK(split_list("").empty());
  CHECK(join({"a", "b"}) == "a,b");
  CHECK(join({}).empty());
}

TEST_CASE("sweep policy: what the pending files need", "[options]") {
  PendingWork w = pending_work({file("seaborn"), file("plotly"), file("bokeh"), file("nosuch")});
  CHECK(w.any_plot);  // seaborn, and a stem no library has counts as plot mode
  CHECK(w.figure_files == 2);
  PendingWork figures_only = pending_work({file("plotly")});
  CHECK_FALSE(figures_only.any_plot);
  CHECK(figures_only.figure_files == 1);
  CHECK_FALSE(pending_work({}).any_plot);
}

TEST_CASE("sweep policy: the launcher warms what the files need unless the operator chose", "[options]") {
  sandbox::Config c;
  c.sandbox_nice = 10;
  c.warm_modes = {"raw", "data", "plot", "figure"};
  const std::size_t hidden = c.hidden_paths.size();
  apply_sandbox_policy(c, {true, 0}, "/var/db", {});
  CHECK(c.hidden_paths.size() == hidden + 1);
  CHECK(c.hidden_paths.back() == "/var/db");
  CHECK(c.sandbox_nice == 0);
  CHECK(c.warm_modes == std::vector<std::string>{"plot"});
  sandbox::Config d;
  apply_sandbox_policy(d, {true, 3}, "/var/db", {});
  CHECK(d.warm_modes == std::vector<std::string>{"plot", "figure"});
  sandbox::Config e;
  apply_sandbox_policy(e, {false, 0}, "/var/db", {});
  CHECK(e.warm_modes.empty());
  sandbox::Config r;  // R files: the R zygote
  apply_sandbox_policy(r, {true, 0, 0, true}, "/var/db", {});
  CHECK(r.warm_modes == std::vector<std::string>{"plot", "r"});
  sandbox::Config chosen;
  chosen.sandbox_nice = 7;
  chosen.warm_modes = {"raw"};
  apply_sandbox_policy(chosen, {true, 3}, "/var/db", {.sandbox_nice = true, .warm_modes = true});
  CHECK(chosen.sandbox_nice == 7);
  CHECK(chosen.warm_modes == std::vector<std::string>{"raw"});
  CHECK(chosen.hidden_paths.back() == "/var/db");
}

TEST_CASE("sweep policy: spare pages and the stagger", "[options]") {
  CHECK(sweep_figure_spares(2, 1) == 2);
  CHECK(sweep_figure_spares(2, 3) == 3);
  CHECK(sweep_figure_spares(2, 40) == kSweepFigureSpares);
  CHECK(sweep_figure_spares(8, 40) == 8);
  sandbox::Config c;
  c.zygote_start_timeout_s = 45;
  c.warm_modes = {"plot"};
  CHECK(warm_stagger_s(c, true) == 45);
  CHECK(warm_stagger_s(c, false) == 0);
  c.sandbox_cold = true;
  CHECK(warm_stagger_s(c, true) == 0);
  c.sandbox_cold = false;
  c.warm_modes.clear();
  CHECK(warm_stagger_s(c, true) == 0);
}
