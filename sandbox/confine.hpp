// The confinement of a job's first process: ONE implementation, used by the cold path (a forked
// child of the host, before it execs the interpreter) and by the warm path (a forked child of the
// zygote, through libplotq_confine.so's C API). Order:
//   setsid -> oom_score_adj 1000 -> nice -> unshare(mount, net, ipc, uts) -> join the job cgroup -> mounts (read-only view, the
//   work dir as the only writable place, fresh /proc, empty tmpfs over hidden paths) -> chdir ->
//   drop to the job uid/gid (no groups, no capabilities) -> rlimits -> NO_NEW_PRIVS ->
//   DUMPABLE 0 -> base seccomp filter (TSYNC).
// ConfineSpec is plain data with fixed buffers: after fork (in a multi-threaded host) nothing here
// allocates; everything is a system call.
#pragma once
#include <linux/filter.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "sandbox/rlimits.hpp"

namespace plotq::sandbox {

constexpr const char* kJobDirInside = "/tmp/job";  // where a job sees its work dir (cwd, HOME)

struct ConfineSpec {
  static constexpr int kPath = 1024;
  static constexpr int kMaxHidden = 24;
  static constexpr int kMaxCgroups = 2;

  int unshare_flags = 0;  // namespaces the process makes for itself (not the pid namespace)
  bool new_session = true;
  // cgroup.procs files to join (written "0"); empty = no cgroup layer.
  int n_cgroups = 0;
  char cgroup_procs[kMaxCgroups][kPath] = {};
  // Mounts (only when CLONE_NEWNS is in unshare_flags).
  char work_dir[kPath] = {};     // host path of the work dir; bound at kJobDirInside
  std::uint64_t work_dev = 0, work_ino = 0;  // must match (it is the dir the host made)
  bool read_only_root = true;    // every other mount read-only
  bool mount_proc = true;        // fresh /proc of the job's pid namespace
  int n_hidden = 0;
  char hidden[kMaxHidden][kPath] = {};  // empty read-only tmpfs over each (skipped when absent)
  // Credentials.
  std::uint32_t uid = 0, gid = 0;  // 0 = refused (never root)
  bool drop_groups = true;         // setgroups(0); false in the zygote's namespace (already empty)
  RlimitSpec rlimits;
  int nice = 0;  // niceness to raise to (never lowered: a host already nicer keeps its own)
  // The base seccomp filter, built before fork (see seccomp_filter.hpp); none = no filter.
  const sock_filter* filter = nullptr;
  unsigned short filter_len = 0;
};

// Raises the niceness of the scheduler autogroup of `pid` (0 = the caller) to `nice` (0-19): a new
// session is a new autogroup, and autogroups share the CPU equally whatever their members'
// niceness. 0, -ENOENT without autogroups, else -errno (-EAGAIN: an unprivileged caller within
// 100 ms of another such write anywhere on the machine). Fork-safe (syscalls only).
int set_autogroup_nice(pid_t pid, int nice);

// Applies the whole confinement to the calling process. 0, or -errno with *stage naming the step
// ("setsid", "nice", "unshare", "cgroup", "mount:<what>", "chdir", "setresuid", "rlimit:<which>",
// "no_new_privs", "dumpable", "seccomp", ...).
int confine_job(const ConfineSpec& spec, const char** stage);

// JSON form (for the zygote message and the C API). from_json throws nlohmann::json exceptions or
// std::invalid_argument on a bad spec; the filter pointer is not part of it.
nlohmann::json to_json(const ConfineSpec& spec);
void from_json_spec(const nlohmann::json& j, ConfineSpec* spec);
// Copies a string into a fixed buffer; false when it does not fit.
bool set_path(char* dst, const std::string& src);

}  // namespace plotq::sandbox

// The C API of libplotq_confine.so (also linked into plotq_sandbox). Python loads it with ctypes.
#define PLOTQ_CAPI __attribute__((visibility("default")))
extern "C" {
// Builds and caches both seccomp programs; call once in the zygote before forking. 0 or -errno.
PLOTQ_CAPI int plotq_confine_prepare(char* err, std::size_t errlen);
// Confines the calling process as described by json_cfg (to_json(ConfineSpec) plus "seccomp":
// true|false). 0, or -errno with a message "stage: strerror" in err.
PLOTQ_CAPI int plotq_confine_job(const char* json_cfg, char* err, std::size_t errlen);
// Arms the exec filter (execve/execveat -> EPERM, TSYNC) and sets PR_SET_DUMPABLE 0 again (an
// exec resets it). 0 with state "tsync"; else -errno with state naming why ("unavailable",
// "no_new_privs", "error:<errno>").
PLOTQ_CAPI int plotq_arm_exec_filter(char* state, std::size_t len);
}
