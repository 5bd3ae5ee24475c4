// sandbox_bench: per-job latency of the sandbox launcher, warm (zygote) vs cold (fork+exec), and
// the launcher's overhead over a bare fork+exec of `python3 -c pass`. All in one run, same machine
// state; medians and p90 over N jobs (default 100). See bench/README.md for the recorded figures.
//
//   sandbox_bench [N] [--only pass|data|png|plot] [--gap MS] [--verbose] [--harness-dir DIR]
//   (--gap: idle time before each round of jobs, as jobs spaced in a chat; --verbose: the last
//   job's CPU, RSS and stderr; --harness-dir: another copy of sandbox/harness, e.g. an older
//   version exported with `git archive`, to compare two harness versions with one binary)
//
// Latency = from Launcher::run() to the on_done callback (host-measured, everything included:
// work dir, spawn, run, output read, result). The data job builds a 1,000-row pandas frame and
// writes it as CSV (harness data mode when sandbox/harness/harness.py exists, else a raw-mode
// program run by a zygote that preloaded pandas); the PNG job draws a small matplotlib line plot,
// in raw mode (a zygote that preloaded pyplot) and, with the harness, in plot mode.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "bench/stats.hpp"
#include "common/log.hpp"
#include "runs/data_job.hpp"
#include "sandbox/launcher.hpp"

namespace sb = plotq::sandbox;
using Clock = std::chrono::steady_clock;
using plotq::bench::Stats;
using plotq::bench::stats;

