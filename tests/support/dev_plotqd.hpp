// A real plotqd for route and CLI tests: a fresh SQLite file in a temp dir, development mode (no
// tokens, loopback callers), the rate window opened wide; and the ledger rows of one job id read
// back from that file. Header-only; the test target links plotq_store.
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/ledger.hpp"
#include "tests/support/test_client.hpp"

namespace plotq::test {

// A matplotlib plot in the catalogue's shape: 3200x1800, plot-<theme>.png.
inline const std::string kLinePlot =
    "import os\nimport matplotlib.pyplot as plt\nTHEME = os.getenv('ANYPLOT_THEME', 'light')\n"
    "fig, ax = plt.subplots(figsize=(16, 9), dpi=200)\nax.plot([1, 2, 3], [3, 1, 2])\n"
    "fig.savefig(f'plot-{THEME}.png', dpi=200)\n";

struct DevPlotqd {
  TempDir dir;
  Plotqd d;
  DevPlotqd()
      : d(PLOTQD_BINARY, {{"PLOTQ_DB", dir.file("plotq.db")},
                          {"PLOTQ_ENVIRONMENT", "development"},
                          {"PLOTQ_RUNS_PER_MINUTE", "10000"}}) {
    REQUIRE(d.wait_listening(30s));
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(d.port()); }
  std::vector<plotq::store::LedgerEntry> ledger(const std::string& job_id) {
    auto db = plotq::store::Db::open(dir.file("plotq.db"));
    plotq::store::LedgerQuery q;
    q.job_id = job_id;
    return plotq::store::ledger::query(*db, q);
  }
};

}  // namespace plotq::test
