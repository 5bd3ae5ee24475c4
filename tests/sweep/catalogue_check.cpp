// Checks one recorded sweep of tests/catalogue (SWEEP_DB, SWEEP_LABEL) against the outcomes the
// catalogue's README documents, file by file. Run by ctest after `plotq sweep run` (see
// CMakeLists.txt); the same expectations hold for the bare and the sandboxed sweep.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>

#include "runs/sweep_files.hpp"
#include "sandbox/figure_renderer.hpp"
#include "store/sweeps.hpp"

using namespace plotq;

namespace {

struct Expected {
  std::string reason_class;  // "ok" for a render
  std::string detail;        // canvas_size: the measured size
  int width = 0, height = 0;  // renders: the canvas
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) FAIL(std::string(name) + " is not set (run through ctest)");
  return v;
}

}  // namespace

TEST_CASE("catalogue: every file has its documented outcome") {
  std::string db_path = env("SWEEP_DB");
  std::string label = env("SWEEP_LABEL");

  boost::asio::io_context io;
  bool figures = sandbox::FigureRenderer(io, sandbox::figure_config_from_env()).available();
  std::string plotly = figures ? "ok" : "runtime_unavailable";
  const std::string p = "plots/";
  const std::string py = "/implementations/python/";
  // tests/catalogue/README.md: the fail-* specs fail for known reasons, everything else renders.
  std::map<std::string, Expected> expected = {
      {p + "bar-basic" + py + "matplotlib.py", {"ok", "", 3200, 1800}},
      {p + "fail-attribute" + py + "matplotlib.py", {"AttributeError", ""}},
      {p + "fail-missing-library" + py + "matplotlib.py", {"ModuleNotFoundError", ""}},
      {p + "fail-no-output" + py + "matplotlib.py", {"no_output", ""}},
      {p + "fail-value-error" + py + "seaborn.py", {"ValueError", ""}},
      {p + "fail-wrong-size" + py + "matplotlib.py", {"canvas_size", "800x600"}},
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

  auto files = runs::find_sweep_files(PLOTQ_SOURCE_DIR "/tests/catalogue", runs::kDefaultSweepGlob, {});
  std::map<std::string, std::string> hash;
  for (std::size_t i = 0; i < files.size(); ++i) hash[files[i].rel_path] = runs::load_sweep_task(files[i], i).sha256;
  // A catalogue file without an expectation here is an error: add it to the table (and the README).
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
    if (!e.detail.empty()) CHECK(r.detail == e.detail);
  }
}
