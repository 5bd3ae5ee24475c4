// What a caller asks the launcher to run (JobSpec) and what it gets back (JobResult).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace plotq::sandbox {

// Fixed vocabulary of JobResult::reason (docs/sandbox.md, "JobResult and the reason vocabulary", documents each).
enum class Reason {
  ok,                   // exit 0, outputs read
  nonzero_exit,         // the job exited with a code other than 0
  crashed,              // killed by a signal the host did not send (segfault, abort, ...)
  timeout,              // wall-clock timeout: the host killed it
  cancelled,            // JobHandle::cancel()
  cpu,                  // RLIMIT_CPU reached (the kernel killed it)
  memory,               // cgroup OOM kill, or MemAvailable fell under the kill floor
  disk,                 // work dir bytes over run_budget_mb
  files,                // work dir entries over max_run_entries, or too deep / unmeasurable
  output_too_large,     // an output file over its cap (or growing past it while read)
  output_rejected,      // an output that is not a regular file (symlink, FIFO, dir, ...)
  exec_denied,          // the exec filter could not be armed (report `refused`, exit 3)
  harness_error,        // harness mode, entry started, but no HARNESS start line and exit != 0
  launcher,             // the sandbox never reached the job's entry (twice, or no time to retry)
  sandbox_lost,         // the job's process was lost after its entry: its zygote (or sandbox init)
                        // died under it, so no exit status exists
  low_memory,           // refused to start: MemAvailable under min_mem_available_mb
  sandbox_unavailable,  // refused to start: a required layer is missing
  io,                   // host-side failure (work dir, pipes, fork)
  scratch_full,         // the runs dir's file system was full: under its floor at start, or nearly
                        // empty when the job failed (a write it needed was refused), or ENOSPC
                        // while the host wrote the job's files
  invalid_job,          // the JobSpec itself is unusable (bad mode, file name, timeout)
};
const char* to_string(Reason r);

struct JobSpec {
  std::string mode = "raw";  // raw | data | plot | figure
  // Files written into the fresh work dir before the job starts (plain names, no '/').
  std::map<std::string, std::string> files;
  // raw: argv[0] is the program (a file name in the work dir), the rest its sys.argv[1:].
  // other modes: passed to harness.main() as is, e.g. {"--data", "snippet.py"}.
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // added to the job's complete env (e.g. ANYPLOT_THEME)
  double timeout_s = 30;
  std::map<std::string, std::uint64_t> outputs;  // files to read back: name -> byte cap
  std::optional<bool> cold;  // overrides Config::sandbox_cold for this job
  std::string label;         // for log lines only
  // The library the job draws with: a spare warmed for it is taken first (spare_warm_ups).
  std::string warm_for;
};

struct PhaseTimings {
  double queue_s = 0;    // waiting for a free slot / a starting zygote
  double spawn_s = 0;    // work dir + process creation until the entry reported
  double run_s = 0;      // entry report until the job's exit
  double collect_s = 0;  // exit until the result (pipes drained, outputs read)
};

struct JobResult {
  Reason reason = Reason::ok;
  std::optional<int> exit_code;  // null whenever the host stopped the job or it died by a signal
  std::optional<int> signal;     // the signal that ended the job's first process, if any
  bool timed_out = false;
  std::optional<double> measured;  // with disk/files/memory/cpu/output_*: the value that broke it
  std::optional<double> limit;     // ... and the limit
  std::string message;             // host note (which output, which layer, which step failed)
  double wall_s = 0;
  double cpu_s = 0;        // user+system of the job (rusage of its first process + waited children)
  double max_rss_mb = 0;   // peak RSS (rusage)
  std::string filter;      // first report line: "armed tsync", "refused ...", "" when none came
  bool warm = false;       // ran from a zygote
  bool spare = false;      // ran in an armed spare: confined before the job came (docs/sandbox.md)
  std::string spare_warmed_for;  // the library that spare was warmed for, "" none
  int attempts = 0;
  std::string stdout_head, stdout_tail;  // first/last bytes of stdout (tail empty if all fit in head)
  std::uint64_t stdout_bytes = 0;
  std::string stderr_tail;  // last stderr_tail_chars of stderr
  std::map<std::string, std::string> outputs;  // collected files (only those that existed)
  PhaseTimings timings;
};

bool succeeded(const JobResult& r);  // reason ok
nlohmann::json to_json(const JobResult& r);  // outputs as {name: byte count}; the caller adds bytes
nlohmann::json to_json(const JobSpec& s);    // without file contents

}  // namespace plotq::sandbox
