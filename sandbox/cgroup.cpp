#include "sandbox/cgroup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace plotq::sandbox {

namespace {

bool read_text(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  return true;
}

bool write_text(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

bool is_dir(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

// Unescapes the octal escapes (\040) of /proc/self/mountinfo fields.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Mounts {
  std::string v1_memory, v1_pids, v2;
};

Mounts find_mounts() {
  Mounts m;
  std::ifstream f("/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    // id parent maj:min root mountpoint options [optional...] - fstype source superoptions
    std::istringstream is(line);
    std::string id, parent, dev, root, mp, opts, tok;
    is >> id >> parent >> dev >> root >> mp >> opts;
    while (is >> tok && tok != "-") {
    }
    std::string fstype, source, super;
    is >> fstype >> source >> super;
    if (root != "/") continue;  // a bind of a sub-tree: not the hierarchy's root
    mp = unescape(mp);
    if (fstype == "cgroup2" && m.v2.empty()) m.v2 = mp;
    if (fstype != "cgroup") continue;
    std::istringstream so(super);
    std::string o;
    while (std::getline(so, o, ',')) {
      if (o == "memory" && m.v1_memory.empty()) m.v1_memory = mp;
      if (o == "pids" && m.v1_pids.empty()) m.v1_pids = mp;
    }
  }
  return m;
}

// This process's own group in a v1 hierarchy ("4:memory:/a/b") or v2 ("0::/a/b").
std::string own_group(const std::string& controller) {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    auto a = line.find(':');
    auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1);
    std::string path = line.substr(b + 1);
    std::istringstream cs(ctrls);
    std::string c;
    while (std::getline(cs, c, ','))
      if (c == controller) return path;
  }
  return "/";
}

bool pid_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// Seconds since the epoch at which process pid started (0 when unknown): /proc/stat's btime plus
// the 22nd field of /proc/<pid>/stat in clock ticks.
double process_started(pid_t pid) {
  std::string stat, sys;
  if (!read_text("/proc/" + std::to_string(pid) + "/stat", &stat) || !read_text("/proc/stat", &sys)) return 0;
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  for (int i = 3; i <= 22 && fields >> f; ++i)
    if (i == 22) {
      auto b = sys.find("btime ");
      if (b == std::string::npos) return 0;
      return std::strtod(sys.c_str() + b + 6, nullptr) + std::strtod(f.c_str(), nullptr) / double(::sysconf(_SC_CLK_TCK));
    }
  return 0;
}

// The group's launcher is gone: its pid is dead, or now names a process that started after the
// group was made (pids wrap quickly where pid_max is 32768).
bool launcher_gone(pid_t pid, const std::string& group) {
  if (!pid_alive(pid)) return true;
  struct stat st {};
  if (::stat(group.c_str(), &st) != 0) return false;
  double started = process_started(pid);
  return started > 0 && started > double(st.st_ctim.tv_sec) + 1.0;
}

// SIGKILLs what is still in a group and removes it, waiting a moment for the kernel to let the
// killed go (rmdir answers EBUSY while a task is in the group).
void kill_and_remove(const std::string& group) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::string procs;
    if (read_text(group + "/cgroup.procs", &procs)) {
      std::istringstream is(procs);
      long pid = 0;
      while (is >> pid)
        if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    if (::rmdir(group.c_str()) == 0 || errno != EBUSY) return;
    ::usleep(10'000);
  }
}

// Removes plotq-<pid> groups (and their slot groups) of processes that are gone. What is still in
// them is a dead plotqd's sandbox work (a child forked in the moment it died): it is killed, as
// the dead launcher would have.
void remove_stale(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = ::readdir(d)) {
    if (std::strncmp(e->d_name, "plotq-", 6) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(e->d_name + 6, &end, 10);
    if (!end || *end || pid <= 0 || pid == ::getpid()) continue;
    std::string group = dir + "/" + e->d_name;
    if (!launcher_gone(static_cast<pid_t>(pid), group)) continue;
    if (DIR* g = ::opendir(group.c_str())) {
      while (dirent* s = ::readdir(g))
        if (std::strncmp(s->d_name, "slot-", 5) == 0) kill_and_remove(group + "/" + s->d_name);
      ::closedir(g);
    }
    kill_and_remove(group);
  }
  ::closedir(d);
}

