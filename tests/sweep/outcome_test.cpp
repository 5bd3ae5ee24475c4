// The outcome model: the exception class from a traceback, the harness vocabulary, rows from a
// ThemeRun, and file discovery.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "common/sha256.hpp"
#include "runs/outcome.hpp"
#include "sweep/bare.hpp"
#include "sweep/files.hpp"
#include "sweep/outcome.hpp"
#include "sandbox/config.hpp"
#include "tests/sweep/helpers.hpp"

using namespace plotq;
using namespace plotq::runs;
using plotq::sweep_test::TempDir;

TEST_CASE("outcome: traceback_class names the class of the last traceback, never the message") {
  CHECK(traceback_class("Traceback (most recent call last):\n"
                        "  File \"/tmp/x/plot.py\", line 3, in <module>\n"
                        "    from plotnine import aes\n"
                        "ModuleNotFoundError: No module named 'plotnine'\n") == "ModuleNotFoundError");
  // Qualified names as Python prints them; a message with a colon and several lines.
  CHECK(traceback_class("Traceback (most recent call last):\n"
                        "  File \"plot.py\", line 9, in <module>\n"
                        "    pd.read_csv('data.csv')\n"
                        "    ^^^^^^^^^^^^^^^^^^^^^^^\n"
                        "pandas.errors.ParserError: Error tokenizing data: C error\n"
                        "Expected 2 fields in line 3, saw 4\n") == "pandas.errors.ParserError");
  // A chained exception: the last traceback counts.
  CHECK(traceback_class("Traceback (most recent call last):\n"
                        "  File \"plot.py\", line 2, in <module>\n"
                        "KeyError: 'x'\n\n"
                        "During handling of the above exception, another exception occurred:\n\n"
                        "Traceback (most recent call last):\n"
                        "  File \"plot.py\", line 4, in <module>\n"
                        "ValueError: bad\n") == "ValueError");
  // Warnings before the traceback do not count.
  CHECK(traceback_class("/usr/lib/python3/dist-packages/x.py:12: UserWarning: careful\n"
                        "  warnings.warn(\n"
                        "Traceback (most recent call last):\n"
                        "  File \"plot.py\", line 1, in <module>\n"
                        "AttributeError: 'Axes' object has no attribute 'plott'\n") == "AttributeError");
  // A SyntaxError has no "Traceback" header.
  CHECK(traceback_class("  File \"/tmp/x/plot.py\", line 1\n"
                        "    def (\n"
                        "        ^\n"
                        "SyntaxError: invalid syntax\n") == "SyntaxError");
  // An exception without a message; CRLF line ends.
  CHECK(traceback_class("Traceback (most recent call last):\r\n  File \"p.py\", line 1\r\nStopIteration\r\n") ==
        "StopIteration");
  CHECK_FALSE(traceback_class(""));
  CHECK_FALSE(traceback_class("some output\nno traceback here\n"));
  CHECK_FALSE(traceback_class("Traceback (most recent call last):\n  File \"p.py\", line 1\n"));  // cut off
  CHECK_FALSE(traceback_class("Traceback (most recent call last):\n  File \"p.py\"\n!!! not a class\n"));
}

TEST_CASE("outcome: the bare class vocabulary is the harness's own (errors.build_class_table)") {
  sandbox::Config sc = sandbox::resolved(sandbox::Config{});
  ClassVocabulary v = load_class_vocabulary(PLOTQ_DEFAULT_PYTHON, sc.harness_dir);
  CHECK(v.classify("ValueError") == "ValueError");
  CHECK(v.classify("ModuleNotFoundError") == "ModuleNotFoundError");
  CHECK(v.classify("AttributeError") == "AttributeError");
  CHECK(v.classify("pandas.errors.ParserError") == "pandas.errors.ParserError");
  // Printed under its defining module, named by the harness under its public path.
  CHECK(v.classify("scipy.spatial._qhull.QhullError") == "scipy.spatial.QhullError");
  // A class the plot defined itself (printed bare, as __main__ classes are), or one not listed.
  CHECK(v.classify("MyPlotError") == "unlisted");
  CHECK(v.classify("matplotlib.some.Unknown") == "unlisted");
  // A name that merely looks like a builtin's module path is not the builtin.
  CHECK(v.classify("builtins.ValueError") == "unlisted");
}

