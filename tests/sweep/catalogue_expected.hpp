// The documented outcome of every file of tests/catalogue (its README's table), and a Catch2 check
// of one recorded sweep against it, file by file. Used by sweep_catalogue_check (the ctest gate,
// bare and sandbox) and by the --server test.
#pragma once
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <map>
#include <string>

#include "runs/render_interpret.hpp"
#include "runs/runtime.hpp"
#include "sweep/files.hpp"
#include "sandbox/figure_renderer.hpp"
#include "store/sweeps.hpp"

namespace plotq::sweep_test {

struct Expected {
  std::string reason_class;   // "ok" for a render
  int width = 0, height = 0;  // renders: the PNG's size
  std::string canvas;         // renders: "exact" (3200x1800 or 2400x2400) or "off" (issue 14)
};

inline std::map<std::string, Expected> catalogue_expected() {
  boost::asio::io_context io;
  bool figures = sandbox::FigureRenderer(io, sandbox::figure_config_from_env()).available();
  // Figure mode (plotly, bokeh) needs the host's Chromium in bare mode too (the bare shim's JSON
  // is drawn by the same FigureRenderer); without it both modes answer runtime_unavailable.
  std::string figure = figures ? "ok" : "runtime_unavailable";
  const std::string p = "plots/";
  const std::string py = "/implementations/python/";
  const Expected wide{"ok", 3200, 1800, "exact"};
  const Expected square{"ok", 2400, 2400, "exact"};
  const Expected wide_figure{figure, 3200, 1800, "exact"};
  const Expected square_figure{figure, 2400, 2400, "exact"};
  // tests/catalogue/README.md: the fail-* specs fail for known reasons, the canvas-off* specs
  // render off the canvas with their own size, everything else renders on a canvas.
  return {
      {p + "area-stacked" + py + "matplotlib.py", wide},
      {p + "bar-basic" + py + "altair.py", wide},
      {p + "bar-basic" + py + "bokeh.py", wide_figure},
      {p + "bar-basic" + py + "letsplot.py", wide},
      {p + "bar-basic" + py + "matplotlib.py", wide},
      {p + "bar-basic" + py + "plotly.py", wide_figure},
      {p + "bar-basic" + py + "pygal.py", wide},
      {p + "box-square" + py + "plotnine.py", square},
      {p + "canvas-off" + py + "matplotlib.py", {"ok", 800, 600, "off"}},
      {p + "canvas-off-tight" + py + "seaborn.py", {"ok", 3972, 2413, "off"}},
      {p + "fail-attribute" + py + "matplotlib.py", {"AttributeError", 0, 0, ""}},
      {p + "fail-missing-library" + py + "matplotlib.py", {"ModuleNotFoundError", 0, 0, ""}},
      {p + "fail-no-output" + py + "matplotlib.py", {"no_output", 0, 0, ""}},
      {p + "fail-value-error" + py + "seaborn.py", {"ValueError", 0, 0, ""}},
      {p + "heatmap-basic" + py + "seaborn.py", wide},
      {p + "heatmap-square" + py + "altair.py", square},
      {p + "heatmap-square" + py + "bokeh.py", square_figure},
      {p + "heatmap-square" + py + "letsplot.py", square},
      {p + "heatmap-square" + py + "plotly.py", square_figure},
      {p + "histogram-basic" + py + "matplotlib.py", wide},
      {p + "histogram-stacked" + py + "seaborn.py", wide},
      {p + "line-basic" + py + "altair.py", wide},
      {p + "line-basic" + py + "matplotlib.py", wide},
      {p + "line-basic" + py + "plotnine.py", wide},
      {p + "line-basic" + py + "pygal.py", wide},
      {p + "pie-square" + py + "matplotlib.py", square},
      {p + "pie-square" + py + "pygal.py", square},
      {p + "scatter-basic" + py + "bokeh.py", wide_figure},
      {p + "scatter-basic" + py + "letsplot.py", wide},
      {p + "scatter-basic" + py + "matplotlib.py", wide},
      {p + "scatter-basic" + py + "plotly.py", wide_figure},
      {p + "scatter-basic" + py + "plotnine.py", wide},
      {p + "scatter-basic" + py + "seaborn.py", wide},
      {p + "subplots-basic" + py + "plotly.py", wide_figure},
      {p + "violin-basic" + py + "seaborn.py", wide},
  };
}

// The JavaScript snippets of tests/catalogue (plots/<spec>/implementations/javascript/*), by the
// README's rule: a *-square spec renders 2400x2400, fail-js-error raises a TypeError, fail-js-blank
// draws nothing (blank), every other one renders 3200x1800; a library the figure renderer cannot
// draw here is runtime_unavailable in both modes.
inline std::map<std::string, Expected> catalogue_js_expected() {
  boost::asio::io_context io;
  sandbox::FigureRenderer fr(io, sandbox::figure_config_from_env());
  std::map<std::string, Expected> out;
  for (const auto& f : runs::find_sweep_files(PLOTQ_SOURCE_DIR "/tests/catalogue", runs::kJavaScriptSweepGlob, {})) {
    const std::string spec = f.rel_path.substr(6, f.rel_path.find('/', 6) - 6);  // after "plots/"
    Expected e{"ok", 3200, 1800, "exact"};
    if (spec.size() > 7 && spec.compare(spec.size() - 7, 7, "-square") == 0) e = {"ok", 2400, 2400, "exact"};
    if (spec == "fail-js-error") e = {"TypeError", 0, 0, ""};
    if (spec == "fail-js-blank") e = {"blank", 0, 0, ""};
    if (!fr.available(f.library)) e = {"runtime_unavailable", 0, 0, ""};
    out[f.rel_path] = e;
  }
  return out;
}

// The R files of tests/catalogue (plots/<spec>/implementations/r/ggplot2.R), by the README's
// table: bar-basic and scatter-basic 3200x1800, box-square 2400x2400, canvas-off 1050x750 off the
// canvas, fail-r-error a simpleError, fail-no-output no_output; without the R runtime (runtime/r)
// every one is runtime_unavailable in both modes.
inline std::map<std::string, Expected> catalogue_r_expected() {
  const bool r = runs::render_support("ggplot2", runs::Runtime{}, nullptr) == runs::Outcome::ok;
  const std::string p = "plots/";
  const std::string rr = "/implementations/r/ggplot2.R";
  auto e = [&](Expected x) { return r ? x : Expected{"runtime_unavailable", 0, 0, ""}; };
  return {
      {p + "bar-basic" + rr, e({"ok", 3200, 1800, "exact"})},
      {p + "box-square" + rr, e({"ok", 2400, 2400, "exact"})},
      {p + "canvas-off" + rr, e({"ok", 1050, 750, "off"})},
      {p + "fail-no-output" + rr, e({"no_output", 0, 0, ""})},
      {p + "fail-r-error" + rr, e({"simpleError", 0, 0, ""})},
      {p + "scatter-basic" + rr, e({"ok", 3200, 1800, "exact"})},
  };
}

// The canvas column of a sweep's rows (migrations/0005_runtime_ids.sql), by "path theme", read
// with SQL so that the check does not depend on how the store's row struct spells it.
inline std::map<std::string, std::string> sweep_canvas(store::Db& db, std::int64_t sweep_id) {
  std::map<std::string, std::string> out;
  SQLite::Statement q(db.sql(), "SELECT path, theme, canvas FROM sweep_results WHERE sweep_id = ?");
  q.bind(1, static_cast<int64_t>(sweep_id));
  while (q.executeStep()) out[q.getColumn(0).getString() + " " + q.getColumn(1).getString()] =
      q.getColumn(2).isNull() ? "" : q.getColumn(2).getString();
  return out;
}

// Checks the sweep `label` in the database at db_path: done, every catalogue file recorded in every
// theme with its expected outcome and its current content hash.
// language: python (the default), javascript (--language javascript) or r (--language r).
inline void check_catalogue_sweep(const std::string& db_path, const std::string& label, const std::string& language) {
  const bool javascript = language == "javascript";
  auto expected = javascript ? catalogue_js_expected() : language == "r" ? catalogue_r_expected() : catalogue_expected();
  auto files = runs::find_sweep_files(PLOTQ_SOURCE_DIR "/tests/catalogue",
                                      javascript      ? runs::kJavaScriptSweepGlob
                                      : language == "r" ? runs::kRSweepGlob
                                                        : runs::kDefaultSweepGlob,
                                      {});
  if (language == "r") CHECK(files.size() >= 3);  // issue 35: at least three R files of our own
  if (javascript) CHECK(files.size() >= 15);  // three specs of each of the five libraries at least
  std::map<std::string, std::string> hash;
  for (std::size_t i = 0; i < files.size(); ++i) hash[files[i].rel_path] = runs::load_sweep_task(files[i], i).sha256;
  // A catalogue file without an expectation is an error: add it to the table (and the README).
  for (const auto& f : files) {
    INFO(f.rel_path);
    CHECK(expected.count(f.rel_path) == 1);
  }

  store::Options o;
  o.read_only = true;
  auto db = store::Db::open(db_path, o);
  auto sweep = store::sweeps::find(*db, label);
  REQUIRE(sweep);
  CHECK(sweep->state == "done");
  CHECK(sweep->files_total == static_cast<int>(files.size()));
  auto rows = store::sweeps::results(*db, sweep->id);
  auto canvas = sweep_canvas(*db, sweep->id);
  CHECK(rows.size() == expected.size() * (sweep->themes.find(',') == std::string::npos ? 1 : 2));
  for (const auto& r : rows) {
    INFO(label << ": " << r.path << " " << r.theme << " -> " << store::to_string(r.outcome) << " " << r.reason_class << " "
               << r.detail.value_or(""));
    auto it = expected.find(r.path);
    REQUIRE(it != expected.end());
    const Expected& e = it->second;
    CHECK(r.reason_class == e.reason_class);
    CHECK(r.sha256 == hash[r.path]);
    if (e.reason_class == "ok") {
      CHECK(r.outcome == store::SweepOutcome::render);
      CHECK(r.width == e.width);
      CHECK(r.height == e.height);
      CHECK(r.png_bytes.value_or(0) > 1000);
      // A PNG off the canvas is a render with canvas "off", never a failure (issue 14).
      CHECK(canvas[r.path + " " + r.theme] == e.canvas);
    } else {
      CHECK(r.outcome == store::SweepOutcome::fail);
      CHECK_FALSE(r.png_bytes);
      CHECK(canvas[r.path + " " + r.theme] == "");
    }
  }
}

inline void check_catalogue_sweep(const std::string& db_path, const std::string& label, bool javascript = false) {
  check_catalogue_sweep(db_path, label, std::string(javascript ? "javascript" : "python"));
}

}  // namespace plotq::sweep_test
