// plotq sandbox check | run: the operator's view of the sandbox (sandbox/README.md).
//   plotq sandbox check
//       prints the active layers and the runtime (its id and each package's version) as JSON;
//       exit 1 when a required layer is missing or the runtime's manifest cannot be read.
//   plotq sandbox run FILE [--mode raw|data|plot|r] [--timeout S] [--cold] [--theme light|dark] [--repeat N]
//                          [--save DIR]
//       runs FILE through the launcher and prints the JobResult as one JSON object; exit 0 only
//       when the job itself succeeded (reason ok). --save writes the collected outputs to DIR.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "common/theme.hpp"
#include "runs/data_job.hpp"
#include "runs/runtime.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/cgroup.hpp"
#include "sandbox/config.hpp"
#include "sandbox/launcher.hpp"
#include "sandbox/layers.hpp"
#include "sandbox/output.hpp"
#include "tools/commands.hpp"

namespace plotq::cli {

namespace {

int sandbox_usage() {
  std::fprintf(stderr,
               "usage: plotq sandbox check\n"
               "       plotq sandbox run FILE [--mode raw|data|plot|r] [--timeout S] [--cold] [--theme light|dark] [--save DIR]\n"
               "                                      [--repeat N: N runs on one launcher, one JSON line each]\n");
  return 2;
}

int sandbox_check() {
  sandbox::Config config = sandbox::config_from_env();
  sandbox::CgroupSupport cg;
  if (config.sandbox_cgroup) cg = sandbox::setup_cgroups(config.cgroup_parent);
  sandbox::LayerReport report = sandbox::probe_layers(config, cg);
  sandbox::teardown_cgroups(cg);
  nlohmann::json j = sandbox::to_json(report);
  runs::Runtime runtime = runs::read_runtime(config.python);
  j["runtime"] = runs::runtime_json(runtime);
  // The JavaScript snippets' libraries (runtime/js); not required: plotq draws Python without them.
  j["js_runtime"] = runs::runtime_json(runs::read_js_runtime(sandbox::figure_config_from_env().js_modules));
  // R and its packages (runtime/r); not required either: without it R files are runtime_unavailable.
  j["r_runtime"] = runs::runtime_json(runs::r_runtime());
  std::printf("%s\n", j.dump(2).c_str());
  return report.ok() && runtime.known() ? 0 : 1;
}

int sandbox_run(Args args) {
  std::string mode = take_option(args, "--mode");
  std::string timeout = take_option(args, "--timeout");
  std::string theme = take_option(args, "--theme");
  std::string save = take_option(args, "--save");
  std::string repeat_s = take_option(args, "--repeat");
  bool cold = take_flag(args, "--cold");
  if (args.size() != 1) return sandbox_usage();
  long repeat = repeat_s.empty() ? 1 : std::strtol(repeat_s.c_str(), nullptr, 10);
  if (repeat < 1 || repeat > 1000) return sandbox_usage();
  if (mode.empty()) mode = "raw";
  if (mode != "raw" && mode != "data" && mode != "plot" && mode != "r") return sandbox_usage();
  std::ifstream in(args[0], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "plotq sandbox run: cannot read %s\n", args[0].c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();

  double timeout_s = timeout.empty() ? 30.0 : std::stod(timeout);
  // A data job is the one plotqd runs (its records and the table caps it is given).
  sandbox::JobSpec spec = mode == "data" ? runs::data_job_spec(ss.str(), timeout_s) : sandbox::JobSpec{};
  spec.mode = mode;
  spec.timeout_s = timeout_s;
  if (cold) spec.cold = true;
  if (mode == "raw") {
    std::string name = args[0].substr(args[0].find_last_of('/') + 1);
    if (!sandbox::valid_file_name(name)) name = "program.py";
    spec.files[name] = ss.str();
    spec.argv = {name};
  } else if (mode != "data") {
    if (theme.empty()) theme = std::string(kDefaultTheme);
    const char* file = mode == "r" ? "plot.R" : "plot.py";  // r: rharness.R runs plot.R
    spec.files[file] = ss.str();
    spec.argv = {"--plot", file};
    spec.env["ANYPLOT_THEME"] = theme;
    spec.outputs["plot-" + theme + ".png"] = 10u << 20;
    if (mode == "r") spec.outputs["result.json"] = 64u << 10;  // its record: the error class and line
  }
  spec.label = "cli";

  set_log_enabled(false);
  boost::asio::io_context io;
  sandbox::JobResult result;
  {
    sandbox::Launcher launcher(io, sandbox::config_from_env());
    if (repeat > 1 && !cold) {
      // Warm runs measured as a server's: the zygote ready before the first (bench/r_bench.py).
      launcher.prewarm(mode);
      auto until = std::chrono::steady_clock::now() +
                   std::chrono::duration<double>(launcher.config().zygote_start_timeout_s);
      while (!launcher.zygote_ready(mode) && std::chrono::steady_clock::now() < until) {
        if (io.stopped()) io.restart();  // it stops whenever it runs out of work
        io.run_for(std::chrono::milliseconds(20));
      }
    }
    for (long i = 0; i < repeat; ++i) {
      io.restart();
      launcher.run(spec, [&](sandbox::JobResult r) {
        result = std::move(r);
        io.stop();  // the zygotes keep the loop busy
      });
      io.run();
      std::printf("%s\n", sandbox::to_json(result).dump().c_str());
      std::fflush(stdout);
    }
  }
  if (!save.empty()) {
    for (const auto& [name, bytes] : result.outputs) {
      std::ofstream out(save + "/" + name, std::ios::binary);
      out << bytes;
    }
  }
  return sandbox::succeeded(result) ? 0 : 1;
}

}  // namespace

int cmd_sandbox(Args args) {
  if (args.empty()) return sandbox_usage();
  std::string sub = args[0];
  args.erase(args.begin());
  if (sub == "check" && args.empty()) return sandbox_check();
  if (sub == "run") return sandbox_run(args);
  return sandbox_usage();
}

}  // namespace plotq::cli
