// Every limit and path of the sandbox, one named field each, with its default. The env-var name of a
// field is PLOTQ_<FIELD IN UPPER CASE>, declared with its bound and its reason in
// config_settings.cpp (register_settings; docs/settings.md is tested against it). Plain
// data: copy it, change it, pass it to Launcher.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace plotq {
class Settings;
}

namespace plotq::sandbox {

struct Config {
  // --- paths -------------------------------------------------------------------------------------
  std::string python = PLOTQ_DEFAULT_PYTHON;  // interpreter of every job (never the one on PATH)
  // R jobs (mode "r"): R's own binary (not the bin/R shell script, which would need an exec after
  // the start) and R's home; rharness.R arms the exec filter through plotq_r_arm.so.
  std::string r_exec = "/usr/lib/R/bin/exec/R";
  std::string r_home = "/usr/lib/R";
  // The R-side guard (rharness.R: early refusals of system, pipe, url, dyn.load, ...). An optional
  // layer: the kernel layers are the boundary, and the escape tests run with it off as well.
  bool r_guard = true;
  std::string harness_dir;                    // sandbox/harness (entry.py, zygote.py, harness.py); "" = <home>/sandbox/harness
  std::string confine_lib;                    // libplotq_confine.so; "" = the one built next to this binary's build tree
  std::string runs_dir = "/var/lib/plotq/runs";  // one fresh work dir per job attempt, removed after it
  std::string sandbox_lock_dir = "/run/plotq";        // flock files reserving uid blocks between processes
  // Directories hidden behind an empty read-only tmpfs inside every job (in addition to /tmp, the
  // runs dir and the lock dir, which are always hidden). Add the directory of the database here.
  std::vector<std::string> hidden_paths = {"/var/tmp", "/dev/shm", "/run", "/root", "/home", "/mnt",
                                           "/media", "/srv"};

  // --- identities --------------------------------------------------------------------------------
  std::uint32_t sandbox_uid_base = 61000;  // first uid/gid of the sandbox range (never 0)
  std::uint32_t sandbox_uid_count = 1024;  // size of the range; a Launcher reserves sandbox_max_jobs+1 of it
  std::uint32_t sandbox_max_jobs = 4;              // jobs running at once per Launcher (one uid each); more wait

  // --- rlimits (soft = hard, only ever lowered) --------------------------------------------------
  std::uint64_t rlimit_as_mb = 1024;    // address space per process; 0 = leave as is
  // Plot and figure jobs whose slot has a memory cgroup: the cgroup bounds their real memory, and
  // vl-convert's V8 (altair) reserves far more address space than it uses, so AS stays open there
  // (0 = leave). Without a memory cgroup they get rlimit_as_mb like every job.
  std::uint64_t plot_rlimit_as_mb = 0;
  std::uint64_t rlimit_nproc = 64;      // processes+threads of the job uid; 0 = leave as is
  std::uint64_t rlimit_cpu_s = 60;      // CPU seconds: min(this, ceil(timeout)), at least 1
  std::uint64_t rlimit_fsize_mb = 50;   // largest file a job may write
  std::uint64_t rlimit_nofile = 256;    // open files
  // core dumps are always 0; RLIMIT_NICE is 0 (a job can never lower its niceness again)
  // Niceness of every job (0-19, only ever raised): a render's busy loop gives way to the service's
  // event loop (stream writes, plain turns) whenever they want the same core.
  std::uint32_t sandbox_nice = 10;

  // --- cgroup (used when a writable hierarchy with the controller exists) ------------------------
  bool sandbox_cgroup = true;                   // false: rlimits alone
  // Memory of the whole job (all its processes). A catalogue file drawn by lets-plot's native export
  // at scale 4 peaks above 1 GiB (RSS) and was killed at 1,024; data jobs stay bounded per process
  // by RLIMIT_AS as well.
  std::uint64_t cgroup_memory_mb = 2048;
  std::uint64_t cgroup_pids_max = 64;     // tasks of the whole job
  std::string cgroup_parent;            // "" = a plotq-<pid> group under this process's own cgroup

  // --- watchdog and memory floors -----------------------------------------------------------------
  std::uint32_t watch_interval_ms = 50;
  std::uint64_t run_budget_mb = 64;       // bytes on disk in the work dir -> reason disk
  std::uint64_t max_run_entries = 10000;  // files+dirs in the work dir -> reason files
  std::uint32_t max_run_depth = 32;       // deeper -> reason files, measured null
  std::uint64_t min_mem_available_mb = 1024;  // refuse to start below (reason low_memory); 0 = off
  // Free space of the runs dir's file system (every job's work dir and the zygotes' scratch):
  // refuse to start below (reason scratch_full); 0 = off. A job that fails while less than
  // kScratchFullBytes (sandbox/verdict.hpp) is free failed for the space, not for its code.
  std::uint64_t min_scratch_free_mb = 16;
  std::uint64_t kill_mem_available_mb = 512;  // kill a running job below (reason memory); 0 = off