namespace {


// Runs one job and waits for it (driving the loop); returns milliseconds.
double run_one(boost::asio::io_context& io, sb::Launcher& l, const sb::JobSpec& spec, sb::JobResult* out) {
  bool done = false;
  auto t0 = Clock::now();
  l.run(spec, [&](sb::JobResult r) {
    *out = std::move(r);
    done = true;
  });
  while (!done) {
    if (io.stopped()) io.restart();
    io.run_one();
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Milliseconds of wall time; *cpu_ms = the child's user+sys time.
double bare_pass(const std::string& python, double* cpu_ms) {
  auto t0 = Clock::now();
  pid_t pid;
  char* argv[] = {const_cast<char*>(python.c_str()), const_cast<char*>("-c"), const_cast<char*>("pass"), nullptr};
  char* envp[] = {const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
  if (posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv, envp) != 0) return -1;
  int st;
  struct rusage ru {};
  wait4(pid, &st, 0, &ru);
  *cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void print_row(const char* name, const Stats& s, int n) {
  std::printf("%-34s n=%-4d p50 %8.2f ms   p90 %8.2f ms   mean %8.2f ms%s\n", name, n, s.p50, s.p90, s.mean,
              s.failures ? ("   FAILURES " + std::to_string(s.failures)).c_str() : "");
}

const char* kDataProgram =
    "import numpy as np\n"
    "import pandas as pd\n"
    "n = 1000\n"
    "x = np.linspace(0, 10, n)\n"
    "df = pd.DataFrame({'x': x, 'y': np.sin(x), 'z': np.cumsum(np.random.standard_normal(n))})\n";

const char* kPngProgram =
    "import matplotlib\n"
    "matplotlib.use('Agg')\n"
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots(figsize=(4, 3), dpi=100)\n"
    "ax.plot([0, 1, 2, 3, 4], [1, 3, 2, 5, 4], marker='o')\n"
    "ax.set_title('bench')\n"
    "fig.savefig('plot.png')\n";

}  // namespace

int main(int argc, char** argv) {
  int n = 100;
  std::string only;
  bool verbose = false;
  std::string harness_dir;  // another copy of sandbox/harness, to compare two versions in one sitting
  int gap_ms = 0;  // idle time before each round (jobs spaced as in a chat, not back to back)
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--verbose") verbose = true;
    else if (a == "--harness-dir" && i + 1 < argc) harness_dir = argv[++i];
    else if (a == "--gap" && i + 1 < argc) gap_ms = std::max(0, std::atoi(argv[++i]));
    else n = std::max(1, std::atoi(argv[i]));
  }
  plotq::set_log_enabled(false);
  sb::Config config;  // the default runs dir (/var/lib/plotq/runs): jobs see an empty tmpfs over /tmp
  config.raw_preload = {"numpy", "pandas", "matplotlib", "matplotlib.pyplot"};
  // Only the zygotes measured here: a figure zygote (plotly) preloading meanwhile would load
  // the machine during the first rounds.
  config.warm_modes = {"raw", "data", "plot"};
  config.min_mem_available_mb = 0;
  if (!harness_dir.empty()) config.harness_dir = harness_dir;
  bool harness = std::filesystem::exists(std::string(PLOTQ_SOURCE_DIR) + "/sandbox/harness/harness.py");
  boost::asio::io_context io;
  int rc = 0;
  {
    sb::Launcher l(io, config);
    if (!l.ready()) {
      std::fprintf(stderr, "sandbox not ready\n");
      return 1;
    }
    l.prewarm();
    auto wait_ready = [&](const std::string& mode) {
      auto until = Clock::now() + std::chrono::seconds(120);
      while (!l.zygote_ready(mode) && Clock::now() < until) {
        if (io.stopped()) io.restart();
        io.run_for(std::chrono::milliseconds(20));
      }
    };
    wait_ready("raw");
    if (harness) {
      wait_ready("data");
      wait_ready("plot");
    }
    std::printf("sandbox_bench: %d jobs per row; data job in %s mode; %d ms idle before each round\n", n,
                harness ? "data" : "raw", gap_ms);

    // Rows compared with each other run interleaved (one job of each in turn), so that every row
    // sees the same machine load; each row's first job is untimed (caches, the first spare).
    struct Row {
      std::string name;
      sb::JobSpec spec;  // unused for the bare row
      bool cold = false, bare = false;
      std::string expect_output;
      std::vector<double> ms, spawn, run, collect, cpu;
      int failures = 0;
      sb::JobResult last;
    };
    double bare_cpu = 0;
    auto once = [&](Row& row) {
      if (row.bare) return bare_pass(config.python, &bare_cpu);
      return run_one(io, l, row.spec, &row.last);
    };
    auto compare = [&](std::vector<Row>& rows) {
      for (auto& row : rows) {
        row.spec.cold = row.cold;
        once(row);
      }
      for (int i = 0; i < n; ++i) {
        if (gap_ms) std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
        for (auto& row : rows) {
          double ms = once(row);
          if (row.bare) {
            if (ms < 0) {
              ++row.failures;
            } else {
              row.ms.push_back(ms);
              row.cpu.push_back(bare_cpu);
            }
            continue;
          }
          const sb::JobResult& r = row.last;
          bool ok = sb::succeeded(r) && r.warm == !row.cold &&
                    (row.expect_output.empty() || r.outputs.count(row.expect_output));
          if (!ok) {
            if (++row.failures == 1)
              std::fprintf(stderr, "%s: %s %s %s\n", row.name.c_str(), sb::to_string(r.reason), r.message.c_str(),
                           r.stderr_tail.c_str());
            continue;
          }
          row.ms.push_back(ms);
          row.spawn.push_back(r.timings.spawn_s * 1000);
          row.run.push_back(r.timings.run_s * 1000);
          row.collect.push_back(r.timings.collect_s * 1000);
          row.cpu.push_back(r.cpu_s * 1000);
        }
      }
      std::vector<Stats> out;
      for (auto& row : rows) {
        Stats s = stats(row.ms, row.failures);
        print_row(row.name.c_str(), s, n);
        if (row.bare) std::printf("    the process's CPU p50 %.1f ms\n", stats(row.cpu, 0).p50);
        if (!row.bare)
          std::printf("    phases p50: spawn %.2f ms, run %.2f ms, collect %.2f ms; the job's CPU p50 %.1f ms\n",
                      stats(row.spawn, 0).p50, stats(row.run, 0).p50, stats(row.collect, 0).p50, stats(row.cpu, 0).p50);
        if (verbose && !row.bare)
          std::printf("    last job: cpu %.3f s, max rss %.1f MiB, stderr tail: %s\n", row.last.cpu_s,
                      row.last.max_rss_mb, row.last.stderr_tail.c_str());
        if (row.failures) rc = 1;
        out.push_back(s);
      }
      return out;
    };

    if (only.empty() || only == "pass") {
      sb::JobSpec pass;
      pass.files["pass.py"] = "pass\n";
      pass.argv = {"pass.py"};
      pass.timeout_s = 10;
      std::vector<Row> rows(3);
      rows[0].name = "python3 -c pass, bare fork+exec";
      rows[0].bare = true;
      rows[1].name = "python3 pass, launcher cold";
      rows[1].spec = pass;
      rows[1].cold = true;
      rows[2].name = "python3 pass, launcher warm";
      rows[2].spec = pass;
      auto s = compare(rows);
      std::printf("  launcher overhead: cold p50 - bare p50 = %.2f ms (cold / bare %.2f); warm p50 / bare p50 = %.2f\n",
                  s[1].p50 - s[0].p50, s[1].p50 / s[0].p50, s[2].p50 / s[0].p50);
    }
    // The same job cold and warm, interleaved; `what` names it, `output` must come back.
    auto cold_vs_warm = [&](const std::string& what, const sb::JobSpec& spec, const std::string& output) {
      std::vector<Row> rows(2);
      for (int i = 0; i < 2; ++i) {
        rows[i].name = what + (i == 0 ? ", cold" : ", warm");
        rows[i].spec = spec;
        rows[i].cold = i == 0;
        rows[i].expect_output = output;
      }
      auto s = compare(rows);
      std::printf("  %s: cold p50 / warm p50 = %.1fx\n", what.c_str(), s[0].p50 / s[1].p50);
    };
    if (only.empty() || only == "data") {
      sb::JobSpec data;
      if (harness) {
        data = plotq::runs::data_job_spec(kDataProgram, 30);  // the job plotqd runs, table caps and all
      } else {
        data.timeout_s = 30;
        data.outputs["out.csv"] = plotq::runs::kMaxCsvBytes;
        data.files["job.py"] = std::string(kDataProgram) + "df.to_csv('out.csv', index=False)\n";
        data.argv = {"job.py"};
      }
      cold_vs_warm("1,000-row CSV data job", data, "out.csv");
    }
    if (only.empty() || only == "png") {
      sb::JobSpec png;
      png.timeout_s = 30;
      png.files["job.py"] = kPngProgram;
      png.argv = {"job.py"};
      png.outputs["plot.png"] = 10u << 20;
      cold_vs_warm("small matplotlib PNG, raw mode", png, "plot.png");
    }
    if (harness && (only.empty() || only == "plot")) {
      // The product's path for a PNG: harness plot mode (validated file, PlotGuard armed, the
      // plot zygote's preload with its warm-up draw), the same plot saved as plot-light.png.
      sb::JobSpec plot;
      plot.mode = "plot";
      plot.timeout_s = 30;
      plot.env["ANYPLOT_THEME"] = "light";
      std::string prog = kPngProgram;
      prog.replace(prog.find("'plot.png'"), 10, "'plot-light.png'");
      plot.files["plot.py"] = prog;
      plot.argv = {"--plot", "plot.py"};
      plot.outputs["plot-light.png"] = 10u << 20;
      cold_vs_warm("small matplotlib PNG, plot mode", plot, "plot-light.png");
    }
  }
  return rc;
}
