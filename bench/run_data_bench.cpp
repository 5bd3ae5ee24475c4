// POST /run-data end to end: a 2-row snippet through a real plotqd (HTTP over loopback, the queue,
// a warm sandboxed data job, the ledger), p50/p90 over N requests. Baselines in the same command:
// GET /healthz through the same server (the HTTP floor), and the same snippet run bare by a fresh
// runtime interpreter (what a naive backend would pay per run).
//   run_data_bench PLOTQD [N=100]
#include <sys/wait.h>

#include <cstdlib>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/stats.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq::test;
using Clock = std::chrono::steady_clock;
using plotq::bench::pct;

static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: run_data_bench PLOTQD [N] [--harness-dir DIR]\n");
    return 2;
  }
  // --harness-dir: another copy of sandbox/harness (PLOTQ_HARNESS_DIR), to compare two versions
  // of the harness with the same binary in one sitting.
  std::string harness_dir;
  int n = 100;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--harness-dir" && i + 1 < argc) harness_dir = argv[++i];
    else n = std::atoi(argv[i]);
  }
  const std::string snippet = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n";
  TempDir dir;
  Env env = {{"PLOTQ_DB", dir.file("plotq.db")},
               {"PLOTQ_ENVIRONMENT", "development"},
               {"PLOTQ_RUNS_PER_MINUTE", "100000"},
               {"PLOTQ_LOG_REQUESTS", "0"}};
  if (!harness_dir.empty()) env.emplace_back("PLOTQ_HARNESS_DIR", harness_dir);
  Plotqd d(argv[1], env);
  if (!d.wait_listening(30s)) return 1;

  // Warm-up: the data zygote starts on the first job.
  for (int i = 0; i < 3; ++i) {
    nlohmann::json body = {{"job_id", "warm" + std::to_string(i)}, {"source", snippet}, {"timeout_s", 20}};
    http_request(d.port(), "POST", "/run-data", body.dump(), {}, 60s);
  }
  std::vector<double> run_ms, health_ms, bare_ms;
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    nlohmann::json body = {{"job_id", "bench" + std::to_string(i)}, {"source", snippet}, {"timeout_s", 20}};
    auto t = Clock::now();
    auto r = http_request(d.port(), "POST", "/run-data", body.dump(), {}, 60s);
    run_ms.push_back(ms_since(t));
    if (r.status != 200 || r.json()["csv_text"] != "x,y\n1,3.5\n2,4.5\n") ++failures;
    t = Clock::now();
    http_request(d.port(), "GET", "/healthz");
    health_ms.push_back(ms_since(t));
  }
  // The baseline runs the interpreter the sandbox runs (the runtime's venv: Debian's python3 has no
  // pandas any more), cold, bare.
  const char* env_python = std::getenv("PLOTQ_PYTHON");
  const std::string python = env_python && *env_python ? env_python : PLOTQ_DEFAULT_PYTHON;
  for (int i = 0; i < std::min(n, 20); ++i) {  // bare cold python: slow, 20 samples are plenty
    std::string cmd = "cd " + dir.path() + " && " + python + " -c \"" +
                      std::string("import pandas as pd; df = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]}); "
                                  "df.to_csv('out.csv', index=False)") + "\"";
    auto t = Clock::now();
    int rc = std::system(cmd.c_str());
    bare_ms.push_back(ms_since(t));
    if (rc != 0) ++failures;
  }
  std::printf("POST /run-data 2-row snippet, %d requests (warm sandbox): p50 %.1f ms, p90 %.1f ms\n", n,
              pct(run_ms, 0.5), pct(run_ms, 0.9));
  std::printf("GET /healthz (HTTP floor), %d requests:                  p50 %.2f ms, p90 %.2f ms\n", n,
              pct(health_ms, 0.5), pct(health_ms, 0.9));
  std::printf("bare cold runtime python + pandas, %zu runs:               p50 %.1f ms, p90 %.1f ms (%s)\n",
              bare_ms.size(), pct(bare_ms, 0.5), pct(bare_ms, 0.9), python.c_str());
  std::printf("ratio p50 run-data / bare cold python: %.2f\n", pct(run_ms, 0.5) / pct(bare_ms, 0.5));
  // Where the time goes: plotqd's data_run log line of each timed request (the launcher's phases
  // and the ledger commit); the rest of the client's time is HTTP, the route and the queue.
  std::vector<double> queue, spawn, run, collect, ledger, wall;
  for (const auto& e : d.log_events("data_run")) {
    if (e.value("job_id", "").rfind("bench", 0) != 0) continue;
    queue.push_back(e.value("queue_s", 0.0) * 1000);
    spawn.push_back(e.value("spawn_s", 0.0) * 1000);
    run.push_back(e.value("run_s", 0.0) * 1000);
    collect.push_back(e.value("collect_s", 0.0) * 1000);
    ledger.push_back(e.value("ledger_s", 0.0) * 1000);
    wall.push_back(e.value("wall_s", 0.0) * 1000);
  }
  if (!wall.empty())
    std::printf("p50 phases (%zu runs): launcher queue %.1f ms, spawn (zygote fork to entry report) %.1f ms, "
                "run (harness: arm + snippet + CSV + record) %.1f ms, collect %.1f ms, sandbox wall %.1f ms, "
                "ledger commit %.1f ms\n",
                wall.size(), pct(queue, 0.5), pct(spawn, 0.5), pct(run, 0.5), pct(collect, 0.5), pct(wall, 0.5),
                pct(ledger, 0.5));
  std::printf("failures: %d\n", failures);
  return failures == 0 ? 0 : 1;
}