  // --- output capture ---------------------------------------------------------------------------
  std::uint32_t stdout_head_bytes = 4096;
  std::uint32_t stdout_tail_bytes = 4096;
  std::uint32_t stderr_keep_bytes = 65536;
  std::uint32_t stderr_tail_chars = 2000;  // what goes into JobResult::stderr_tail
  std::uint32_t reader_grace_ms = 2000;    // wait for pipe EOF after the job is gone

  // --- timing -----------------------------------------------------------------------------------
  double sandbox_max_timeout_s = 120;   // JobSpec::timeout_s is clamped to (0, this]
  double min_retry_s = 1.0;     // a launcher failure is retried once when this much time remains
  double kill_grace_s = 10;     // after SIGKILL, wait this long for the exit before calling it stuck

  // --- warm starts ------------------------------------------------------------------------------
  bool sandbox_cold = false;                                  // true: never use a zygote
  // figure: plotly and bokeh plot steps (a cold plot step would cost a figure render more than its draw).
  // r: the R zygote (harness/rzygote.R), R jobs forked from an R that loaded ggplot2 and friends.
  std::vector<std::string> warm_modes = {"raw", "data", "plot", "figure", "r"};  // modes that get a zygote
  bool zygote_fallback_cold = false;  // a job waiting for a (re)starting zygote runs cold instead
  double zygote_start_timeout_s = 60;  // preload must finish within this
  std::uint32_t zygote_max_restarts = 5;  // consecutive failed starts before a mode goes cold for good
  // Modules the raw-mode zygote imports before forking (the harness's preload covers the other
  // modes). Empty: a bare interpreter. E.g. {"numpy", "pandas", "matplotlib.pyplot"}.
  std::vector<std::string> raw_preload;
  // Armed spares (docs/sandbox.md "Armed spares"): per warm mode, children of its zygote already
  // confined in a fresh work dir (each bound to one job slot), waiting for one job each. 0 = the
  // zygote keeps one unconfined spare per slot instead (confined once its job came).
  std::uint32_t spares_raw = 1, spares_data = 2, spares_plot = 1, spares_figure = 1;
  // Plot spares warmed for altair besides: vl-convert's engine started at once, while the job
  // before runs (its threads cannot cross the zygote's fork, so a job would otherwise start it).
  // Altair jobs take them first; any plot job may take one (spare_warm_ups).
  std::uint32_t spares_altair = 1;
  double spare_max_wait_s = 600;  // a spare that waited longer is retired and another armed

  // --- layers -----------------------------------------------------------------------------------
  // Layers that must be active, else every job is refused with reason sandbox_unavailable.
  std::vector<std::string> required_layers = {"uid", "seccomp", "rlimits", "net_ns", "pid_ns"};
  bool require_exec_filter = true;  // entry exits 3 (exec_denied) when the exec filter cannot be armed
};

// Registers every field of c as its PLOTQ_* setting (config_settings.cpp); the defaults are c's values.
void register_settings(Settings& s, Config& c);
// The registration loaded alone from the environment, then resolved(); throws plotq::ConfigError
// naming every bad value (nothing falls back silently).
Config config_from_env();

// Fills the "" paths (harness_dir, confine_lib) with their defaults. When one of them lies where
// jobs cannot see it (under /tmp or a hidden path, e.g. a checkout in /tmp), read-only copies are
// staged under /var/lib/plotq/stage/<hash>/ and the config points there.
Config resolved(Config c);
// The armed spares a mode's zygote keeps (0 for a mode without a setting), warmed for no library.
std::uint32_t spares_for(const Config& c, const std::string& mode);
// A mode's spares warmed for one library (a warm-up a job of that library would otherwise pay
// itself): the one table of them, harness.SPARE_WARM_UPS is its other side.
struct SpareWarmUp {
  std::string library;  // JobSpec::warm_for that prefers these spares
  std::uint32_t count = 0;
};
std::vector<SpareWarmUp> spare_warm_ups(const Config& c, const std::string& mode);
// plotq_exec_arm.so, next to confine_lib: the cold path arms the exec filter with it.
std::string exec_arm_module(const Config& c);
// plotq_r_arm.so, next to confine_lib: R jobs arm the exec filter with it (sandbox/r_exec_arm.c).
std::string r_arm_module(const Config& c);
// plotq_r_zygote.so, next to confine_lib: the R zygote's loop (sandbox/r_zygote.cpp).
std::string r_zygote_module(const Config& c);
// R's own variables in an R job's environment and in the R zygote's (R_HOME, R_SHARE_DIR,
// R_INCLUDE_DIR, R_DOC_DIR, R_LIBS_USER): the same values, so that what R derives from them at
// start (.libPaths(), R.home()) in the zygote is what a cold job derives.
std::vector<std::pair<std::string, std::string>> r_env(const Config& c);
// The path is behind one of the empty tmpfs mounts every job gets (/tmp, hidden_paths, runs, locks).
bool hidden_in_jobs(const Config& c, const std::string& path);

}  // namespace plotq::sandbox
