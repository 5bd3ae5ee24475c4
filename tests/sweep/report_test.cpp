// sweep_report counts and sweep_diff semantics on rows read back from a real database.
#include <catch2/catch.hpp>

#include "runs/sweep_report.hpp"
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
  CHECK(r["by_library"][0] == nlohmann::json{{"library", "matplotlib"}, {"files", 1}, {"render", 1}, {"fail", 1}});
  CHECK(r["by_library"][1] == nlohmann::json{{"library", "plotly"}, {"files", 1}, {"render", 2}, {"fail", 0}});
  CHECK(r["by_library"][2] == nlohmann::json{{"library", "seaborn"}, {"files", 1}, {"render", 0}, {"fail", 2}});
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
