#include "runs/run_metrics.hpp"

#include <string>

#include "common/metrics.hpp"
#include "runs/libraries.hpp"

namespace plotq::runs {
namespace {

struct RunMetrics {
  metrics::CounterFamily& runs;
  metrics::HistogramFamily& wall;
  metrics::HistogramFamily& cpu;
  metrics::CounterFamily& attempts;
  metrics::CounterFamily& retries;
};

RunMetrics& m() {
  auto& r = metrics::registry();
  static RunMetrics x{
      r.counter("plotq_sandbox_runs_total",
                "sandbox runs booked in the ledger, refused ones included, by kind, library and outcome",
                {"kind", "library", "outcome"}),
      r.histogram("plotq_sandbox_run_wall_seconds", "wall time of the sandboxed child, runs that started one",
                  {"kind"}, metrics::kSecondsBuckets),
      r.histogram("plotq_sandbox_run_cpu_seconds", "CPU time (user + system) of the sandboxed child", {"kind"},
                  metrics::kSecondsBuckets),
      r.counter("plotq_sandbox_attempts_total", "sandbox launch attempts of booked runs", {"kind"}),
      r.counter("plotq_sandbox_retries_total", "launch attempts after the first (a failed launch tried again)",
                {"kind"}),
  };
  return x;
}

}  // namespace

void register_run_metrics() {
  RunMetrics& x = m();
  for (const char* k : {"data", "render"}) {
    x.attempts.with({k});
    x.retries.with({k});
  }
}

void count_run(const store::LedgerEntry& row, std::string_view library) {
  RunMetrics& x = m();
  const std::string kind(store::to_string(row.kind));
  // The outcome label: ok, or the reason / refusal code (one bounded vocabulary: runs/outcome.cpp).
  std::string outcome = row.outcome == store::RunOutcome::ok ? "ok" : row.reason.value_or(std::string(store::to_string(row.outcome)));
  // A name not in the library table (refused as invalid_library) is "other": labels stay bounded.
  std::string_view lib = library.empty() ? "none" : find_library(library) ? library : "other";
  x.runs.with({kind, lib, outcome}).inc();
  if (row.wall_s <= 0) return;  // refused before a child ran: no times, no attempts
  x.wall.with({kind}).observe(row.wall_s);
  x.cpu.with({kind}).observe(row.cpu_s);
  x.attempts.with({kind}).inc(row.attempts > 0 ? row.attempts : 1);
  if (row.attempts > 1) x.retries.with({kind}).inc(row.attempts - 1);
}

}  // namespace plotq::runs
