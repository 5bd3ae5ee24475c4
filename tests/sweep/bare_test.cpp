// Bare mode with the configured runtime's interpreter (PLOTQ_DEFAULT_PYTHON, the venv the sandbox
// runs): environment and work dir, timeout and stop (the whole process group dies), exit classes,
// the PNG checks (none of the sandbox's rules: any size renders), and the plotly shim.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "sweep/backends.hpp"
#include "sweep/bare.hpp"
#include "sandbox/config.hpp"
#include "tests/sweep/helpers.hpp"

using namespace plotq;
using namespace plotq::runs;

namespace {

const ClassVocabulary& vocabulary() {
  static ClassVocabulary v =
      load_class_vocabulary(PLOTQ_DEFAULT_PYTHON, sandbox::resolved(sandbox::Config{}).harness_dir);
  return v;
}

// Python that writes a PNG header of w x h (IHDR only: the size check reads no more).
std::string png_writer(const std::string& name_expr, int w, int h) {
  return "import struct, zlib\n"
         "def _chunk(t, d):\n"
         "    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n"
         "with open(" + name_expr + ", 'wb') as _f:\n"
         "    _f.write(b'\\x89PNG\\r\\n\\x1a\\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', " +
         std::to_string(w) + ", " + std::to_string(h) + ", 8, 0, 0, 0, 0)) + _chunk(b'IEND', b''))\n";
}

struct Ran {
  BareRun run;
  store::SweepResult row;
};

Ran bare(const std::string& source, double timeout_s = 30, const std::string& csv = "",
         const std::string& theme = "light", bool plotly = false) {
  std::atomic<bool> stop{false};
  BareConfig c;
  Ran r;
  r.run = run_bare_python(c, source, csv, theme, plotly, timeout_s, stop);
  r.row.theme = theme;
  classify_bare(c, r.run, vocabulary(), "plot-" + theme + ".png", r.row);
  return r;
}

struct DirGuard {
  std::string dir;
  ~DirGuard() { remove_run_dir(dir); }
};

}  // namespace

TEST_CASE("bare: the file runs as plot.py in a fresh dir with ANYPLOT_THEME, MPLBACKEND=Agg, data.csv") {
  Ran r = bare(
      "import os, sys\n"
      "assert os.path.basename(os.getcwd()).startswith('plotq-sweep-'), os.getcwd()\n"
      "assert sorted(os.listdir('.')) == ['data.csv', 'plot.py'], os.listdir('.')\n"
      "assert open('data.csv').read() == 'x,y\\n1,2\\n'\n"
      "assert os.environ['MPLBACKEND'] == 'Agg'\n"
      "assert 'PLOTQ_DB' not in os.environ and 'PYTHONPATH' not in os.environ\n"
      // The runtime's own interpreter, not Debian's (the venv's python, with its packages).
      "assert sys.executable == '" PLOTQ_DEFAULT_PYTHON "', sys.executable\n"
      "assert sys.prefix != sys.base_prefix, sys.prefix\n" +
          png_writer("'plot-%s.png' % os.environ['ANYPLOT_THEME']", 3200, 1800),
      30, "x,y\n1,2\n", "dark");
  DirGuard g{r.run.dir};
  INFO(r.run.stderr_tail);
  CHECK(r.run.exit_code == 0);
  CHECK(r.row.outcome == store::SweepOutcome::render);
  CHECK(r.row.width == 3200);
  CHECK(r.row.height == 1800);
  CHECK(r.row.png_bytes > 0);
  CHECK(r.row.canvas == "exact");
  CHECK(r.run.wall_s > 0);
  CHECK(r.run.max_rss_mb > 1);
}

TEST_CASE("bare: a plot error is the exception class from the traceback, in the harness's names") {
  Ran r = bare("import sys\nsys.stderr.write('x' * 200000 + '\\n')\nd = {}\nd['missing']\n");
  DirGuard g{r.run.dir};
  CHECK(r.run.exit_code == 1);
  CHECK(r.row.outcome == store::SweepOutcome::fail);
  CHECK(r.row.reason == "plot_error");
  CHECK(r.row.error_class == "KeyError");  // found although 200 KB of stderr came first

  Ran own = bare("class PlotFailure(Exception):\n    pass\nraise PlotFailure('no')\n");
  DirGuard g2{own.run.dir};
  CHECK(own.row.error_class == "unlisted");

  Ran syn = bare("def (:\n");
  DirGuard g3{syn.run.dir};
  CHECK(syn.row.error_class == "SyntaxError");

  Ran pd = bare("import io, pandas\npandas.read_csv(io.StringIO('a,b\\n1,2\\n3,4,5,6\\n'))\n");
  DirGuard g4{pd.run.dir};
  CHECK(pd.row.error_class == "pandas.errors.ParserError");
}

