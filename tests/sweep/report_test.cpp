// sweep_report counts and sweep_diff semantics on rows read back from a real database.
#include <catch2/catch.hpp>
#include <map>

#include "sweep/report.hpp"
#include "tests/sweep/helpers.hpp"

using namespace plotq;
using namespace plotq::sweep_test;

namespace {

struct Fixture {
  TempDir t;
  std::unique_ptr<store::Db> db = migrated(t.file("p.db"));

  std::int64_t sweep(const std::string& label, const std::vector<std::vector<store::SweepResult>>& files,
                     const std::string& themes = "light") {
    std::int64_t id = store::sweeps::create(*db, make_sweep(label, "bare", themes), kNow);
    for (const auto& f : files) store::sweeps::record_file(*db, id, f, kNow);
    return id;
  }
  store::Sweep get(const std::string& label) { return *store::sweeps::find(*db, label); }
  std::vector<store::SweepResult> rows(const std::string& label) { return store::sweeps::results(*db, get(label).id); }
  nlohmann::json diff(const std::string& a, const std::string& b) {
    return runs::sweep_diff(get(a), rows(a), get(b), rows(b));
  }
};

std::vector<std::vector<store::SweepResult>> catalogue() {
  return {{render_row("a/matplotlib.py")},
          {fail_row("b/matplotlib.py", "plot_error", "ValueError")},
          {fail_row("c/seaborn.py", "no_output")},
          {render_row("d/plotly.py")}};
}

}  // namespace

TEST_CASE("report: counts by outcome, library and reason class, slowest files, totals") {
  Fixture f;
  store::SweepResult slow = render_row("s/matplotlib.py", "light");
  slow.wall_s = 9.0;
  slow.cpu_s = 8.0;
  slow.max_rss_mb = 300;
  store::SweepResult slow_dark = fail_row("s/matplotlib.py", "timeout", std::nullopt, "dark");
  slow_dark.wall_s = 12.0;
  store::SweepResult sb = fail_row("v/seaborn.py", "plot_error", "ValueError", "light");
  sb.library = "seaborn";
  store::SweepResult sb_dark = fail_row("v/seaborn.py", "plot_error", "ValueError", "dark");
  sb_dark.library = "seaborn";
  store::SweepResult pl = render_row("p/plotly.py", "light");
  pl.library = "plotly";
  store::SweepResult pl_dark = render_row("p/plotly.py", "dark");
  pl_dark.library = "plotly";
  f.sweep("r", {{slow, slow_dark}, {sb, sb_dark}, {pl, pl_dark}}, "light,dark");
  store::sweeps::end_session(*f.db, f.get("r").id, "done", 42.0, kNow + 60);

  nlohmann::json r = runs::sweep_report(f.get("r"), f.rows("r"), 2);
  CHECK(r["state"] == "done");
  CHECK(r["rows"] == 6);
  CHECK(r["files"]["done"] == 3);
  CHECK(r["files"]["all_render"] == 1);  // only the plotly file renders in both themes
  CHECK(r["outcomes"]["render"] == 3);
  CHECK(r["outcomes"]["fail"] == 3);
  REQUIRE(r["by_library"].size() == 3);
  auto lib = [](const char* name, int files, int render, int fail) {
    return nlohmann::json{{"library", name},         {"files", files},   {"render", render},
                          {"fail", fail},            {"canvas_exact", render}, {"canvas_off", 0},
                          {"off_sizes", nlohmann::json::array()}};
  };
  CHECK(r["by_library"][0] == lib("matplotlib", 1, 1, 1));
  CHECK(r["by_library"][1] == lib("plotly", 1, 2, 0));
  CHECK(r["by_library"][2] == lib("seaborn", 1, 0, 2));
  REQUIRE(r["by_reason"].size() == 2);
  CHECK(r["by_reason"][0] ==
        nlohmann::json{{"reason_class", "ValueError"}, {"reason", "plot_error"}, {"rows", 2}, {"files", 1}});
  CHECK(r["by_reason"][1]["reason_class"] == "timeout");
  REQUIRE(r["slowest"].size() == 2);
  CHECK(r["slowest"][0]["theme"] == "dark");
  CHECK(r["slowest"][0]["wall_s"] == 12.0);
  CHECK(r["slowest"][1]["wall_s"] == 9.0);
  CHECK(r["totals"]["elapsed_s"] == 42.0);
  CHECK(r["totals"]["wall_s"].get<double>() == Approx(9 + 12 + 4 * 1.5));
  CHECK(r["totals"]["cpu_s"].get<double>() == Approx(8 + 5 * 1.2));
  CHECK(r["totals"]["max_rss_mb"].get<double>() == Approx(300));
  CHECK(r["finished_at"] == "2026-10-14T09:31:05Z");

  nlohmann::json empty = runs::sweep_report(make_sweep("none"), {});
  CHECK(empty["rows"] == 0);
  CHECK(empty["totals"]["mean_wall_s"] == 0.0);
}

