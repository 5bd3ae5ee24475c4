#include "sandbox/config.hpp"

#include <cstdlib>
#include <sstream>

#include "common/env.hpp"

namespace plotq::sandbox {

namespace {

std::vector<std::string> env_list(const char* name, const std::vector<std::string>& fallback) {
  const char* v = std::getenv(name);
  if (!v) return fallback;
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

template <typename T>
void int_field(T& field, const char* name, std::int64_t min, std::int64_t max) {
  field = static_cast<T>(env_int(name, static_cast<std::int64_t>(field), min, max));
}

}  // namespace

Config config_from_env() {
  Config c;
  c.python = env_string("PLOTQ_PYTHON", c.python);
  c.harness_dir = env_string("PLOTQ_HARNESS_DIR", c.harness_dir);
  c.confine_lib = env_string("PLOTQ_CONFINE_LIB", c.confine_lib);
  c.runs_dir = env_string("PLOTQ_RUNS_DIR", c.runs_dir);
  c.sandbox_lock_dir = env_string("PLOTQ_SANDBOX_LOCK_DIR", c.sandbox_lock_dir);
  c.hidden_paths = env_list("PLOTQ_HIDDEN_PATHS", c.hidden_paths);

  int_field(c.sandbox_uid_base, "PLOTQ_SANDBOX_UID_BASE", 1000, 4000000000LL);
  int_field(c.sandbox_uid_count, "PLOTQ_SANDBOX_UID_COUNT", 2, 1000000);
  int_field(c.sandbox_max_jobs, "PLOTQ_SANDBOX_MAX_JOBS", 1, 256);

  int_field(c.rlimit_as_mb, "PLOTQ_RLIMIT_AS_MB", 0, 1 << 20);
  int_field(c.rlimit_nproc, "PLOTQ_RLIMIT_NPROC", 0, 100000);
  int_field(c.rlimit_cpu_s, "PLOTQ_RLIMIT_CPU_S", 1, 86400);
  int_field(c.rlimit_fsize_mb, "PLOTQ_RLIMIT_FSIZE_MB", 1, 1 << 20);
  int_field(c.rlimit_nofile, "PLOTQ_RLIMIT_NOFILE", 16, 1 << 20);

  c.sandbox_cgroup = env_bool("PLOTQ_SANDBOX_CGROUP", c.sandbox_cgroup);
  int_field(c.cgroup_memory_mb, "PLOTQ_CGROUP_MEMORY_MB", 16, 1 << 20);
  int_field(c.cgroup_pids_max, "PLOTQ_CGROUP_PIDS_MAX", 4, 100000);
  c.cgroup_parent = env_string("PLOTQ_CGROUP_PARENT", c.cgroup_parent);

  int_field(c.watch_interval_ms, "PLOTQ_WATCH_INTERVAL_MS", 5, 10000);
  int_field(c.run_budget_mb, "PLOTQ_RUN_BUDGET_MB", 1, 1 << 20);
  int_field(c.max_run_entries, "PLOTQ_MAX_RUN_ENTRIES", 10, 10000000);
  int_field(c.max_run_depth, "PLOTQ_MAX_RUN_DEPTH", 2, 1000);
  int_field(c.min_mem_available_mb, "PLOTQ_MIN_MEM_AVAILABLE_MB", 0, 1 << 24);
  int_field(c.kill_mem_available_mb, "PLOTQ_KILL_MEM_AVAILABLE_MB", 0, 1 << 24);

  int_field(c.stdout_head_bytes, "PLOTQ_STDOUT_HEAD_BYTES", 0, 1 << 24);
  int_field(c.stdout_tail_bytes, "PLOTQ_STDOUT_TAIL_BYTES", 0, 1 << 24);
  int_field(c.stderr_keep_bytes, "PLOTQ_STDERR_KEEP_BYTES", 0, 1 << 24);
  int_field(c.stderr_tail_chars, "PLOTQ_STDERR_TAIL_CHARS", 0, 1 << 24);
  int_field(c.reader_grace_ms, "PLOTQ_READER_GRACE_MS", 0, 60000);

  c.sandbox_max_timeout_s = env_double("PLOTQ_SANDBOX_MAX_TIMEOUT_S", c.sandbox_max_timeout_s, 0.1, 86400);
  c.min_retry_s = env_double("PLOTQ_MIN_RETRY_S", c.min_retry_s, 0, 3600);
  c.kill_grace_s = env_double("PLOTQ_KILL_GRACE_S", c.kill_grace_s, 0.1, 3600);

  c.sandbox_cold = env_bool("PLOTQ_SANDBOX_COLD", c.sandbox_cold);
  c.warm_modes = env_list("PLOTQ_WARM_MODES", c.warm_modes);
  c.zygote_fallback_cold = env_bool("PLOTQ_ZYGOTE_FALLBACK_COLD", c.zygote_fallback_cold);
  c.zygote_start_timeout_s = env_double("PLOTQ_ZYGOTE_START_TIMEOUT_S", c.zygote_start_timeout_s, 1, 3600);
  int_field(c.zygote_max_restarts, "PLOTQ_ZYGOTE_MAX_RESTARTS", 0, 1000);
  c.raw_preload = env_list("PLOTQ_RAW_PRELOAD", c.raw_preload);

  c.required_layers = env_list("PLOTQ_REQUIRED_LAYERS", c.required_layers);
  c.require_exec_filter = env_bool("PLOTQ_REQUIRE_EXEC_FILTER", c.require_exec_filter);
  return resolved(c);
}

Config resolved(Config c) {
  if (c.harness_dir.empty()) c.harness_dir = project_home() + "/sandbox/harness";
  if (c.confine_lib.empty()) c.confine_lib = std::string(PLOTQ_BINARY_DIR) + "/sandbox/libplotq_confine.so";
  return c;
}

}  // namespace plotq::sandbox