TEST_CASE("outcome: rows from a ThemeRun (sandbox mode)") {
  store::SweepResult row;
  ThemeRun ok;
  ok.theme = "light";
  ok.png = std::string(5000, 'p');
  ok.width = 3200;
  ok.height = 1800;
  ok.exit_code = 0;
  ok.wall_s = 0.4;
  ok.cpu_s = 0.3;
  ok.max_rss_mb = 150;
  apply_theme_run(ok, row);
  CHECK(row.outcome == store::SweepOutcome::render);
  CHECK(row.reason == "ok");
  CHECK(row.png_bytes == 5000);
  CHECK(row.width == 3200);
  CHECK(row.max_rss_mb == Approx(150));
  CHECK(row.canvas == "exact");

  ThemeRun off = ok;  // a plot-mode PNG off the canvas: a render all the same
  off.canvas = "off";
  off.width = 4767;
  off.height = 2660;
  apply_theme_run(off, row);
  CHECK(row.outcome == store::SweepOutcome::render);
  CHECK(row.canvas == "off");
  CHECK(row.width == 4767);

  ThemeRun err;
  err.theme = "dark";
  err.outcome = Outcome::plot_error;
  err.error_class = "ValueError";
  err.exit_code = 12;
  apply_theme_run(err, row);
  CHECK(row.outcome == store::SweepOutcome::fail);
  CHECK(row.reason == "plot_error");
  CHECK(row.error_class == "ValueError");
  CHECK_FALSE(row.png_bytes);
  CHECK_FALSE(row.canvas);  // set for renders only

  ThemeRun size;  // figure mode only: the renderer sets the canvas itself
  size.outcome = Outcome::canvas_size;
  size.width = 800;
  size.height = 600;
  apply_theme_run(size, row);
  CHECK(row.reason == "canvas_size");
  CHECK_FALSE(row.error_class);
  CHECK(row.detail == "800x600");

  ThemeRun mem;
  mem.outcome = Outcome::memory;
  mem.measured = 1100;
  mem.limit = 1024;
  apply_theme_run(mem, row);
  CHECK(row.reason == "memory");
  CHECK(row.detail == "1100/1024");

  ThemeRun no_class;
  no_class.outcome = Outcome::plot_error;
  apply_theme_run(no_class, row);
  CHECK(row.error_class == "unlisted");

  // A name outside the schema's shape, given as a file's refusal, is kept as "unknown".
  plotq::runs::set_failure_named(row, "Weird Reason!");
  CHECK(row.outcome == store::SweepOutcome::fail);
  CHECK(row.reason == "unknown");
  plotq::runs::set_failure_named(row, "node_lost");
  CHECK(row.reason == "node_lost");
  plotq::runs::set_failure_named(row, "ok");  // a failure is never ok
  CHECK(row.reason == "unknown");
}

TEST_CASE("outcome: host failures are not outcomes of a file (runs/outcome.cpp's host column)") {
  for (const char* r : {"launcher", "sandbox_lost", "sandbox_unavailable", "low_memory", "io", "renderer_error", "cancelled", "stuck",
                        "exec_denied"}) {
    INFO(r);
    CHECK(plotq::runs::outcome_row(plotq::runs::outcome_named(r)).host);
  }
  // Everything a file can bring about by itself is its outcome: a hostile file must not stop a sweep.
  for (const char* r : {"ok", "plot_error", "plot_exit", "guard_refused", "timeout", "memory", "cpu", "crashed",
                        "no_output", "canvas_size", "harness_error", "internal_error", "runtime_unavailable",
                        "draw_failed", "Weird Reason!"}) {
    INFO(r);
    CHECK_FALSE(plotq::runs::outcome_row(plotq::runs::outcome_named(r)).host);
  }
}

TEST_CASE("files: the glob matches paths relative to the root, one level per '*', in path order") {
  TempDir t;
  t.write("plots/b/implementations/python/seaborn.py", "b");
  t.write("plots/a/implementations/python/matplotlib.py", "a");
  t.write("plots/a/implementations/python/plotly.py", "p");
  t.write("plots/a/implementations/python/notes.txt", "n");
  t.write("plots/a/implementations/r/ggplot.py", "r");
  t.write("plots/a/deeper/implementations/python/matplotlib.py", "d");
  std::filesystem::create_symlink(t.file("plots/a/implementations/python/matplotlib.py"),
                                  t.file("plots/b/implementations/python/link.py"));
  auto files = find_sweep_files(t.path.string(), kDefaultSweepGlob, {});
  REQUIRE(files.size() == 3);
  CHECK(files[0].rel_path == "plots/a/implementations/python/matplotlib.py");
  CHECK(files[0].library == "matplotlib");
  CHECK(files[1].library == "plotly");
  CHECK(files[2].rel_path == "plots/b/implementations/python/seaborn.py");
  CHECK(files[2].abs_path == t.file("plots/b/implementations/python/seaborn.py"));

  auto only = find_sweep_files(t.path.string(), kDefaultSweepGlob, {"seaborn", "plotly"});
  REQUIRE(only.size() == 2);
  CHECK(only[0].library == "plotly");
  CHECK(only[1].library == "seaborn");

  CHECK(find_sweep_files(t.path.string(), "plots/*/*/python/*.py", {}).size() == 3);
  CHECK(find_sweep_files(t.path.string(), "*.py", {}).empty());
  CHECK_THROWS(find_sweep_files(t.file("nope"), kDefaultSweepGlob, {}));
}

