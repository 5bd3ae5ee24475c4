// POST /run-data end to end: a 2-row snippet through a real plotqd (HTTP over loopback, the queue,
// a warm sandboxed data job, the ledger), p50/p90 over N requests. Baselines in the same command:
// GET /healthz through the same server (the HTTP floor), and the same snippet run bare by a fresh
// runtime interpreter (what a naive backend would pay per run).
//   run_data_bench PLOTQD [N=100] [--harness-dir DIR] [--engines sqlite,postgresql] [--rounds R]
//                  [--pg CONNINFO]
// --engines: the requests once per engine and round (a fresh plotqd on a fresh SQLite file, then on
// a fresh PostgreSQL database of the server --pg or PLOTQ_TEST_PG names), engines alternating;
// medians over the rounds and the ratio PostgreSQL / SQLite (SQLite is the baseline).
#include <sys/wait.h>

#include <cstdlib>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <thread>
#include <string>
#include <vector>

#include "bench/bench_store.hpp"
#include "bench/stats.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq::test;
using Clock = std::chrono::steady_clock;
using plotq::bench::loadavg;
using plotq::bench::pct;

static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

namespace {

struct Result {
  double p50 = 0, p90 = 0, health_p50 = 0, ledger_p50 = 0, wall_p50 = 0;
  int failures = 0;
};

// The median of one field over rounds.
double median_of(const std::vector<Result>& rounds, double Result::*field) {
  std::vector<double> v;
  for (const auto& r : rounds) v.push_back(r.*field);
  return pct(v, 0.5);
}

const std::string kSnippet = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n";

// n requests (after 3 warm-up) on a fresh plotqd whose store is `db`.
Result measure(const std::string& binary, const std::string& db, const std::string& harness_dir, int n,
               const std::string& label, const Env& more = {}) {
  Env env = {{"PLOTQ_DB", db},
             {"PLOTQ_ENVIRONMENT", "development"},
             {"PLOTQ_RUNS_PER_MINUTE", "100000"},
             {"PLOTQ_LOG_REQUESTS", "0"}};
  if (!harness_dir.empty()) env.emplace_back("PLOTQ_HARNESS_DIR", harness_dir);
  env.insert(env.end(), more.begin(), more.end());
  Plotqd d(binary, env);
  if (!d.wait_listening(30s)) throw std::runtime_error("plotqd did not start");
  // Warm-up: the data zygote starts on the first job.
  for (int i = 0; i < 3; ++i) {
    nlohmann::json body = {{"job_id", "warm" + std::to_string(i)}, {"source", kSnippet}, {"timeout_s", 20}};
    http_request(d.port(), "POST", "/run-data", body.dump(), {}, 60s);
  }
  std::this_thread::sleep_for(500ms);  // the armed spares made (PLOTQ_SPARES_DATA)
  std::vector<double> run_ms, health_ms;
  Result r;
  for (int i = 0; i < n; ++i) {
    nlohmann::json body = {{"job_id", "bench" + std::to_string(i)}, {"source", kSnippet}, {"timeout_s", 20}};
    auto t = Clock::now();
    auto resp = http_request(d.port(), "POST", "/run-data", body.dump(), {}, 60s);
    run_ms.push_back(ms_since(t));
    if (resp.status != 200 || resp.json()["csv_text"] != "x,y\n1,3.5\n2,4.5\n") ++r.failures;
    t = Clock::now();
    http_request(d.port(), "GET", "/healthz");
    health_ms.push_back(ms_since(t));
  }
  r.p50 = pct(run_ms, 0.5), r.p90 = pct(run_ms, 0.9), r.health_p50 = pct(health_ms, 0.5);
  std::printf("%sPOST /run-data 2-row snippet, %d requests (warm sandbox): p50 %.1f ms, p90 %.1f ms\n", label.c_str(), n,
              r.p50, r.p90);
  std::printf("%sGET /healthz (HTTP floor), %d requests:                  p50 %.2f ms, p90 %.2f ms\n", label.c_str(), n,
              r.health_p50, pct(health_ms, 0.9));
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
  r.ledger_p50 = pct(ledger, 0.5), r.wall_p50 = pct(wall, 0.5);
  if (!wall.empty())
    std::printf("%sp50 phases (%zu runs): launcher queue %.1f ms, spawn (zygote fork to entry report) %.1f ms, "
                "run (harness: arm + snippet + CSV + record) %.1f ms, collect %.1f ms, sandbox wall %.1f ms, "
                "ledger commit %.1f ms\n",
                label.c_str(), wall.size(), pct(queue, 0.5), pct(spawn, 0.5), pct(run, 0.5), pct(collect, 0.5),
                pct(wall, 0.5), r.ledger_p50);
  std::fflush(stdout);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: run_data_bench PLOTQD [N] [--harness-dir DIR] [--engines sqlite,postgresql] [--rounds R] [--pg CONNINFO]\n"
                         "                      [--spares A,B,...]   (PLOTQ_SPARES_DATA per round, alternating; ratios to the first)\n");
    return 2;
  }
  // --harness-dir: another copy of sandbox/harness (PLOTQ_HARNESS_DIR), to compare two versions
  // of the harness with the same binary in one sitting.
  std::string harness_dir, engines_arg, pg, spares_arg;
  int n = 100, rounds = 1;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--harness-dir" && i + 1 < argc) harness_dir = argv[++i];
    else if (a == "--engines" && i + 1 < argc) engines_arg = argv[++i];
    else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--pg" && i + 1 < argc) pg = argv[++i];
    else if (a == "--spares" && i + 1 < argc) spares_arg = argv[++i];
    else n = std::atoi(argv[i]);
  }
  int failures = 0;
  TempDir dir;
  std::vector<double> run_p50;  // the single-engine figure for the bare ratio
  std::map<std::string, std::vector<Result>> by;
  std::vector<std::string> engines;
  try {
    if (!spares_arg.empty()) {
      // Armed spares against a baseline, the same requests, alternating in one sitting.
      std::vector<std::string> values;
      for (std::size_t at = 0; at <= spares_arg.size();) {
        std::size_t comma = std::min(spares_arg.find(',', at), spares_arg.size());
        values.push_back(spares_arg.substr(at, comma - at));
        at = comma + 1;
      }
      std::map<std::string, std::vector<Result>> by_spares;
      for (int round = 0; round < rounds; ++round)
        for (const auto& v : values) {
          TempDir vdir;
          Result r = measure(argv[1], vdir.file("plotq.db"), harness_dir, n,
                             "[spares " + v + ", round " + std::to_string(round + 1) + "] ", {{"PLOTQ_SPARES_DATA", v}});
          failures += r.failures;
          by_spares[v].push_back(r);
          if (v == values.back()) run_p50.push_back(r.p50);
        }
      auto med = [&](const std::string& v, double Result::*f) { return median_of(by_spares[v], f); };
      std::printf("medians over %d round(s) of %d requests; load avg %.1f at the end:\n", rounds, n, loadavg());
      for (const auto& v : values)
        std::printf("    PLOTQ_SPARES_DATA=%s: /run-data p50 %.1f ms  p90 %.1f ms;  sandbox wall p50 %.1f ms;  ratio to %s: %.2f\n",
                    v.c_str(), med(v, &Result::p50), med(v, &Result::p90), med(v, &Result::wall_p50), values.front().c_str(),
                    med(v, &Result::p50) / med(values.front(), &Result::p50));
    } else if (engines_arg.empty()) {
      Result r = measure(argv[1], dir.file("plotq.db"), harness_dir, n, "");
      failures += r.failures;
      run_p50.push_back(r.p50);
    } else {
      engines = plotq::bench::parse_engines(engines_arg);
      for (int round = 0; round < rounds; ++round)
        for (const auto& e : engines) {
          TempDir edir;
          plotq::bench::BenchStore st(e, edir, pg);
          Result r = measure(argv[1], st.target(), harness_dir, n,
                             "[" + e + ", round " + std::to_string(round + 1) + "] ");
          failures += r.failures;
          by[e].push_back(r);
          if (e == engines.front()) run_p50.push_back(r.p50);
        }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "run_data_bench: %s\n", e.what());
    return 1;
  }
  std::vector<double> bare_ms;
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
  std::printf("bare cold runtime python + pandas, %zu runs:               p50 %.1f ms, p90 %.1f ms (%s)\n",
              bare_ms.size(), pct(bare_ms, 0.5), pct(bare_ms, 0.9), python.c_str());
  std::printf("ratio p50 run-data%s / bare cold python: %.2f\n", engines.empty() ? "" : (" (" + engines.front() + ")").c_str(),
              pct(run_p50, 0.5) / pct(bare_ms, 0.5));
  if (!engines.empty()) {
    auto med = [&](const std::string& e, double Result::*f) { return median_of(by[e], f); };
    std::printf("medians over %d round(s) of %d requests; load avg %.1f at the end:\n", rounds, n, loadavg());
    for (const auto& e : engines)
      std::printf("    %-10s /run-data p50 %.1f ms  p90 %.1f ms;  ledger commit p50 %.2f ms;  sandbox wall p50 %.1f ms;  /healthz p50 %.2f ms\n",
                  e.c_str(), med(e, &Result::p50), med(e, &Result::p90), med(e, &Result::ledger_p50), med(e, &Result::wall_p50),
                  med(e, &Result::health_p50));
    if (by.count("sqlite") && by.count("postgresql")) {
      std::printf("    postgresql / sqlite: /run-data p50 %.2fx (target <= 1.2x); per round:", med("postgresql", &Result::p50) / med("sqlite", &Result::p50));
      for (int i = 0; i < rounds; ++i) std::printf(" %.2fx", by["postgresql"][i].p50 / by["sqlite"][i].p50);
      std::printf("\n");
    }
  }
  std::printf("failures: %d\n", failures);
  return failures == 0 ? 0 : 1;
}
