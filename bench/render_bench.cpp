// render_bench: renders through runs::Renderer as POST /render runs them (a warm sandbox Launcher
// with plot and figure zygotes, a warm FigureRenderer, one render at a time as the render slot
// allows), p50/p90 of N each (default 20):
//   - a typical 3200x1800 matplotlib plot (tests/catalogue line-basic), plot mode, warm;
//   - a plotly figure end to end (tests/catalogue scatter-basic): the plot step in the sandbox
//     (figure mode, warm), the JSON handed to Chromium, the PNG read back and checked;
// and, as the baseline in the same command, the same matplotlib file run by a bare
// `/usr/bin/python3 plot.py` (fresh interpreter, no sandbox, no guard) in a temp dir.
// Latency = render() to on_done, host-measured, everything included. Every render must come back
// `ok` with a PNG of the right size, or the run fails.
//
// Figure rows are measured two ways: "spaced" waits before each render until the figure
// renderer's process tree is idle (its spare fresh pages made; < 5 % of a core over 250 ms, at
// least 1 s), as between chat turns; "back-to-back" sends the next render as soon as the last
// answered, so every draw after the first also waits for a fresh page to be made.
//
// Per library (issue 14's table): one catalogue file of each Python library, warm in the
// sandbox (back to back, as in a sweep) against the same file run by the runtime's interpreter in a
// fresh process, bare. Bare figure files (plotly, bokeh) run two ways: with figurecapture
// installed, as the sweep's bare mode does, stopping at their JSON (no drawing: their ratio is an
// upper bound); and, once bench/bare_draw.sh has installed runtime/bare-draw/, as written, drawing
// their own PNG (plotly's write_image through kaleido, bokeh's export_png through selenium, both
// with Debian's chromium), the file's real bare cost.
//
//   render_bench [N] [libraries=all|none|matplotlib,seaborn,...]
#include <dirent.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/log.hpp"
#include "runs/render_interpret.hpp"
#include "runs/render_job.hpp"
#include "sandbox/config.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "bench/stats.hpp"

namespace fs = std::filesystem;
namespace runs = plotq::runs;
namespace sb = plotq::sandbox;
using Clock = std::chrono::steady_clock;
using plotq::bench::Stats;
using plotq::bench::stats;

