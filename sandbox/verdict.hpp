// The verdict of one attempt: a pure function from what the host saw of an attempt (the report
// line, the exit record, its own stop, the cgroup's OOM count, the work-dir walk after exit, the
// outputs read) to the JobResult's reason, exit code, signal, measured/limit, message and outputs.
// No I/O: the launcher gathers the facts (attempt_end.cpp) and tests feed synthetic ones.
#pragma once
#include "common/limits.hpp"
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sandbox/job.hpp"
#include "sandbox/output.hpp"
#include "sandbox/watchdog.hpp"

namespace plotq::sandbox {

// The status socket's "exit <wait status> <utime us> <stime us> <maxrss KiB>" record.
struct ExitRecord {
  int status = 0;  // a wait(2) status
  double utime_s = 0, stime_s = 0;
  double maxrss_mb = 0;
};

// The host's own first verdict while the job ran (timeout, cancel, watchdog).
struct HostStop {
  Reason reason = Reason::cancelled;
  std::optional<double> measured, limit;
  std::string message;
};

struct AttemptFacts {
  std::string mode;                  // the job's mode (raw has no harness start line)
  std::string report;                // what the report pipe carried (its first line is the marker)
  std::optional<ExitRecord> exit;    // empty: no exit record (never started, or lost)
  std::string spawn_error;           // "fork: ...", a zygote's "error <stage> <errno>", ...
  std::optional<HostStop> stop;
  bool stuck = false;                // did not die within kill_grace_s of SIGKILL
  bool oom = false;                  // the slot's cgroup counted an OOM kill during the attempt
  std::uint64_t memory_peak_bytes = 0;
  std::uint64_t cgroup_memory_mb = 0;
  bool tree_checked = false;         // the work dir was walked again after exit
  TreeMeasure tree;
  TreeLimits limits;
  std::uint64_t cpu_limit_s = 0;     // the attempt's RLIMIT_CPU
  std::string stdout_head;           // first stdout bytes (the harness start line)
  std::optional<std::uint64_t> scratch_free_bytes;  // free in the runs dir's file system after exit
  std::map<std::string, std::uint64_t> output_caps;
};

// A job that failed while its file system had less than this free was refused a write (ENOSPC):
// a few pages, as a write that fills the file system leaves it.
using ::plotq::limits::kScratchFullBytes;  // common/limits.hpp

// Fills reason, exit_code, signal, timed_out, measured, limit, message, filter, cpu_s,
// max_rss_mb and outputs (moved out of `reads`); every other field stays default.
JobResult judge_attempt(const AttemptFacts& facts, std::map<std::string, OutputRead> reads);

// The exact start line of the harness (docs/harness.md, "Records"), among the first stdout bytes.
bool has_harness_start(const std::string& head);

}  // namespace plotq::sandbox
