#include "sandbox/config.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>

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
  int_field(c.sandbox_nice, "PLOTQ_SANDBOX_NICE", 0, 19);

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

bool hidden_in_jobs(const Config& c, const std::string& path) {
  std::vector<std::string> hidden = c.hidden_paths;
  hidden.push_back("/tmp");
  hidden.push_back(c.runs_dir);
  hidden.push_back(c.sandbox_lock_dir);
  for (const auto& h : hidden) {
    if (h.empty()) continue;
    if (path == h || (path.size() > h.size() && path.compare(0, h.size(), h) == 0 && path[h.size()] == '/')) return true;
  }
  return false;
}

namespace {

// Copies src to dst (mode) through a temporary name and a rename, so that a job never sees half a
// file and two processes staging at once do not fight. False on any error.
bool copy_file(const std::string& src, const std::string& dst, mode_t mode) {
  int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (in < 0) return false;
  std::string tmp = dst + ".tmp." + std::to_string(::getpid());
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (out < 0) {
    ::close(in);
    return false;
  }
  char buf[65536];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0 || ::write(out, buf, static_cast<std::size_t>(n)) != n) {
      ok = false;
      break;
    }
  }
  ::close(in);
  ok = ::fchmod(out, mode) == 0 && ok;
  ok = ::close(out) == 0 && ok;
  if (ok) ok = ::rename(tmp.c_str(), dst.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

bool make_dir(const std::string& d) {
  if (::mkdir(d.c_str(), 0755) == 0 || errno == EEXIST) {
    struct stat st {};
    return ::lstat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }
  return false;
}

// A checkout under /tmp (or another path jobs do not see) keeps its harness and confine library
// out of the jobs' reach: stage read-only copies where jobs can read them.
void stage_for_jobs(Config& c) {
  bool harness_hidden = hidden_in_jobs(c, c.harness_dir);
  bool lib_hidden = hidden_in_jobs(c, c.confine_lib);
  if (!harness_hidden && !lib_hidden) return;
  std::size_t h = std::hash<std::string>{}(c.harness_dir + "|" + c.confine_lib);
  char name[32];
  std::snprintf(name, sizeof name, "%016zx", h);
  std::string root = "/var/lib/plotq";
  std::string stage = root + "/stage";
  std::string dir = stage + "/" + name;
  if (!make_dir("/var/lib") || !make_dir(root) || !make_dir(stage) || !make_dir(dir)) return;
  if (harness_hidden) {
    std::string hd = dir + "/harness";
    if (!make_dir(hd)) return;
    DIR* d = ::opendir(c.harness_dir.c_str());
    if (!d) return;
    bool ok = true;
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 3 && n.compare(n.size() - 3, 3, ".py") == 0)
        ok = copy_file(c.harness_dir + "/" + n, hd + "/" + n, 0644) && ok;
    }
    ::closedir(d);
    if (ok) c.harness_dir = hd;
  }
  // The cold path's exec-arm module lives next to the library (sandbox/exec_arm_module.c).
  if (lib_hidden && copy_file(c.confine_lib, dir + "/libplotq_confine.so", 0755) &&
      copy_file(exec_arm_module(c), dir + "/plotq_exec_arm.so", 0755))
    c.confine_lib = dir + "/libplotq_confine.so";
}

}  // namespace

std::string exec_arm_module(const Config& c) {
  std::string::size_type slash = c.confine_lib.rfind('/');
  return (slash == std::string::npos ? std::string(".") : c.confine_lib.substr(0, slash)) + "/plotq_exec_arm.so";
}

Config resolved(Config c) {
  if (c.harness_dir.empty()) c.harness_dir = project_home() + "/sandbox/harness";
  if (c.confine_lib.empty()) c.confine_lib = std::string(PLOTQ_BINARY_DIR) + "/sandbox/libplotq_confine.so";
  stage_for_jobs(c);
  return c;
}

}  // namespace plotq::sandbox