TEST_CASE("diff: identical outcomes give no difference, even when the content hash changed") {
  Fixture f;
  f.sweep("a", catalogue());
  auto b = catalogue();
  b[0][0].sha256 = std::string(64, 'b');  // edited file, same outcome
  b[1][0].wall_s = 99;                    // timings never count
  b[1][0].exit_code = 12;                 // nor exit codes (sandbox and bare differ there)
  f.sweep("b", b);
  nlohmann::json d = f.diff("a", "b");
  CHECK(d["count"] == 0);
  CHECK(d["compared"] == 4);
  CHECK(d["differences"].empty());
}

TEST_CASE("diff: a changed reason class or outcome is listed, with both hashes") {
  Fixture f;
  f.sweep("a", catalogue());
  auto b = catalogue();
  b[1][0].error_class = "KeyError";  // plot_error both times, another class
  b[2][0] = render_row("c/seaborn.py", "light", 'c');  // fail -> render, file edited
  f.sweep("b", b);
  nlohmann::json d = f.diff("a", "b");
  CHECK(d["count"] == 2);
  CHECK(d["compared"] == 4);
  REQUIRE(d["differences"].size() == 2);
  const auto& x = d["differences"][0];
  CHECK(x["path"] == "b/matplotlib.py");
  CHECK(x["kind"] == "changed");
  CHECK(x["a"]["reason_class"] == "ValueError");
  CHECK(x["b"]["reason_class"] == "KeyError");
  CHECK(x["hash_changed"] == false);
  const auto& y = d["differences"][1];
  CHECK(y["path"] == "c/seaborn.py");
  CHECK(y["a"]["outcome"] == "fail");
  CHECK(y["b"]["outcome"] == "render");
  CHECK(y["hash_changed"] == true);
  CHECK(y["b"]["sha256"] == std::string(64, 'c'));
}

TEST_CASE("diff: a reason other than plot_error compares by reason - a file in one run only is listed") {
  Fixture f;
  f.sweep("a", catalogue());
  auto b = catalogue();
  b[2][0] = fail_row("c/seaborn.py", "guard_refused");  // no_output -> guard_refused
  b.erase(b.begin() + 3);                               // d/plotly.py missing in b
  b.push_back({render_row("e/new.py")});               // e/new.py only in b
  f.sweep("b", b);
  nlohmann::json d = f.diff("a", "b");
  CHECK(d["count"] == 3);
  CHECK(d["compared"] == 3);
  std::map<std::string, std::string> kinds;
  for (const auto& x : d["differences"]) kinds[x["path"]] = x["kind"];
  CHECK(kinds == std::map<std::string, std::string>{
                     {"c/seaborn.py", "changed"}, {"d/plotly.py", "only_a"}, {"e/new.py", "only_b"}});
  for (const auto& x : d["differences"]) {
    if (x["kind"] == "only_a") CHECK(x["b"].is_null());
    if (x["kind"] == "only_b") CHECK(x["a"].is_null());
  }
  // Themes are matched too: a dark row only one sweep drew is a difference.
  Fixture g;
  g.sweep("light", {{render_row("a.py", "light")}});
  g.sweep("both", {{render_row("a.py", "light"), render_row("a.py", "dark")}}, "light,dark");
  nlohmann::json e = g.diff("light", "both");
  CHECK(e["count"] == 1);
  CHECK(e["differences"][0]["theme"] == "dark");
  CHECK(e["differences"][0]["kind"] == "only_b");
}

