// The documented outcome of every file of tests/catalogue (its README's table), and a Catch2 check
// of one recorded sweep against it, file by file. Used by sweep_catalogue_check (the ctest gate,
// bare and sandbox) and by the --server test.
#pragma once
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "runs/sweep_files.hpp"
#include "sandbox/figure_renderer.hpp"
#include "store/sweeps.hpp"

namespace plotq::sweep_test {

struct Expected {
  std::string reason_class;  // "ok" for a render
  std::string detail;        // canvas_size: the measured size (prefix)
  int width = 0, height = 0;  // renders: the canvas
};

inline std::map<std::string, Expected> catalogue_expected() {
  boost::asio::io_context io;
  bool figures = sandbox::FigureRenderer(io, sandbox::figure_config_from_env()).available();
  std::string plotly = figures ? "ok" : "runtime_unavailable";
  const std::string p = "plots/";
  const std::string py = "/implementations/python/";
  // tests/catalogue/README.md: the fail-* specs fail for known reasons, everything else renders.
  return {
      {p + "bar-basic" + py + "matplotlib.py", {"ok", "", 3200, 1800}},
      {p + "fail-attribute" + py + "matplotlib.py", {"AttributeError", ""}},
      {p + "fail-missing-library" + py + "matplotlib.py", {"ModuleNotFoundError", ""}},
      {p + "fail-no-output" + py + "matplotlib.py", {"no_output", ""}},
      {p + "fail-value-error" + py + "seaborn.py", {"ValueError", ""}},
      {p + "fail-wrong-size" + py + "matplotlib.py", {"canvas_size", "800"}},
      {p + "heatmap-basic" + py + "seaborn.py", {"ok", "", 3200, 1800}},
      {p + "histogram-basic" + py + "matplotlib.py", {"ok", "", 3200, 1800}},
      {p + "line-basic" + py + "matplotlib.py", {"ok", "", 3200, 1800}},
      {p + "pie-square" + py + "matplotlib.py", {"ok", "", 2400, 2400}},
      {p + "scatter-basic" + py + "matplotlib.py", {"ok", "", 3200, 1800}},
      {p + "scatter-basic" + py + "plotly.py", {plotly, "", 3200, 1800}},
      {p + "scatter-basic" + py + "seaborn.py", {"ok", "", 3200, 1800}},
      {p + "subplots-basic" + py + "plotly.py", {plotly, "", 3200, 1800}},
      {p + "violin-basic" + py + "seaborn.py", {"ok", "", 3200, 1800}},
  };
}

// Checks the sweep `label` in the database at db_path: done, every catalogue file recorded in every
// theme with its expected outcome and its current content hash.
inline void check_catalogue_sweep(const std::string& db_path, const std::string& label) {
  auto expected = catalogue_expected();
  auto files = runs::find_sweep_files(PLOTQ_SOURCE_DIR "/tests/catalogue", runs::kDefaultSweepGlob, {});
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
  CHECK(rows.size() == expected.size() * (sweep->themes.find(',') == std::string::npos ? 1 : 2));
  for (const auto& r : rows) {
    INFO(label << ": " << r.path << " " << r.theme << " -> " << r.outcome << " " << r.reason_class << " "
               << r.detail.value_or(""));
    auto it = expected.find(r.path);
    REQUIRE(it != expected.end());
    const Expected& e = it->second;
    CHECK(r.reason_class == e.reason_class);
    CHECK(r.sha256 == hash[r.path]);
    if (e.reason_class == "ok") {
      CHECK(r.outcome == "render");
      CHECK(r.width == e.width);
      CHECK(r.height == e.height);
      CHECK(r.png_bytes.value_or(0) > 1000);
    } else {
      CHECK(r.outcome == "fail");
      CHECK_FALSE(r.png_bytes);
    }
    // canvas_size names the measured size: "800x600" (in process, bare) or "800/3200" (the
    // server's measured/limit).
    if (!e.detail.empty()) CHECK(r.detail.value_or("").rfind(e.detail, 0) == 0);
  }
}

}  // namespace plotq::sweep_test