TEST_CASE("bare: exit 0 without the PNG, a wrong canvas, a link, a non-PNG, a crash, an exit code") {
  Ran none = bare("print('drawn, never saved')\n");
  DirGuard g1{none.run.dir};
  CHECK(none.row.reason == "no_output");
  CHECK(none.row.exit_code == 0);

  // The control shares no sandbox rule: another size is a render off the canvas (was canvas_size,
  // which hid the sandbox's canvas refusals from the diff; issue 14).
  Ran small = bare(png_writer("'plot-light.png'", 800, 600));
  DirGuard g2{small.run.dir};
  CHECK(small.row.outcome == store::SweepOutcome::render);
  CHECK(small.row.reason == "ok");
  CHECK(small.row.canvas == "off");
  CHECK(small.row.width == 800);
  CHECK(small.row.height == 600);
  CHECK_FALSE(small.row.detail);

  Ran square = bare(png_writer("'plot-light.png'", 2410, 2390));  // within 16 px of 2400x2400
  DirGuard g3{square.run.dir};
  CHECK(square.row.outcome == store::SweepOutcome::render);
  CHECK(square.row.canvas == "exact");

  Ran link = bare(png_writer("'real.png'", 3200, 1800) + "import os\nos.symlink('real.png', 'plot-light.png')\n");
  DirGuard g4{link.run.dir};
  CHECK(link.row.reason == "output_rejected");

  Ran text = bare("open('plot-light.png', 'w').write('not a png at all, long enough to have a header')\n");
  DirGuard g5{text.run.dir};
  CHECK(text.row.reason == "output_rejected");
  CHECK(text.row.detail == "not a PNG");

  Ran big = bare("open('plot-light.png', 'wb').write(b'\\0' * (10 * 1024 * 1024 + 1))\n");
  DirGuard g6{big.run.dir};
  CHECK(big.row.reason == "output_too_large");

  Ran seg = bare("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n");
  DirGuard g7{seg.run.dir};
  CHECK(seg.row.reason == "crashed");
  CHECK(seg.row.signal == SIGSEGV);

  // A status the program chose (plot mode's plot_exit); sys.exit(0) is a normal end.
  Ran code = bare("import sys\nsys.exit(3)\n");
  DirGuard g8{code.run.dir};
  CHECK(code.row.reason == "plot_exit");
  CHECK(code.row.exit_code == 3);
  CHECK_FALSE(code.row.error_class);
  Ran text_exit = bare("import sys\nsys.exit('giving up')\n");
  DirGuard g9{text_exit.run.dir};
  CHECK(text_exit.row.reason == "plot_exit");
  Ran zero = bare(png_writer("'plot-light.png'", 3200, 1800) + "import sys\nsys.exit(0)\n");
  DirGuard g10{zero.run.dir};
  CHECK(zero.row.outcome == store::SweepOutcome::render);
}

TEST_CASE("bare: the timeout kills the whole process group, descendants included") {
  sweep_test::TempDir t;
  std::string pidfile = t.file("child.pid");
  auto start = std::chrono::steady_clock::now();
  Ran r = bare("import subprocess, time\n"
               "p = subprocess.Popen(['/bin/sleep', '60'])\n"
               "open('" + pidfile + "', 'w').write(str(p.pid))\n"
               "time.sleep(60)\n",
               1.0);
  DirGuard g{r.run.dir};
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.run.timed_out);
  CHECK(r.row.reason == "timeout");
  CHECK(took < 10);
  std::ifstream in(pidfile);
  pid_t child = 0;
  in >> child;
  REQUIRE(child > 0);
  // The grandchild was in the group: it must be dead within a moment (gone, or a zombie where
  // the container's init does not reap).
  auto dead = [](pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    auto paren = text.rfind(')');
    return text.empty() || (paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z');
  };
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = dead(child);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(gone);
}

TEST_CASE("bare: stop cancels a running file at once") {
  sweep_test::TempDir t;
  const std::string marker = t.file("started");
  std::atomic<bool> stop{false}, started{false};
  std::chrono::steady_clock::time_point stopped_at;
  std::thread stopper([&] {
    // Stopped once the file runs (it wrote its marker), not at a guess of when that is.
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
         !(started = std::filesystem::exists(marker)) && std::chrono::steady_clock::now() < until;)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a poll's pace
    stopped_at = std::chrono::steady_clock::now();
    stop = true;
  });
  BareRun r = run_bare_python(BareConfig{}, "import time\nopen('" + marker + "', 'w').close()\ntime.sleep(60)\n", "",
                              "light", false, 30, stop);
  const auto ended = std::chrono::steady_clock::now();
  stopper.join();
  remove_run_dir(r.dir);
  REQUIRE(started);
  CHECK(r.cancelled);
  CHECK_FALSE(r.timed_out);
  CHECK(std::chrono::duration<double>(ended - stopped_at).count() < 5);
}