TEST_CASE("files: the library comes from the file stem through the library table (letsplot.py is lets-plot)") {
  // anyplot's own file names: altair, bokeh, letsplot, matplotlib, plotly, plotnine, pygal, seaborn.
  CHECK(library_of("plots/a/implementations/python/letsplot.py") == "lets-plot");
  CHECK(library_of("plots/a/implementations/python/lets-plot.py") == "lets-plot");
  for (const char* stem : {"altair", "bokeh", "matplotlib", "plotly", "plotnine", "pygal", "seaborn"})
    CHECK(library_of(std::string("x/") + stem + ".py") == stem);
  CHECK(library_of("x/chartjs.py") == "chartjs");  // kept: it answers invalid_library
  TempDir t;
  t.write("plots/a/implementations/python/letsplot.py", "l");
  t.write("plots/a/implementations/python/pygal.py", "p");
  auto all = find_sweep_files(t.path.string(), kDefaultSweepGlob, {});
  REQUIRE(all.size() == 2);
  CHECK(all[0].library == "lets-plot");
  // --library takes the name or the stem.
  for (const char* want : {"lets-plot", "letsplot"}) {
    INFO(want);
    auto only = find_sweep_files(t.path.string(), kDefaultSweepGlob, {want});
    REQUIRE(only.size() == 1);
    CHECK(only[0].library == "lets-plot");
  }
}

TEST_CASE("files: a task carries the hash, data.csv beside it, and the request caps") {
  TempDir t;
  std::string src = "import os\nprint('hi')\n";
  std::string p = t.write("a/matplotlib.py", src);
  auto task = load_sweep_task({"a/matplotlib.py", p, "matplotlib"}, 3);
  CHECK(task.index == 3);
  CHECK(task.source == src);
  CHECK(task.sha256 == sha256_hex(src));
  CHECK(task.data_csv.empty());
  CHECK_FALSE(task.refused);

  t.write("a/data.csv", "x,y\n1,2\n");
  task = load_sweep_task({"a/matplotlib.py", p, "matplotlib"}, 0);
  CHECK(task.data_csv == "x,y\n1,2\n");

  std::string big = t.write("b/matplotlib.py", std::string(kMaxRenderSourceChars + 1, 'x'));
  task = load_sweep_task({"b/matplotlib.py", big, "matplotlib"}, 0);
  CHECK(task.refused == "source_too_large");
  CHECK(task.sha256 == sha256_hex(std::string(kMaxRenderSourceChars + 1, 'x')));
  // Characters, not bytes: 2-byte characters up to the cap are fine.
  std::string wide;
  for (std::size_t i = 0; i < kMaxRenderSourceChars / 2; ++i) wide += "\xc3\xa9";
  std::string w = t.write("c/matplotlib.py", "# " + wide.substr(0, wide.size() - 4));
  CHECK_FALSE(load_sweep_task({"c/matplotlib.py", w, "matplotlib"}, 0).refused);

  std::string latin1 = t.write("f/matplotlib.py", "# caf\xe9\n");
  CHECK(load_sweep_task({"f/matplotlib.py", latin1, "matplotlib"}, 0).refused == "source_invalid");
  CHECK(valid_utf8("caf\xc3\xa9 \xf0\x9f\x98\x80"));
  CHECK_FALSE(valid_utf8("\xc0\xaf"));          // overlong
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));      // surrogate
  CHECK_FALSE(valid_utf8("\xe2\x82"));          // cut short

  std::string dir_csv = t.write("d/matplotlib.py", "x");
  std::filesystem::create_directory(t.file("d/data.csv"));
  CHECK(load_sweep_task({"d/matplotlib.py", dir_csv, "matplotlib"}, 0).refused == "unreadable");
  CHECK(load_sweep_task({"e/none.py", t.file("e/none.py"), "none"}, 0).refused == "unreadable");
}
