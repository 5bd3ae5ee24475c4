// A real plotqd for route and CLI tests: a fresh store (test_store.hpp: a SQLite file in a temp dir,
// or a PostgreSQL schema under PLOTQ_TEST_ENGINE=postgresql), development mode (no tokens, loopback
// callers), the rate window opened wide; and the ledger rows of one job id read back from that
// store. Header-only; the test target links plotq_store.
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/ledger.hpp"
#include "tests/support/test_client.hpp"
#include "tests/support/test_store.hpp"

namespace plotq::test {

// A matplotlib plot in the catalogue's shape: 3200x1800, plot-<theme>.png.
inline const std::string kLinePlot =
    "import os\nimport matplotlib.pyplot as plt\nTHEME = os.getenv('ANYPLOT_THEME', 'light')\n"
    "fig, ax = plt.subplots(figsize=(16, 9), dpi=200)\nax.plot([1, 2, 3], [3, 1, 2])\n"
    "fig.savefig(f'plot-{THEME}.png', dpi=200)\n";

struct DevPlotqd {
  TempDir dir;
  TestStore store{dir};
  Plotqd d;
  // extra: more PLOTQ_* settings (none of the three above).
  explicit DevPlotqd(Env extra = {})
      : d(PLOTQD_BINARY, with(extra, {{"PLOTQ_DB", store.target()},
                                      {"PLOTQ_ENVIRONMENT", "development"},
                                      {"PLOTQ_RUNS_PER_MINUTE", "10000"}})) {
    REQUIRE(d.wait_listening(30s));
  }
  static Env with(Env extra, const Env& base) {
    extra.insert(extra.begin(), base.begin(), base.end());
    return extra;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(d.port()); }
  std::vector<plotq::store::LedgerEntry> ledger(const std::string& job_id) {
    auto db = store.open();
    plotq::store::LedgerQuery q;
    q.job_id = job_id;
    return plotq::store::ledger::query(*db, q);
  }
};

}  // namespace plotq::test
