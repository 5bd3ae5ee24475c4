#include "sandbox/layers.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "sandbox/seccomp_filter.hpp"

namespace plotq::sandbox {

namespace {

// Runs fn in a child; returns the child's exit code (0 = success) or -1.
template <typename Fn>
int in_child(Fn fn) {
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) ::_exit(fn());
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string errno_detail(int code) { return code == 0 ? "ok" : code < 0 ? "child died" : std::string("failed: ") + std::strerror(code); }

int unshare_test(int flags) {
  return in_child([flags] { return ::unshare(flags) == 0 ? 0 : errno; });
}

// Inside a job, /tmp, the runs dir, the lock dir and every hidden path are empty tmpfs mounts.
bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; }
bool readable(const std::string& p) { return !p.empty() && ::access(p.c_str(), R_OK) == 0; }

}  // namespace

bool LayerReport::active(const std::string& name) const {
  const Layer* l = find(name);
  return l && l->active;
}

const Layer* LayerReport::find(const std::string& name) const {
  for (const Layer& l : layers)
    if (l.name == name) return &l;
  return nullptr;
}

LayerReport probe_layers(const Config& config, const CgroupSupport& cgroups) {
  LayerReport r;
  auto add = [&](const std::string& name, int code, bool enabled, std::string detail = {}) {
    Layer l;
    l.name = name;
    l.available = code == 0;
    l.active = l.available && enabled;
    l.detail = detail.empty() ? errno_detail(code) : detail;
    if (l.available && !enabled) l.detail += " (disabled by config)";
    r.layers.push_back(l);
  };
  const bool warm = !config.sandbox_cold && !config.warm_modes.empty();
  const uid_t uid = config.sandbox_uid_base + 1;

  int code = in_child([uid] {
    if (::setgroups(0, nullptr) != 0) return errno;
    if (::setresgid(uid, uid, uid) != 0 || ::setresuid(uid, uid, uid) != 0) return errno;
    return ::setuid(0) == 0 ? EPERM : 0;  // must not be able to go back
  });
  add("uid", code, config.sandbox_uid_base != 0, code == 0 ? "jobs run as " + std::to_string(config.sandbox_uid_base) + "+" : "");
  add("no_new_privs", in_child([] { return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno; }), true);
  code = in_child([] {
    struct rlimit l = {64, 64};
    if (::setrlimit(RLIMIT_NPROC, &l) != 0) return errno;
    l = {1, 1};
    return ::setrlimit(RLIMIT_CORE, &l) == 0 ? 0 : errno;
  });
  add("rlimits", code, true, code == 0 ? "as, nproc, cpu, fsize, nofile, core" : "");

  BpfProgram exec_filter;
  std::string seccomp_error;
  try {
    exec_filter = build_exec_filter();
    build_base_filter();
  } catch (const std::exception& e) {
    seccomp_error = e.what();
  }
  if (seccomp_error.empty()) {
    code = in_child([&exec_filter] {
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
      int rc = install_filter(exec_filter.insns.data(), static_cast<unsigned short>(exec_filter.insns.size()), true);
      if (rc != 0) return -rc;
      char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
      ::execve("/bin/true", argv, nullptr);
      return errno == EPERM ? 0 : EINVAL;  // exec must have been refused with EPERM
    });
    add("seccomp", code, true, code == 0 ? "libseccomp filters with TSYNC; refusals are EPERM" : "");
    add("exec_filter", code, true, code == 0 ? "execve/execveat -> EPERM after the entry starts" : "");
  } else {
    add("seccomp", ENOSYS, true, seccomp_error);
    add("exec_filter", ENOSYS, true, seccomp_error);
  }

  code = in_child([] {
    if (::unshare(CLONE_NEWPID) != 0) return errno;
    pid_t p = ::fork();
    if (p < 0) return errno;
    if (p == 0) ::_exit(::getpid() == 1 ? 0 : 1);
    int st = 0;
    ::waitpid(p, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : EINVAL;
  });
  add("pid_ns", code, true);
  add("net_ns", unshare_test(CLONE_NEWNET), true, "");
  code = in_child([] {
    if (::unshare(CLONE_NEWNS) != 0) return errno;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
    return ::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k") == 0 ? 0 : errno;
  });
  add("mount_ns", code, true);
  add("ipc_ns", unshare_test(CLONE_NEWIPC), true);
  add("uts_ns", unshare_test(CLONE_NEWUTS), true);
  add("user_ns", unshare_test(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS), warm,
      warm ? "" : "not needed: warm starts off");

  add("cgroup_memory", cgroups.memory() ? 0 : ENOENT, config.sandbox_cgroup,
      cgroups.memory() ? cgroups.memory_dir : cgroups.detail);
  add("cgroup_pids", cgroups.pids() ? 0 : ENOENT, config.sandbox_cgroup, cgroups.pids() ? cgroups.pids_dir : cgroups.detail);
  code = in_child([] {
    long fd = ::syscall(SYS_pidfd_open, ::getppid(), 0);
    return fd >= 0 ? 0 : errno;
  });
  add("pidfd", code, true);
  auto visible_file = [&](const std::string& name, const std::string& path, bool ok) {
    if (hidden_in_jobs(config, path)) add(name, EACCES, true, path + ": hidden inside jobs (under /tmp or a hidden path)");
    else if (!ok) add(name, ENOENT, true, path + ": missing");
    else add(name, 0, true, path);
  };
  visible_file("python", config.python, executable(config.python));
  visible_file("confine_lib", config.confine_lib,
               readable(config.confine_lib) && readable(exec_arm_module(config)));
  visible_file("harness", config.harness_dir, readable(config.harness_dir + "/entry.py"));
  bool warm_ok = r.active("user_ns") && r.active("confine_lib") && r.active("harness") &&
                 readable(config.harness_dir + "/zygote.py");
  add("warm", warm_ok ? 0 : ENOENT, warm, warm_ok ? "zygotes for: " + [&] {
        std::string s;
        for (const auto& m : config.warm_modes) s += (s.empty() ? "" : ",") + m;
        return s;
      }() : "needs user_ns, confine_lib and zygote.py");

  r.required = config.required_layers;
  for (const std::string& name : r.required)
    if (!r.active(name)) r.missing.push_back(name);
  return r;
}

nlohmann::json to_json(const LayerReport& r) {
  nlohmann::json layers = nlohmann::json::object();
  for (const Layer& l : r.layers)
    layers[l.name] = {{"active", l.active}, {"available", l.available}, {"detail", l.detail}};
  return {{"ok", r.ok()}, {"layers", layers}, {"required", r.required}, {"missing", r.missing}};
}

}  // namespace plotq::sandbox
