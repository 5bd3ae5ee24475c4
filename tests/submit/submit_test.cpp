// plotq submit, as an operator uses it: a snippet or a plot file through a running plotqd, the
// table or the PNGs written where asked, and an exit code that says what happened
// (0 ok, 1 ran and failed or refused, 2 bad arguments, 3 no answer).
#include <catch2/catch.hpp>

#include <filesystem>

#include "tests/support/cli_run.hpp"
#include "tests/support/dev_plotqd.hpp"
#include "tests/support/scratch_dir.hpp"

using namespace plotq::test;

namespace {

const std::string kTwoRows = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n";
// Refused (the validator, else the guard, stops the shell): a run that ends without a table.
const std::string kShell =
    "import os\nimport pandas as pd\nos.system('touch /tmp/x')\ndf = pd.DataFrame({'x': [1]})\n";
using Server = DevPlotqd;
const std::string& kLine = kLinePlot;

}  // namespace

TEST_CASE("submit data: the table is written to --out and the run is in the ledger under its job id") {
  Server s;
  ScratchDir w("plotq-submit");
  w.write("two.py", kTwoRows);
  auto r = run_cli(PLOTQ_CLI_BINARY, w.path.string(),
                   "submit data " + w.file("two.py") + " --server " + s.url() + " --job-id sub-two --out " +
                       w.file("two.csv"));
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  CHECK(contains(r.out, "job sub-two: ok"));
  CHECK(contains(r.out, "2 rows x 2 columns"));
  CHECK(slurp(w.file("two.csv")) == "x,y\n1,3.5\n2,4.5\n");
  CHECK_FALSE(std::filesystem::exists(w.file("two.csv.part")));
  auto rows = s.ledger("sub-two");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].outcome == plotq::store::RunOutcome::ok);
}

TEST_CASE("submit data: a refused snippet exits 1 with the reason - and no table is written") {
  Server s;
  ScratchDir w("plotq-submit");
  w.write("shell.py", kShell);
  auto r = run_cli(PLOTQ_CLI_BINARY, w.path.string(),
                   "submit data " + w.file("shell.py") + " --server " + s.url() + " --out " + w.file("t.csv"));
  INFO(r.out << r.err);
  CHECK(r.rc == 1);
  CHECK(contains(r.out, ": failed (reason "));
  CHECK_FALSE(contains(r.out, "reason none"));
  CHECK_FALSE(std::filesystem::exists(w.file("t.csv")));
}

TEST_CASE("submit render: one PNG per theme in --out, named after the file") {
  Server s;
  ScratchDir w("plotq-submit");
  w.write("line.py", kLine);
  std::filesystem::create_directories(w.file("out"));
  auto r = run_cli(PLOTQ_CLI_BINARY, w.path.string(),
                   "submit render " + w.file("line.py") + " --server " + s.url() +
                       " --themes light,dark --job-id sub-line --out " + w.file("out"));
  INFO(r.out << r.err);
  CHECK(r.rc == 0);
  for (const std::string theme : {"light", "dark"}) {
    INFO(theme);
    CHECK(contains(r.out, "sub-line " + theme + ": ok (reason none, 3200 x 1800 px"));
    std::string png = slurp(w.file("out/line-" + theme + ".png"));
    REQUIRE(png.size() > 1000);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  }
  CHECK(s.ledger("sub-line").size() == 2);  // the library was guessed (matplotlib): one row a theme
}

TEST_CASE("submit: bad arguments exit 2, a server that does not answer exits 3") {
  ScratchDir w("plotq-submit");
  w.write("two.py", kTwoRows);
  std::filesystem::create_symlink(w.file("two.py"), w.file("link.py"));
  auto missing = run_cli(PLOTQ_CLI_BINARY, w.path.string(), "submit data " + w.file("none.py"));
  CHECK(missing.rc == 2);
  CHECK(contains(missing.err, "not a readable regular file"));
  auto link = run_cli(PLOTQ_CLI_BINARY, w.path.string(), "submit data " + w.file("link.py"));
  CHECK(link.rc == 2);  // a symlink is not followed
  auto mode = run_cli(PLOTQ_CLI_BINARY, w.path.string(), "submit table " + w.file("two.py"));
  CHECK(mode.rc == 2);
  auto theme_for_data = run_cli(PLOTQ_CLI_BINARY, w.path.string(), "submit data " + w.file("two.py") + " --themes dark");
  CHECK(theme_for_data.rc == 2);
  auto dead = run_cli(PLOTQ_CLI_BINARY, w.path.string(),
                      "submit data " + w.file("two.py") + " --server http://127.0.0.1:9 --timeout 2");
  CHECK(dead.rc == 3);
  CHECK(contains(dead.err, "no answer from http://127.0.0.1:9"));
}

TEST_CASE("submit render: a server refusal exits 1 with the HTTP status and its code") {
  Server s;
  ScratchDir w("plotq-submit");
  w.write("line.py", kLine);
  auto r = run_cli(PLOTQ_CLI_BINARY, w.path.string(),
                   "submit render " + w.file("line.py") + " --server " + s.url() + " --themes light,sepia");
  INFO(r.out << r.err);
  CHECK(r.rc == 1);
  CHECK(contains(r.out, "refused: HTTP 422 invalid_job"));
}