std::string make_launcher_group(const std::string& mount, const std::string& parent, std::string* why) {
  std::string base = mount + (parent == "/" ? "" : parent);
  if (!is_dir(base)) {
    *why = base + " missing";
    return {};
  }
  remove_stale(base);
  std::string dir = base + "/plotq-" + std::to_string(::getpid());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    *why = dir + ": " + std::strerror(errno);
    return {};
  }
  return dir;
}

std::uint64_t read_counter(const std::string& path, const std::string& key) {
  std::string text;
  if (!read_text(path, &text)) return 0;
  std::istringstream is(text);
  std::string k;
  std::uint64_t v;
  while (is >> k >> v)
    if (k == key) return v;
  return 0;
}

}  // namespace

CgroupSupport setup_cgroups(const std::string& cgroup_parent) {
  CgroupSupport s;
  Mounts m = find_mounts();
  std::string why_mem, why_pids;
  if (!m.v1_memory.empty() || !m.v1_pids.empty()) {
    s.version = 1;
    if (!m.v1_memory.empty())
      s.memory_dir = make_launcher_group(m.v1_memory, cgroup_parent.empty() ? own_group("memory") : cgroup_parent, &why_mem);
    else
      why_mem = "no v1 memory hierarchy";
    if (!m.v1_pids.empty())
      s.pids_dir = make_launcher_group(m.v1_pids, cgroup_parent.empty() ? own_group("pids") : cgroup_parent, &why_pids);
    else
      why_pids = "no v1 pids hierarchy";
  } else if (!m.v2.empty()) {
    // v2 forbids processes in inner groups: only a delegated, explicitly configured parent works.
    if (cgroup_parent.empty()) {
      s.detail = "cgroup v2 without memory/pids delegation (set cgroup_parent)";
      return s;
    }
    std::string ctrls;
    read_text(m.v2 + cgroup_parent + "/cgroup.subtree_control", &ctrls);
    if (ctrls.find("memory") == std::string::npos || ctrls.find("pids") == std::string::npos) {
      s.detail = "cgroup v2 parent lacks memory/pids in subtree_control";
      return s;
    }
    std::string dir = make_launcher_group(m.v2, cgroup_parent, &why_mem);
    if (!dir.empty() && write_text(dir + "/cgroup.subtree_control", "+memory +pids")) {
      s.version = 2;
      s.memory_dir = s.pids_dir = dir;
    }
  } else {
    s.detail = "no cgroup hierarchy mounted";
    return s;
  }
  if (s.detail.empty()) {
    s.detail = "v" + std::to_string(s.version);
    if (!s.memory()) s.detail += "; memory: " + why_mem;
    if (!s.pids()) s.detail += "; pids: " + why_pids;
  }
  return s;
}

void teardown_cgroups(const CgroupSupport& s) {
  for (const std::string& dir : {s.memory_dir, s.pids_dir}) {
    if (dir.empty()) continue;
    if (DIR* g = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(g))
        if (std::strncmp(e->d_name, "slot-", 5) == 0) ::rmdir((dir + "/" + e->d_name).c_str());
      ::closedir(g);
    }
    ::rmdir(dir.c_str());
  }
}