namespace {


void print_row(const char* name, const Stats& s, std::size_t n) {
  std::printf("%-46s n=%-3zu p50 %8.1f ms   p90 %8.1f ms   mean %8.1f ms\n", name, n, s.p50, s.p90, s.mean);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string catalogue(const std::string& spec, const std::string& library) {
  return read_text(fs::path(PLOTQ_SOURCE_DIR) / "tests/catalogue/plots" / spec / "implementations/python" /
                   (library + ".py"));
}

// One render, waited for by driving the loop; milliseconds, or -1 when it was not a good PNG.
double render_one(boost::asio::io_context& io, runs::Renderer& r, const runs::RenderRequest& req,
                  runs::ThemeRun* out) {
  bool done = false;
  runs::RenderResult result;
  auto t0 = Clock::now();
  r.render(req, [&](runs::RenderResult res) {
    result = std::move(res);
    done = true;
  });
  while (!done) {
    if (io.stopped()) io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  *out = result.outputs.begin()->second;
  if (out->outcome != runs::Outcome::ok || !out->png || !runs::png_size(*out->png) || !runs::canvas_ok(out->width, out->height))
    return -1;
  return ms;
}

// A process and all its descendants (host /proc view), with each one's /proc/<pid>/stat fields
// after the name (state, ppid, ...).
std::map<pid_t, std::vector<std::string>> process_tree(pid_t root) {
  std::map<pid_t, std::vector<std::string>> all;
  DIR* d = ::opendir("/proc");
  if (!d) return {};
  while (dirent* e = ::readdir(d)) {
    pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::string stat = read_text(fs::path("/proc") / e->d_name / "stat");
    auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream in(stat.substr(close + 2));
    std::string field;
    std::vector<std::string> f;
    while (in >> field && f.size() < 13) f.push_back(field);
    if (f.size() >= 2) all[pid] = std::move(f);
  }
  ::closedir(d);
  std::map<pid_t, std::vector<std::string>> tree;
  for (const auto& [pid, f] : all) {
    pid_t p = pid;
    for (int depth = 0; depth < 64 && p > 1; ++depth) {
      if (p == root) {
        tree[pid] = f;
        break;
      }
      auto it = all.find(p);
      if (it == all.end()) break;
      p = static_cast<pid_t>(std::atoi(it->second[1].c_str()));
    }
  }
  return tree;
}

// User+system seconds of a process and all its descendants.
double tree_cpu_s(pid_t root) {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  double total = 0;
  for (const auto& [pid, f] : process_tree(root))
    if (f.size() >= 13) total += (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / ticks;  // utime, stime
  return total;
}

// Pss and Rss (KiB) of a process and all its descendants (smaps_rollup): a zygote with its spares.
std::pair<double, double> tree_memory_kb(pid_t root) {
  double pss = 0, rss = 0;
  for (const auto& [pid, f] : process_tree(root)) {
    std::istringstream rollup(read_text(fs::path("/proc") / std::to_string(pid) / "smaps_rollup"));
    std::string line, key, unit;
    double kb;
    while (std::getline(rollup, line)) {
      std::istringstream l(line);
      if (!(l >> key >> kb >> unit)) continue;
      if (key == "Pss:") pss += kb;
      if (key == "Rss:") rss += kb;
    }
  }
  return {pss, rss};
}

void run_for(boost::asio::io_context& io, std::chrono::milliseconds d) {
  auto until = Clock::now() + d;
  while (Clock::now() < until) {
    if (io.stopped()) io.restart();
    io.run_one_for(std::chrono::milliseconds(20));
  }
}

// Waits at least 1 s, then until the renderer's tree used < 5 % of a core over 250 ms (max 30 s).
void wait_renderer_idle(boost::asio::io_context& io, const sb::FigureRenderer& figures) {
  run_for(io, std::chrono::milliseconds(1000));
  auto give_up = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < give_up) {
    pid_t root = figures.renderer_pid();
    if (root <= 0) return;
    double before = tree_cpu_s(root);
    run_for(io, std::chrono::milliseconds(250));
    if ((tree_cpu_s(root) - before) / 0.25 < 0.05) return;
  }
}

// How a bare run of a figure file ends: plain files write their PNG; `capture` installs
// figurecapture first and the file's JSON is its output; `drawn` runs the file as written with
// runtime/bare-draw on its path, so it draws its own PNG with a browser.
enum class Bare { plain, capture, drawn };

fs::path bare_draw_dir() { return fs::path(PLOTQ_SOURCE_DIR) / "runtime/bare-draw"; }
bool bare_draw_installed() { return fs::exists(bare_draw_dir() / ".plotq-lock-sha256"); }

// The baseline: the same plot file with a bare interpreter in a fresh dir; milliseconds, or -1
// when it did not write its output (a drawn PNG must also be 3200x1800).
double bare_plot(const std::string& python, const std::string& source, Bare how = Bare::plain) {
  fs::path dir = fs::temp_directory_path() / ("plotq-render-bench-bare-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "plot.py") << source;
  std::string home = "HOME=" + dir.string();
  std::string pythonpath = "PYTHONPATH=" + bare_draw_dir().string();
  auto t0 = Clock::now();
  pid_t pid;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
  std::string runner = "import runpy, sys; sys.path.insert(0, " + std::string("'") + PLOTQ_SOURCE_DIR +
                       "/sandbox/harness'); import figurecapture; figurecapture.install('plot-light.json', "
                       "source=open('plot.py').read()); runpy.run_path('plot.py', run_name='__main__')";
  char* argv_plain[] = {const_cast<char*>(python.c_str()), const_cast<char*>("plot.py"), nullptr};
  char* argv_capture[] = {const_cast<char*>(python.c_str()), const_cast<char*>("-c"), runner.data(), nullptr};
  char** argv = how == Bare::capture ? argv_capture : argv_plain;
  std::vector<char*> envp = {const_cast<char*>("PATH=/usr/bin:/bin"), const_cast<char*>("ANYPLOT_THEME=light"),
                             const_cast<char*>("MPLBACKEND=Agg"), home.data()};
  if (how == Bare::drawn) {
    envp.push_back(pythonpath.data());
    envp.push_back(const_cast<char*>("SE_OFFLINE=true"));  // selenium: no driver download, chromedriver from PATH
    // Chromium runs as root only without its own sandbox: bokeh adds --no-sandbox for this.
    if (::geteuid() == 0) envp.push_back(const_cast<char*>("BOKEH_IN_DOCKER=1"));
  }
  envp.push_back(nullptr);
  int rc = posix_spawn(&pid, python.c_str(), &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int st = 0;
  waitpid(pid, &st, 0);
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const char* out = how == Bare::capture ? "plot-light.json" : "plot-light.png";
  bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && fs::exists(dir / out);
  if (ok && how == Bare::drawn) ok = runs::png_size(read_text(dir / out)) == std::pair<int, int>{3200, 1800};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename() != "plot.py") fs::remove_all(e.path(), ec);
  return ok ? ms : -1;
}

// p50 of n bare runs after one thrown away, or -1 when none succeeded.
double bare_p50(const std::string& python, const std::string& source, Bare how, std::size_t n) {
  std::vector<double> ms;
  bare_plot(python, source, how);
  for (std::size_t i = 0; i < n; ++i) {
    double one = bare_plot(python, source, how);
    if (one >= 0) ms.push_back(one);
  }
  return ms.empty() ? -1 : stats(ms).p50;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = argc > 1 ? static_cast<std::size_t>(std::max(1, std::atoi(argv[1]))) : 20;
  std::string libraries = argc > 2 ? argv[2] : "all";
  plotq::set_log_enabled(false);
  sb::Config config = sb::config_from_env();
  // The default runs dir and lock dir (jobs cannot see a runs dir under /tmp; a private lock dir
  // lets launchers in two processes pick the same uids).
  config.warm_modes = {"data", "plot", "figure"};
  config.min_mem_available_mb = 0;
  boost::asio::io_context io;
  int rc = 0;
  {
    sb::Launcher launcher(io, config);
    if (!launcher.ready()) {
      std::fprintf(stderr, "render_bench: the sandbox is not ready\n");
      return 1;
    }
    launcher.prewarm();
    sb::FigureRenderer figures(io, sb::figure_config_from_env());
    if (!figures.available()) {
      std::fprintf(stderr, "render_bench: figure renderer unavailable: %s\n", figures.unavailable_reason().c_str());
      return 1;
    }
    figures.start();
    runs::RenderConfig rc_config;
    rc_config.render_tmp_dir = "/tmp";
    runs::Renderer renderer(io, launcher, &figures, rc_config);
    auto until = Clock::now() + std::chrono::seconds(240);
    while (!(launcher.zygote_ready("plot") && launcher.zygote_ready("figure")) && Clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(50));
    }
    if (!launcher.zygote_ready("plot") || !launcher.zygote_ready("figure")) {
      std::fprintf(stderr, "render_bench: zygotes did not start\n");
      return 1;
    }
    std::printf("render_bench: %zu renders per row, one at a time (the render slot)\n", n);
    while (!launcher.zygote_ready("data") && Clock::now() < until) {
      if (io.stopped()) io.restart();
      io.run_one_for(std::chrono::milliseconds(50));
    }
    run_for(io, std::chrono::milliseconds(2000));  // the spares forked
    for (const char* mode : {"data", "plot", "figure"}) {
      auto pid = launcher.zygote_pid(mode);
      if (!pid) continue;
      auto [pss, rss] = tree_memory_kb(*pid);
      std::printf("zygote %-6s (with its spares): PSS %.1f MiB, RSS %.1f MiB\n", mode, pss / 1024, rss / 1024);
    }

    auto series = [&](const char* name, runs::RenderRequest req, bool spaced) {
      std::vector<double> total, step, draw, cpu, spawn, run_phase;
      runs::ThemeRun run;
      for (int i = 0; i < 2; ++i) render_one(io, renderer, req, &run);  // untimed: spares, caches
      int failures = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (spaced) wait_renderer_idle(io, figures);
        double ms = render_one(io, renderer, req, &run);
        if (ms < 0) {
          if (++failures == 1) std::fprintf(stderr, "%s: %s %s\n", name, std::string(runs::to_string(run.outcome)).c_str(), run.message.c_str());
          continue;
        }
        total.push_back(ms);
        step.push_back(run.job.wall_s * 1000);
        draw.push_back(run.draw_s * 1000);
        cpu.push_back(run.job.cpu_s * 1000);
        spawn.push_back(run.job.timings.spawn_s * 1000);
        run_phase.push_back(run.job.timings.run_s * 1000);
      }
      if (failures) {
        std::fprintf(stderr, "%s: %d failures\n", name, failures);
        rc = 1;
      }
      Stats s = stats(total);
      print_row(name, s, total.size());
      std::printf("    p50: plot step wall %.1f ms (its CPU %.1f ms; zygote fork to entry report %.1f ms, "
                  "entry report to exit %.1f ms), draw %.1f ms\n",
                  stats(step).p50, stats(cpu).p50, stats(spawn).p50, stats(run_phase).p50, stats(draw).p50);
      return s;
    };

    runs::RenderRequest mpl;
    mpl.job_id = "bench-mpl";
    mpl.library = "matplotlib";
    mpl.source = catalogue("line-basic", "matplotlib");
    mpl.themes = {"light"};
    mpl.timeout_s = 60;
    runs::RenderRequest fig = mpl;
    fig.job_id = "bench-plotly";
    fig.library = "plotly";
    fig.source = catalogue("scatter-basic", "plotly");

    Stats warm_mpl = series("matplotlib 3200x1800 line plot, warm", mpl, false);
    Stats warm_fig = series("plotly scatter end to end, spaced", fig, true);
    series("plotly scatter end to end, back-to-back", fig, false);

    std::vector<double> bare;
    bare_plot(config.python, mpl.source);
    for (std::size_t i = 0; i < n; ++i) {
      double ms = bare_plot(config.python, mpl.source);
      if (ms >= 0) bare.push_back(ms);
    }
    Stats b = stats(bare);
    print_row("baseline: bare python3 plot.py (same line plot)", b, bare.size());
    std::printf("  matplotlib warm render p50 / bare p50 = %.2f\n", warm_mpl.p50 / b.p50);
    std::printf("  plotly figure (spaced) p50 %.1f ms (target <= 400 ms): %s\n", warm_fig.p50,
                warm_fig.p50 <= 400 ? "met" : "NOT met");

    // Per library: the same catalogue file warm in the sandbox and bare in a fresh interpreter.
    struct LibraryFile {
      const char* library;
      const char* spec;
      bool figure;
      const char* stem = nullptr;  // the catalogue's file name when it is not the library's
    };
    const LibraryFile files[] = {
        {"matplotlib", "line-basic", false}, {"seaborn", "scatter-basic", false},
        {"plotnine", "line-basic", false},   {"altair", "line-basic", false},
        {"pygal", "line-basic", false},      {"lets-plot", "scatter-basic", false, "letsplot"},
        {"plotly", "scatter-basic", true},   {"bokeh", "scatter-basic", true},
    };
    std::vector<std::string> table;
    for (const auto& f : files) {
      if (libraries == "none") break;
      if (libraries != "all" && ("," + libraries + ",").find("," + std::string(f.library) + ",") == std::string::npos)
        continue;
      runs::RenderRequest req = mpl;
      req.job_id = std::string("bench-") + f.library;
      req.library = f.library;
      req.source = catalogue(f.spec, f.stem ? f.stem : f.library);
      Stats warm = series((std::string(f.library) + " " + f.spec + ", warm, back-to-back").c_str(), req, false);
      double bare = bare_p50(config.python, req.source, f.figure ? Bare::capture : Bare::plain, n);
      if (bare < 0) {
        std::fprintf(stderr, "%s: the bare run failed\n", f.library);
        rc = 1;
        continue;
      }
      std::string drawn_cells = " | |";  // figure files only, once bench/bare_draw.sh ran
      if (f.figure && !bare_draw_installed()) drawn_cells = " not measured (bench/bare_draw.sh) | |";
      if (f.figure && bare_draw_installed()) {
        double drawn = bare_p50(config.python, req.source, Bare::drawn, n);
        char cells[64];
        std::snprintf(cells, sizeof cells, " %.1f | %.2f |", drawn, warm.p50 / drawn);
        drawn_cells = drawn < 0 ? " failed | |" : cells;
        if (drawn < 0) {
          std::fprintf(stderr, "%s: the bare run that draws its own PNG failed\n", f.library);
          rc = 1;
        }
      }
      char line[256];
      std::snprintf(line, sizeof line, "| %s | %s | %.1f | %.1f | %.2f |%s", f.library, f.spec, warm.p50, bare,
                    warm.p50 / bare, drawn_cells.c_str());
      table.push_back(line);
    }
    if (!table.empty()) {
      std::printf("\n| library | file | sandbox warm p50 ms | bare p50 ms (figures: to the JSON) | ratio (target <= 0.5) "
                  "| figures: bare p50 ms, drawing its own PNG | ratio |\n|---|---|---|---|---|---|---|\n");
      for (const auto& line : table) std::printf("%s\n", line.c_str());
    }
  }
  std::error_code ec;
  fs::remove_all(fs::temp_directory_path() / ("plotq-render-bench-bare-" + std::to_string(::getpid())), ec);
  return rc;
}
