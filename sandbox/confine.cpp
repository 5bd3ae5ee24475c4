#include "sandbox/confine.hpp"

#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "sandbox/credentials.hpp"
#include "sandbox/mounts.hpp"
#include "sandbox/namespaces.hpp"
#include "sandbox/seccomp_filter.hpp"

namespace plotq::sandbox {

int set_autogroup_nice(pid_t pid, int nice) {
  if (nice < 0 || nice > 19) return -EINVAL;
  char path[48], text[4];
  if (pid == 0) std::snprintf(path, sizeof path, "/proc/self/autogroup");
  else std::snprintf(path, sizeof path, "/proc/%d/autogroup", static_cast<int>(pid));
  int len = std::snprintf(text, sizeof text, "%d", nice);
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = ::write(fd, text, static_cast<size_t>(len)) == len ? 0 : -errno;
  ::close(fd);
  return rc;
}

namespace {

int join_cgroup(const char* procs_file) {
  int fd = ::open(procs_file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int rc = ::write(fd, "0", 1) == 1 ? 0 : -errno;
  ::close(fd);
  return rc;
}

}  // namespace

int confine_job(const ConfineSpec& spec, const char** stage) {
  const char* dummy = nullptr;
  if (!stage) stage = &dummy;
  auto fail = [&](const char* s) {
    *stage = s;
    return -errno;
  };
  if (spec.new_session && ::setsid() < 0) return fail("setsid");
  // First victim of any OOM kill, in its cgroup (before a zygote's waiting spare) and on the
  // machine (before plotqd). Raising it needs no privilege; the job cannot lower it again.
  if (int fd = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC); fd >= 0) {
    bool ok = ::write(fd, "1000", 4) == 4;
    ::close(fd);
    if (!ok) return fail("oom_score_adj");
  }
  // Below the service: a busy job yields its core to plotqd's loop (stream writes, plain turns).
  errno = 0;
  int current = ::getpriority(PRIO_PROCESS, 0);
  if (errno != 0) return fail("nice");
  if (spec.nice > current && ::setpriority(PRIO_PROCESS, 0, spec.nice) != 0) return fail("nice");
  // A new session is a new scheduler autogroup, and autogroups share the CPU equally whatever
  // their members' niceness: the group's own niceness goes up too. Done here when this call made
  // the session (the cold path, still root); a warm job's session is made by its spare ahead of
  // time and niced by the host, as unprivileged writes are limited to one per 100 ms.
  if (spec.new_session && spec.nice > 0) {
    if (int e = set_autogroup_nice(0, spec.nice); e != 0 && e != -ENOENT) {
      *stage = "nice";
      return e;
    }
  }
  if (spec.unshare_flags && ::unshare(spec.unshare_flags) != 0) return fail("unshare");
  // Before the mounts turn /sys/fs/cgroup read-only, and before the uid changes.
  for (int i = 0; i < spec.n_cgroups; ++i) {
    if (int e = join_cgroup(spec.cgroup_procs[i])) {
      *stage = "cgroup";
      return e;
    }
  }
  if (spec.unshare_flags & CLONE_NEWNS) {
    if (int e = setup_job_mounts(spec, stage)) return e;
    if (::chdir(kJobDirInside) != 0) return fail("chdir");
  }
  if (int e = drop_to(spec.uid, spec.gid, spec.drop_groups, stage)) return e;
  const char* which = nullptr;
  if (int e = apply_rlimits(spec.rlimits, &which)) {
    *stage = "rlimit";  // which names the limit; kept constant so that no string is built here
    if (which && std::strcmp(which, "as") == 0) *stage = "rlimit:as";
    if (which && std::strcmp(which, "nproc") == 0) *stage = "rlimit:nproc";
    if (which && std::strcmp(which, "cpu") == 0) *stage = "rlimit:cpu";
    if (which && std::strcmp(which, "fsize") == 0) *stage = "rlimit:fsize";
    if (which && std::strcmp(which, "nofile") == 0) *stage = "rlimit:nofile";
    return e;
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("no_new_privs");
  // Non-dumpable: no other process of the same uid may open our /proc/<pid>/mem or ptrace us.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return fail("dumpable");
  if (spec.filter && spec.filter_len) {
    if (int e = install_filter(spec.filter, spec.filter_len, true)) {
      *stage = "seccomp";
      return e;
    }
  }
  return 0;
}

bool set_path(char* dst, const std::string& src) {
  if (src.size() >= static_cast<size_t>(ConfineSpec::kPath) || src.find('\0') != std::string::npos) return false;
  std::memcpy(dst, src.c_str(), src.size() + 1);
  return true;
}

nlohmann::json to_json(const ConfineSpec& s) {
  nlohmann::json j;
  j["unshare_flags"] = s.unshare_flags;
  j["new_session"] = s.new_session;
  j["cgroup_procs"] = nlohmann::json::array();
  for (int i = 0; i < s.n_cgroups; ++i) j["cgroup_procs"].push_back(s.cgroup_procs[i]);
  j["work_dir"] = s.work_dir;
  j["work_dev"] = s.work_dev;
  j["work_ino"] = s.work_ino;
  j["read_only_root"] = s.read_only_root;
  j["mount_proc"] = s.mount_proc;
  j["hidden"] = nlohmann::json::array();
  for (int i = 0; i < s.n_hidden; ++i) j["hidden"].push_back(s.hidden[i]);
  j["uid"] = s.uid;
  j["gid"] = s.gid;
  j["drop_groups"] = s.drop_groups;
  j["rlimits"] = {{"as_bytes", s.rlimits.as_bytes}, {"nproc", s.rlimits.nproc},
                  {"cpu_s", s.rlimits.cpu_s}, {"fsize_bytes", s.rlimits.fsize_bytes},
                  {"nofile", s.rlimits.nofile}};
  j["nice"] = s.nice;
  return j;
}

void from_json_spec(const nlohmann::json& j, ConfineSpec* s) {
  *s = ConfineSpec();
  s->unshare_flags = j.at("unshare_flags").get<int>();
  s->new_session = j.value("new_session", true);
  const auto& cg = j.at("cgroup_procs");
  if (cg.size() > static_cast<size_t>(ConfineSpec::kMaxCgroups)) throw std::invalid_argument("too many cgroups");
  for (const auto& p : cg)
    if (!set_path(s->cgroup_procs[s->n_cgroups++], p.get<std::string>())) throw std::invalid_argument("cgroup path");
  if (!set_path(s->work_dir, j.at("work_dir").get<std::string>())) throw std::invalid_argument("work_dir");
  s->work_dev = j.at("work_dev").get<std::uint64_t>();
  s->work_ino = j.at("work_ino").get<std::uint64_t>();
  s->read_only_root = j.value("read_only_root", true);
  s->mount_proc = j.value("mount_proc", true);
  const auto& hidden = j.at("hidden");
  if (hidden.size() > static_cast<size_t>(ConfineSpec::kMaxHidden)) throw std::invalid_argument("too many hidden paths");
  for (const auto& p : hidden)
    if (!set_path(s->hidden[s->n_hidden++], p.get<std::string>())) throw std::invalid_argument("hidden path");
  s->uid = j.at("uid").get<std::uint32_t>();
  s->gid = j.at("gid").get<std::uint32_t>();
  s->drop_groups = j.value("drop_groups", true);
  const auto& r = j.at("rlimits");
  s->rlimits.as_bytes = r.at("as_bytes").get<std::uint64_t>();
  s->rlimits.nproc = r.at("nproc").get<std::uint64_t>();
  s->rlimits.cpu_s = r.at("cpu_s").get<std::uint64_t>();
  s->rlimits.fsize_bytes = r.at("fsize_bytes").get<std::uint64_t>();
  s->rlimits.nofile = r.at("nofile").get<std::uint64_t>();
  s->nice = j.value("nice", 0);
  if (s->nice < 0 || s->nice > 19) throw std::invalid_argument("nice");
}

}  // namespace plotq::sandbox

// ---- C API ------------------------------------------------------------------------------------

namespace {

using plotq::sandbox::BpfProgram;

// Built once (plotq_confine_prepare in the zygote, before it forks) and inherited by every child.
BpfProgram* g_base = nullptr;
BpfProgram* g_exec = nullptr;

void put(char* buf, std::size_t len, const char* text) {
  if (buf && len) std::snprintf(buf, len, "%s", text);
}

int prepare(char* err, std::size_t errlen) {
  try {
    if (!g_base) g_base = new BpfProgram(plotq::sandbox::build_base_filter());
    if (!g_exec) g_exec = new BpfProgram(plotq::sandbox::build_exec_filter());
    return 0;
  } catch (const std::exception& e) {
    put(err, errlen, e.what());
    return -ENOSYS;
  }
}

}  // namespace

extern "C" int plotq_confine_prepare(char* err, std::size_t errlen) { return prepare(err, errlen); }

extern "C" int plotq_confine_job(const char* json_cfg, char* err, std::size_t errlen) {
  plotq::sandbox::ConfineSpec spec;
  bool seccomp = true;
  try {
    auto j = nlohmann::json::parse(json_cfg ? json_cfg : "");
    plotq::sandbox::from_json_spec(j, &spec);
    seccomp = j.value("seccomp", true);
  } catch (const std::exception& e) {
    put(err, errlen, (std::string("config: ") + e.what()).c_str());
    return -EINVAL;
  }
  if (seccomp) {
    if (int e = prepare(err, errlen)) return e;
    spec.filter = g_base->insns.data();
    spec.filter_len = static_cast<unsigned short>(g_base->insns.size());
  }
  const char* stage = nullptr;
  int rc = plotq::sandbox::confine_job(spec, &stage);
  if (rc != 0) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "%s: %s", stage ? stage : "?", std::strerror(-rc));
    put(err, errlen, msg);
  }
  return rc;
}

extern "C" int plotq_arm_exec_filter(char* state, std::size_t len) {
  if (int e = prepare(nullptr, 0)) {
    put(state, len, "unavailable");
    return e;
  }
  // An exec (the cold path) made us dumpable again.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    put(state, len, "no_new_privs");
    return -errno;
  }
  int rc = plotq::sandbox::install_filter(g_exec->insns.data(), static_cast<unsigned short>(g_exec->insns.size()), true);
  if (rc != 0) {
    char msg[64];
    std::snprintf(msg, sizeof msg, "error:%s", rc == -EINVAL || rc == -ENOSYS ? "unavailable" : std::strerror(-rc));
    put(state, len, msg);
    return rc;
  }
  put(state, len, "tsync");
  return 0;
}