TEST_CASE("bare: the figure runner (figure mode's own capture) writes plotly's JSON, with write_image's size in the layout") {
  Ran r = bare(
      "import plotly.graph_objects as go\n"
      "fig = go.Figure(go.Bar(x=['a', 'b'], y=[1, 2]))\n"
      "fig.write_image('plot-dark.png', width=1600, height=900, scale=2)\n",
      60, "", "dark", true);
  DirGuard g{r.run.dir};
  INFO(r.run.stderr_tail);
  REQUIRE(r.run.exit_code == 0);
  std::ifstream in(r.run.dir + "/plot-dark.json");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str());
  CHECK(j["data"][0]["type"] == "bar");
  CHECK(j["layout"]["width"] == 1600);
  CHECK(j["layout"]["height"] == 900);
  CHECK_FALSE(std::ifstream(r.run.dir + "/plot-dark.png"));  // kaleido never ran

  // show() is redirected too; an error in the plot keeps its class through the shim.
  Ran s = bare("import plotly.express as px\npx.scatter(x=[1, 2], y=[3, 4]).show()\n", 60, "", "light", true);
  DirGuard g2{s.run.dir};
  CHECK(s.run.exit_code == 0);
  CHECK(std::ifstream(s.run.dir + "/plot-light.json"));
  Ran e = bare("import plotly.graph_objects as go\ngo.Figure().update_layout(nonsense_key=1)\n", 60, "", "light", true);
  DirGuard g3{e.run.dir};
  CHECK(e.row.reason == "plot_error");
  CHECK(e.row.error_class == "ValueError");
  // write_html after write_image is harmless, as in figure mode: the capture stays.
  Ran h = bare(
      "import plotly.graph_objects as go\n"
      "fig = go.Figure(go.Bar(x=['a'], y=[1]))\n"
      "fig.write_image('plot-light.png')\nfig.write_html('plot-light.html')\n",
      60, "", "light", true);
  DirGuard g4{h.run.dir};
  INFO(h.run.stderr_tail);
  CHECK(h.run.exit_code == 0);
  CHECK(std::ifstream(h.run.dir + "/plot-light.json"));
}

TEST_CASE("bare: the figure runner captures a bokeh document at save(), without a browser") {
  Ran r = bare(
      "import os\n"
      "from bokeh.plotting import figure, output_file, save\n"
      "p = figure(width=1600, height=900)\n"
      "p.line([1, 2, 3], [3, 1, 2])\n"
      "output_file('plot-light.html')\n"
      "save(p)\n",
      60, "", "light", true);
  DirGuard g{r.run.dir};
  INFO(r.run.stderr_tail);
  REQUIRE(r.run.exit_code == 0);
  std::ifstream in(r.run.dir + "/plot-light.json");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str());
  CHECK(j.contains("doc"));  // bokeh.embed.json_item's shape
  // The harness dir is not left on the plot's sys.path.
  Ran p = bare("import sys\nimport plotly\nassert not any(x.endswith('sandbox/harness') for x in sys.path), sys.path\n",
               60, "", "light", true);
  DirGuard g2{p.run.dir};
  INFO(p.run.stderr_tail);
  CHECK(p.run.exit_code == 0);
}

TEST_CASE("bare: a host that cannot run the file stops the sweep instead of recording an outcome") {
  sweep_test::TempDir t;
  auto db = sweep_test::migrated(t.file("p.db"));
  std::int64_t id = store::sweeps::create(*db, sweep_test::make_sweep("s"), sweep_test::kNow);
  std::string rel = "plots/a/implementations/python/matplotlib.py";
  std::string abs = t.write("cat/" + rel, "print('never runs')\n");
  boost::asio::io_context io;
  BareConfig c;
  c.sweep_tmp_root = t.file("no-such-dir");  // mkdtemp fails: a host problem, not the file's
  auto backend = make_bare_backend(io, c, vocabulary(), nullptr, read_runtime(c.python));
  RunnerOptions o;
  o.themes = {"light"};
  SweepRunner runner(io, *db, id, *backend, o);
  bool finished = false;
  runner.start({{rel, abs, "matplotlib"}}, 1, 0, [&] { finished = true; });
  io.run();
  CHECK(finished);
  CHECK(runner.error().find("bare run failed on this host") != std::string::npos);
  CHECK(store::sweeps::results(*db, id).empty());
}

TEST_CASE("bare: the backend serves what the configured runtime holds, by the render path's rule") {
  boost::asio::io_context io;
  BareConfig c;
  Runtime rt = read_runtime(c.python);
  REQUIRE(rt.known());
  auto backend = make_bare_backend(io, c, vocabulary(), nullptr, rt);
  for (const char* l : {"matplotlib", "seaborn", "plotnine", "altair", "pygal", "lets-plot"}) {
    INFO(l);
    CHECK(backend->support(l) == runs::Outcome::ok);
  }
  CHECK(backend->support("plotly") == runs::Outcome::runtime_unavailable);  // no figure renderer given
  CHECK(backend->support("bokeh") == runs::Outcome::runtime_unavailable);
  CHECK(backend->support("ggplot") == runs::Outcome::invalid_library);
  rt.packages.erase("pygal");
  auto without = make_bare_backend(io, c, vocabulary(), nullptr, rt);
  CHECK(without->support("pygal") == runs::Outcome::runtime_unavailable);
  CHECK(without->support("altair") == runs::Outcome::ok);
}