TEST_CASE("report: renders off the canvas count as renders, with the drift per library") {
  Fixture f;
  auto off = [](const std::string& path, const char* library, int w, int h) {
    store::SweepResult r = render_row(path);
    r.library = library;
    r.width = w;
    r.height = h;
    r.canvas = "off";
    return r;
  };
  store::SweepResult exact = render_row("a/matplotlib.py");
  exact.canvas = "exact";
  store::SweepResult pygal_fail = fail_row("f/pygal.py", "plot_error", "ValueError");
  pygal_fail.library = "pygal";
  f.sweep("d", {{exact},
                {off("b/matplotlib.py", "matplotlib", 4767, 2660)},
                {off("c/matplotlib.py", "matplotlib", 4767, 2660)},
                {off("d/matplotlib.py", "matplotlib", 1200, 800)},
                {off("e/pygal.py", "pygal", 800, 600)},
                {pygal_fail}});
  nlohmann::json r = runs::sweep_report(f.get("d"), f.rows("d"));
  CHECK(r["outcomes"]["render"] == 5);
  CHECK(r["outcomes"]["canvas_off"] == 4);
  CHECK(r["outcomes"]["fail"] == 1);
  REQUIRE(r["by_library"].size() == 2);
  const auto& m = r["by_library"][0];
  CHECK(m["library"] == "matplotlib");
  CHECK(m["render"] == 4);
  CHECK(m["canvas_exact"] == 1);
  CHECK(m["canvas_off"] == 3);
  CHECK(m["off_sizes"] == nlohmann::json::array({{{"size", "4767x2660"}, {"rows", 2}}, {{"size", "1200x800"}, {"rows", 1}}}));
  const auto& p = r["by_library"][1];
  CHECK(p["render"] == 1);
  CHECK(p["fail"] == 1);
  CHECK(p["canvas_off"] == 1);
  // The stored rows keep the canvas; a failure has none.
  for (const auto& row : f.rows("d")) CHECK(row.canvas.has_value() == (row.outcome == store::SweepOutcome::render));
}

TEST_CASE("diff: says whether the runtime changed, and each difference's cause") {
  Fixture f;
  auto make = [&](const std::string& label, const std::string& mode, std::optional<std::string> runtime,
                  std::vector<std::vector<store::SweepResult>> files) {
    store::Sweep s = make_sweep(label, mode);
    s.runtime_id = std::move(runtime);
    std::int64_t id = store::sweeps::create(*f.db, s, kNow);
    for (const auto& file : files) store::sweeps::record_file(*f.db, id, file, kNow);
  };
  auto changed = catalogue();
  changed[1][0].error_class = "KeyError";                  // same bytes, another class
  changed[2][0] = render_row("c/seaborn.py", "light", 'c');  // edited file
  make("old", "sandbox", "257f08b63c84", catalogue());
  make("new-runtime", "sandbox", "0123456789ab", changed);
  make("same-runtime", "sandbox", "257f08b63c84", changed);
  make("bare", "bare", "257f08b63c84", changed);
  make("unknown", "sandbox", std::nullopt, changed);

  auto causes = [&](const std::string& b) {
    nlohmann::json d = f.diff("old", b);
    std::map<std::string, std::string> out;
    for (const auto& x : d["differences"]) out[x["path"]] = x["cause"];
    return std::make_pair(d["runtime_changed"].get<bool>(), out);
  };
  // The file's own edit is the file's, whatever else changed.
  CHECK(causes("new-runtime") == std::make_pair(true, std::map<std::string, std::string>{
                                                          {"b/matplotlib.py", "runtime"}, {"c/seaborn.py", "file"}}));
  CHECK(causes("same-runtime").first == false);
  CHECK(causes("same-runtime").second.at("b/matplotlib.py") == "unexplained");
  CHECK(causes("bare").second.at("b/matplotlib.py") == "mode");
  CHECK(causes("unknown").first == true);  // nothing says it was the same runtime
  nlohmann::json d = f.diff("old", "new-runtime");
  CHECK(d["a"]["runtime_id"] == "257f08b63c84");
  CHECK(d["b"]["runtime_id"] == "0123456789ab");
  // A stored sweep keeps its runtime id.
  CHECK(f.get("old").runtime_id == "257f08b63c84");
  CHECK_FALSE(f.get("unknown").runtime_id);
  // The pure rule, with another plotq version and the same runtime.
  store::Sweep a = make_sweep("a", "sandbox"), b = make_sweep("b", "sandbox");
  a.runtime_id = b.runtime_id = "257f08b63c84";
  b.plotq_version = "other";
  CHECK(runs::diff_cause(false, a, b) == "plotq");
  CHECK(runs::diff_cause(true, a, b) == "file");
}
