// Every sandbox::Config field as its PLOTQ_* setting: name, field, one-line why, bound. The one
// declaration of the sandbox's limits (docs/settings.md is tested against it).
#include "common/settings.hpp"
#include "sandbox/config.hpp"

namespace plotq::sandbox {

void register_settings(Settings& s, Config& c) {
  s.add("PLOTQ_PYTHON", &c.python, "interpreter of every sandbox job (never the one on PATH)");
  s.add("PLOTQ_R", &c.r_exec, "R's binary for R jobs (mode r; R_HOME/bin/exec/R, never the bin/R script)");
  s.add("PLOTQ_R_HOME", &c.r_home, "R_HOME of R jobs");
  s.add("PLOTQ_R_GUARD", &c.r_guard, "the R-side guard of R jobs (early refusals; the kernel layers hold without it)");
  s.add("PLOTQ_HARNESS_DIR", &c.harness_dir, "the sandbox harness (entry.py, zygote.py, harness.py); empty = <PLOTQ_HOME>/sandbox/harness");
  s.add("PLOTQ_CONFINE_LIB", &c.confine_lib, "libplotq_confine.so; empty = the one built with this binary");
  s.add("PLOTQ_RUNS_DIR", &c.runs_dir, "one fresh work dir per job attempt is made (and removed) here");
  s.add("PLOTQ_SANDBOX_LOCK_DIR", &c.sandbox_lock_dir, "flock files reserving uid blocks between processes");
  s.add("PLOTQ_HIDDEN_PATHS", &c.hidden_paths, "directories hidden behind an empty read-only tmpfs in every job, comma separated");
  s.add("PLOTQ_SANDBOX_UID_BASE", &c.sandbox_uid_base, "first uid/gid of the sandbox range").range(1000, 4'000'000'000LL);
  s.add("PLOTQ_SANDBOX_UID_COUNT", &c.sandbox_uid_count, "size of the sandbox uid range").range(2, 1'000'000);
  s.add("PLOTQ_SANDBOX_MAX_JOBS", &c.sandbox_max_jobs, "sandbox jobs running at once per launcher (one uid each)").range(1, 256);
  s.add("PLOTQ_RLIMIT_AS_MB", &c.rlimit_as_mb, "address space per job process, MiB; 0 = leave as is").range(0, 1 << 20);
  s.add("PLOTQ_PLOT_RLIMIT_AS_MB", &c.plot_rlimit_as_mb,
        "address space per plot/figure job process when its memory cgroup bounds real memory, MiB (V8 in vl-convert "
        "reserves far more than it uses); 0 = leave as is")
      .range(0, 1 << 20);
  s.add("PLOTQ_RLIMIT_NPROC", &c.rlimit_nproc, "processes+threads of the job uid; 0 = leave as is").range(0, 100'000);
  s.add("PLOTQ_RLIMIT_CPU_S", &c.rlimit_cpu_s, "CPU seconds per job: min(this, ceil(timeout))").range(1, 86'400);
  s.add("PLOTQ_RLIMIT_FSIZE_MB", &c.rlimit_fsize_mb, "largest file a job may write, MiB").range(1, 1 << 20);
  s.add("PLOTQ_RLIMIT_NOFILE", &c.rlimit_nofile, "open files per job process").range(16, 1 << 20);
  s.add("PLOTQ_SANDBOX_NICE", &c.sandbox_nice, "niceness of every job (only raised; the job cannot lower it)").range(0, 19);
  s.add("PLOTQ_SANDBOX_CGROUP", &c.sandbox_cgroup, "use a cgroup (memory, pids) per job when one is writable");
  s.add("PLOTQ_CGROUP_MEMORY_MB", &c.cgroup_memory_mb, "memory of a whole job (all its processes), MiB").range(16, 1 << 20);
  s.add("PLOTQ_CGROUP_PIDS_MAX", &c.cgroup_pids_max, "tasks of a whole job").range(4, 100'000);
  s.add("PLOTQ_CGROUP_PARENT", &c.cgroup_parent, "parent cgroup of the jobs; empty = plotq-<pid> under plotqd's own");
  s.add("PLOTQ_WATCH_INTERVAL_MS", &c.watch_interval_ms, "watchdog sampling interval, milliseconds").range(5, 10'000);
  s.add("PLOTQ_RUN_BUDGET_MB", &c.run_budget_mb, "bytes on disk in a job's work dir, MiB (reason disk)").range(1, 1 << 20);
  s.add("PLOTQ_MAX_RUN_ENTRIES", &c.max_run_entries, "files and dirs in a job's work dir (reason files)").range(10, 10'000'000);
  s.add("PLOTQ_MAX_RUN_DEPTH", &c.max_run_depth, "directory depth in a job's work dir (reason files)").range(2, 1000);
  s.add("PLOTQ_MIN_SCRATCH_FREE_MB", &c.min_scratch_free_mb,
        "refuse to start a job while the runs dir's file system has less free, MiB (reason scratch_full); 0 = off")
      .range(0, 1 << 20);
  s.add("PLOTQ_MIN_MEM_AVAILABLE_MB", &c.min_mem_available_mb, "refuse to start a job below this MemAvailable, MiB; 0 = off")
      .range(0, 1 << 24);
  s.add("PLOTQ_KILL_MEM_AVAILABLE_MB", &c.kill_mem_available_mb, "kill a running job below this MemAvailable, MiB; 0 = off")
      .range(0, 1 << 24);
  s.add("PLOTQ_STDOUT_HEAD_BYTES", &c.stdout_head_bytes, "first bytes of a job's stdout kept").range(0, 1 << 24);
  s.add("PLOTQ_STDOUT_TAIL_BYTES", &c.stdout_tail_bytes, "last bytes of a job's stdout kept").range(0, 1 << 24);
  s.add("PLOTQ_STDERR_KEEP_BYTES", &c.stderr_keep_bytes, "bytes of a job's stderr kept").range(0, 1 << 24);
  s.add("PLOTQ_STDERR_TAIL_CHARS", &c.stderr_tail_chars, "characters of stderr in a job's result").range(0, 1 << 24);
  s.add("PLOTQ_READER_GRACE_MS", &c.reader_grace_ms, "wait for pipe EOF after a job is gone, milliseconds").range(0, 60'000);
  s.add("PLOTQ_SANDBOX_MAX_TIMEOUT_S", &c.sandbox_max_timeout_s, "a job's timeout is clamped to (0, this], seconds").range(0.1, 86'400);
  s.add("PLOTQ_MIN_RETRY_S", &c.min_retry_s, "a launcher failure is retried once when this much time remains, seconds").range(0, 3600);
  s.add("PLOTQ_KILL_GRACE_S", &c.kill_grace_s, "after SIGKILL, wait this long before calling a job stuck, seconds").range(0.1, 3600);
  s.add("PLOTQ_SANDBOX_COLD", &c.sandbox_cold, "never use a zygote (every job starts a fresh interpreter)");
  s.add("PLOTQ_WARM_MODES", &c.warm_modes, "job modes that get a zygote, comma separated (raw, data, plot, figure, r)");
  s.add("PLOTQ_ZYGOTE_FALLBACK_COLD", &c.zygote_fallback_cold, "a job waiting for a (re)starting zygote runs cold instead");
  s.add("PLOTQ_ZYGOTE_START_TIMEOUT_S", &c.zygote_start_timeout_s, "a zygote's preload must finish within this, seconds").range(1, 3600);
  s.add("PLOTQ_ZYGOTE_MAX_RESTARTS", &c.zygote_max_restarts, "consecutive failed zygote starts before a mode goes cold for good")
      .range(0, 1000);
  // Each spare is a fork of its zygote: its cost is the pages it has written (PSS, sandbox/README.md).
  s.add("PLOTQ_SPARES_RAW", &c.spares_raw, "armed spares for raw jobs (0: confine each job after it comes)").range(0, 8);
  s.add("PLOTQ_SPARES_DATA", &c.spares_data, "armed spares for data runs: two let jobs back to back never wait for a fork").range(0, 8);
  s.add("PLOTQ_SPARES_PLOT", &c.spares_plot, "armed spares for PNG plot jobs").range(0, 8);
  s.add("PLOTQ_SPARES_FIGURE", &c.spares_figure, "armed spares for figure plot steps").range(0, 8);
  s.add("PLOTQ_SPARES_ALTAIR", &c.spares_altair,
        "armed plot spares besides, with vl-convert's engine started at once: altair jobs take them first").range(0, 8);
  s.add("PLOTQ_SPARE_MAX_WAIT_S", &c.spare_max_wait_s, "an armed spare that waited longer is retired and another armed, seconds")
      .range(1, 86400);
  s.add("PLOTQ_RAW_PRELOAD", &c.raw_preload, "modules the raw-mode zygote imports before forking, comma separated");
  s.add("PLOTQ_REQUIRED_LAYERS", &c.required_layers, "sandbox layers that must be active, else every job is refused, comma separated");
  s.add("PLOTQ_REQUIRE_EXEC_FILTER", &c.require_exec_filter, "a job exits exec_denied when the exec filter cannot be armed");
}

Config config_from_env() { return resolved(load_from_env<Config>(register_settings)); }

}  // namespace plotq::sandbox