JobCgroup JobCgroup::make(const CgroupSupport& s, const std::string& name, std::uint64_t memory_bytes,
                          std::uint64_t pids_max, uid_t owner, gid_t group, std::string* err) {
  JobCgroup g;
  g.version_ = s.version;
  auto fail = [&](const std::string& what) {
    if (err) *err = what;
    return JobCgroup();
  };
  auto make_dir = [&](const std::string& parent) -> std::string {
    std::string dir = parent + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return {};
    return dir;
  };
  auto hand_over = [&](const std::string& dir) {
    // The job's first process joins by itself; it may be uid `owner` by then (zygote path).
    for (const char* f : {"cgroup.procs", "tasks"}) {
      std::string p = dir + "/" + f;
      if (exists(p) && ::chown(p.c_str(), owner, group) != 0) return false;
    }
    return true;
  };
  if (s.memory()) {
    g.memory_ = make_dir(s.memory_dir);
    if (g.memory_.empty()) return fail("mkdir memory group: " + std::string(std::strerror(errno)));
    std::string bytes = std::to_string(memory_bytes);
    if (s.version == 1) {
      if (!write_text(g.memory_ + "/memory.limit_in_bytes", bytes)) return fail("memory.limit_in_bytes");
      if (exists(g.memory_ + "/memory.memsw.limit_in_bytes"))
        write_text(g.memory_ + "/memory.memsw.limit_in_bytes", bytes);  // no swap either
    } else {
      if (!write_text(g.memory_ + "/memory.max", bytes)) return fail("memory.max");
      write_text(g.memory_ + "/memory.swap.max", "0");
    }
    if (!hand_over(g.memory_)) return fail("chown memory group");
    g.procs_files_.push_back(g.memory_ + "/cgroup.procs");
  }
  if (s.pids()) {
    g.pids_ = s.version == 2 ? g.memory_ : make_dir(s.pids_dir);
    if (g.pids_.empty()) return fail("mkdir pids group: " + std::string(std::strerror(errno)));
    if (!write_text(g.pids_ + "/pids.max", std::to_string(pids_max))) return fail("pids.max");
    if (s.version == 1) {
      if (!hand_over(g.pids_)) return fail("chown pids group");
      g.procs_files_.push_back(g.pids_ + "/cgroup.procs");
    }
  }
  return g;
}

std::uint64_t JobCgroup::oom_kills() const {
  if (memory_.empty()) return 0;
  return version_ == 1 ? read_counter(memory_ + "/memory.oom_control", "oom_kill")
                       : read_counter(memory_ + "/memory.events", "oom_kill");
}

std::uint64_t JobCgroup::memory_peak() const {
  if (memory_.empty()) return 0;
  std::string text;
  if (!read_text(memory_ + (version_ == 1 ? "/memory.max_usage_in_bytes" : "/memory.peak"), &text)) return 0;
  return std::strtoull(text.c_str(), nullptr, 10);
}

void JobCgroup::reset_peak() const {
  if (version_ == 1 && !memory_.empty()) write_text(memory_ + "/memory.max_usage_in_bytes", "0");
}

int JobCgroup::kill_all(uid_t uid) const {
  int n = 0;
  for (const std::string& f : procs_files_) {
    std::string text;
    if (!read_text(f, &text)) continue;
    std::istringstream is(text);
    long pid;
    while (is >> pid) {
      if (pid <= 1) continue;
      std::string status;
      if (!read_text("/proc/" + std::to_string(pid) + "/status", &status)) continue;
      auto at = status.find("\nUid:");
      if (at == std::string::npos || std::strtoul(status.c_str() + at + 5, nullptr, 10) != uid) continue;
      if (::kill(static_cast<pid_t>(pid), SIGKILL) == 0) ++n;
    }
  }
  return n;
}

bool JobCgroup::empty() const {
  for (const std::string& f : procs_files_) {
    std::string text;
    if (read_text(f, &text) && text.find_first_not_of(" \n") != std::string::npos) return false;
  }
  return true;
}

bool JobCgroup::remove() const {
  bool ok = true;
  if (!memory_.empty() && ::rmdir(memory_.c_str()) != 0 && errno != ENOENT) ok = false;
  if (!pids_.empty() && pids_ != memory_ && ::rmdir(pids_.c_str()) != 0 && errno != ENOENT) ok = false;
  return ok;
}

}  // namespace plotq::sandbox
