// plotq_r_zygote.so: the loop of the R zygote (sandbox/harness/rzygote.R hands control to it with
// .C once R has loaded its packages). It speaks harness/zygote.py's protocol toward the host
// (sandbox/zygote.cpp, one code path for every mode; docs/sandbox.md "Warm path"):
//   host -> Z: {"job", "slot", "mode", "argv", "env", "confine", "require_filter"}
//              + SCM_RIGHTS [stdout, stderr, report, status]
//   Z -> host, on the status socket: "pid" + [pidfd], then "exit <status> <utime us> <stime us>
//              <maxrss KiB>"; or "error <stage> <errno>" when no child could be made.
//   Z -> host, on the control socket: {"event": "ready", "mode": "r", "preload_s"} once.
// No spares: a job's child is forked when its message comes (an R fork and its confinement take
// 20-40 ms of a render's hundreds; sandbox/README.md). It is pid 1 of a fresh pid
// namespace, takes the job's descriptors as 1-3, closes everything else of the zygote, confines
// itself with libplotq_confine.so's plotq_confine_job (the same code as every job), takes the
// job's environment, a fresh R temp dir and the cold job's command line, and only then returns to
// R, which runs rharness.R exactly as a cold job does (it arms the exec filter first).
// The zygote itself never runs job code: every job is a fresh fork of it.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "sandbox/fd_passing.hpp"

// libR's, resolved when R dyn.loads this module (the R binary links libR.so).
extern "C" {
extern char* R_TempDir;                                     // Rembedded.h
void R_reInitTempDir(int die_on_fail);                      // exported, not in R's headers
void R_set_command_line_arguments(int argc, char** argv);  // R_ext/RStartup.h
}

namespace {

using plotq::sandbox::kMaxPassFds;
using Json = nlohmann::json;
using ConfineFn = int (*)(const char*, char*, std::size_t);
using PrepareFn = int (*)(char*, std::size_t);

constexpr std::size_t kMaxMessage = 1 << 20;  // as zygote.py's recv
constexpr int kSessionWaitMs = 2000;          // zygote.py wait_own_session

void log(const std::string& msg) {
  std::string line = "zygote[r]: " + msg + "\n";
  (void)!::write(2, line.data(), line.size());
}

void send_status(int fd, const std::string& text, int pass_fd = -1) {
  plotq::sandbox::send_record(fd, text.c_str(), pass_fd);  // the host may have given up: ignored
}

// Until `pid` leads its own session (become_job's first step): the host nices the job's
// session (its scheduler autogroup) as soon as it learns the pid.
void wait_own_session(pid_t pid) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kSessionWaitMs);
  while (::getsid(pid) >= 0 && ::getsid(pid) != pid && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}

[[noreturn]] void child_fail(const std::string& line) {
  (void)!::write(3, line.data(), line.size());
  ::_exit(125);
}

// In the job's child: becomes the job (message: its JSON). Returns to R only once everything of
// the job is in place. Throws on a malformed message, once the report descriptor is 3.
void become_job(const char* message, std::size_t len, const int fds[3], ConfineFn confine,
                const std::vector<std::string>& entry) {
  // The job's session first (the zygote sends its pid only then): it is also its scheduler
  // autogroup, which the host nices when it learns the pid. An unprivileged process may nice an
  // autogroup once per 100 ms machine-wide, so the host does it, not plotq_confine_job.
  ::setsid();
  // Above 3 first (a received descriptor may be 1-3), then onto 1-3; everything else of the
  // zygote goes: its control socket (fd 3 until now), other jobs' status sockets and pidfds.
  int high[3];
  for (int i = 0; i < 3; ++i) high[i] = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
  for (int i = 0; i < 3; ++i)
    if (high[i] < 0 || ::dup2(high[i], i + 1) < 0) ::_exit(125);
  ::syscall(SYS_close_range, 4U, ~0U, 0U);
  const Json job = Json::parse(message, message + len);
  std::string error;
  try {
    char err[256] = {};
    Json spec = job.at("confine");
    spec["new_session"] = false;  // made above
    int rc = confine(spec.dump().c_str(), err, sizeof err);
    if (rc != 0) error = "error confine:" + std::string(err) + " " + std::to_string(-rc) + "\n";
  } catch (const std::exception&) {
    error = "error confine:message 22\n";
  }
  if (!error.empty()) child_fail(error);
  // The job's environment, nothing of the zygote's.
  ::clearenv();
  for (const auto& [k, v] : job.at("env").items())
    if (v.is_string()) ::setenv(k.c_str(), v.get<std::string>().c_str(), 1);
  // R's temp dir, made as R makes it at start (TMPDIR/RtmpXXXXXX, R_SESSION_TMPDIR): the zygote's
  // lies in its own scratch dir, which the job cannot see.
  R_TempDir = nullptr;
  R_reInitTempDir(1);
  unsigned seed = 0;
  if (::getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = static_cast<unsigned>(::time(nullptr));
  std::srand(seed);  // R's tempfile() names (rand()): not the zygote's sequence in every job
  // The cold job's command line (commandArgs(): rharness.R reads its options and its own path there).
  std::vector<std::string> argv = entry;
  if (!job.value("require_filter", true)) argv.push_back("--filter-optional");
  argv.push_back("--");
  for (const auto& a : job.at("argv")) argv.push_back(a.get<std::string>());
  std::vector<char*> p;
  for (auto& a : argv) p.push_back(a.data());
  R_set_command_line_arguments(static_cast<int>(p.size()), p.data());
}

struct Running {
  pid_t pid;
  int status_fd;
};

class Loop {
 public:
  Loop(int ctl, ConfineFn confine, std::vector<std::string> entry)
      : ctl_(ctl), confine_(confine), entry_(std::move(entry)), buf_(kMaxMessage) {}

  // Serves until the host closes the control socket (then exits). Returns only in a job's child.
  void run() {
    own_pidns_ = ::open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (own_pidns_ < 0) fatal("open pid ns");
    for (;;) {
      std::vector<pollfd> p{{ctl_, POLLIN, 0}};
      for (const auto& [fd, r] : running_) p.push_back({fd, POLLIN, 0});
      if (::poll(p.data(), p.size(), -1) < 0) {
        if (errno == EINTR) continue;
        fatal("poll");
      }
      for (std::size_t i = 1; i < p.size(); ++i)
        if (p[i].revents) reap(p[i].fd);
      if (p[0].revents && on_control()) return;
    }
  }

 private:
  [[noreturn]] void fatal(const char* what) {
    log(std::string(what) + ": " + std::strerror(errno));
    ::_exit(1);
  }

  // True in a job's child (return to R).
  bool on_control() {
    int fds[kMaxPassFds];
    int nfds = 0;
    bool truncated = false;
    ssize_t n = plotq::sandbox::recv_with_fds(ctl_, buf_.data(), buf_.size(), 0, fds, kMaxPassFds, &nfds, &truncated);
    if (n < 0) fatal("control socket");
    if (n == 0 && nfds == 0) ::_exit(0);  // the host closed the control socket
    auto len = static_cast<std::size_t>(n);
    if (nfds == 0) {
      control(std::string(buf_.data(), len));
    } else if (nfds != 4 || truncated) {
      for (int i = 0; i < nfds; ++i) ::close(fds[i]);
      log("job message without its 4 descriptors");
    } else if (dispatch(len, fds)) {
      return true;
    }
    // Nothing of a message stays in the zygote, whose memory every later job inherits.
    ::explicit_bzero(buf_.data(), len);
    return false;
  }

  // Messages without descriptors: this zygote keeps no armed spares (spares_for("r") is 0); an
  // arm request is answered as a lost spare, so that the host never waits for one.
  void control(const std::string& text) {
    try {
      Json req = Json::parse(text);
      if (req.contains("arm")) {
        std::string ev = Json{{"event", "spare_lost"}, {"spare", req["arm"]}}.dump();
        (void)!::send(ctl_, ev.data(), ev.size(), MSG_NOSIGNAL);
      }
    } catch (const std::exception& e) {
      log(std::string("bad control message: ") + e.what());
    }
  }

  // The job message is parsed in its child only: the zygote never holds a job's fields on its
  // heap, where the next jobs would find them (freed memory keeps its bytes). It only looks for
  // the key of an armed spare (nlohmann's dump: "spare": unescaped only as a key).
  bool dispatch(std::size_t len, int fds[4]) {
    int status = fds[3];
    auto done = [&] {
      for (int i = 0; i < 3; ++i) ::close(fds[i]);
    };
    static constexpr char kSpareKey[] = "\"spare\":";
    if (::memmem(buf_.data(), len, kSpareKey, sizeof kSpareKey - 1)) {  // a spare this zygote never made: retried cold
      send_status(status, "error spare " + std::to_string(ENOENT));
      ::close(status);
      return done(), false;
    }
    // pid 1 of a fresh pid namespace, as every job's first process.
    if (::unshare(CLONE_NEWPID) != 0) {
      send_status(status, "error zygote " + std::to_string(errno));
      ::close(status);
      return done(), false;
    }
    std::fflush(nullptr);  // nothing of the zygote's buffered output reaches a job's stdout
    // R is not single-threaded here: cli (loaded by ggplot2 and dplyr) runs a timer thread that
    // only sleeps and sets a flag, holding no lock. The child keeps only this thread (and so can
    // arm its filters with TSYNC); cli's progress bars then never redraw in a job.
    pid_t pid = ::fork();
    if (pid == 0) {
      try {
        become_job(buf_.data(), len, fds, confine_, entry_);
      } catch (const std::exception&) {  // a malformed message: the host reads the report line
        child_fail("error confine:message " + std::to_string(EINVAL) + "\n");
      }
      return true;
    }
    int fork_errno = errno;
    // Back to our own pid namespace for the next fork (we are root in its user namespace).
    if (::setns(own_pidns_, CLONE_NEWPID) != 0) fatal("setns(pid)");
    done();
    if (pid < 0) {
      send_status(status, "error zygote " + std::to_string(fork_errno));
      ::close(status);
      return false;
    }
    int pidfd = plotq::sandbox::pidfd_open(pid);
    wait_own_session(pid);
    send_status(status, "pid", pidfd);
    if (pidfd < 0) {  // cannot be watched: collected (and its exit told) right here
      reap_now(pid, status);
      return false;
    }
    running_[pidfd] = {pid, status};
    return false;
  }

  void reap_now(pid_t pid, int status) {
    int st = 0;
    struct rusage ru {};
    while (::wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
    }
    char line[128];
    std::snprintf(line, sizeof line, "exit %d %lld %lld %ld", st,
                  static_cast<long long>(ru.ru_utime.tv_sec) * 1000000 + ru.ru_utime.tv_usec,
                  static_cast<long long>(ru.ru_stime.tv_sec) * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
    send_status(status, line);
    ::close(status);
  }

  void reap(int pidfd) {
    auto it = running_.find(pidfd);
    if (it == running_.end()) return;
    reap_now(it->second.pid, it->second.status_fd);
    ::close(pidfd);
    running_.erase(it);
  }

  int ctl_;
  ConfineFn confine_;
  std::vector<std::string> entry_;
  std::vector<char> buf_;
  int own_pidns_ = -1;
  std::map<int, Running> running_;  // pidfd -> job
};

}  // namespace

// .C("plotq_r_zygote_serve", ctl_fd, confine_lib, entry, n_entry, preload_s, status = integer(1)):
// entry is the cold job's command line up to its options (R binary, flags, -f rharness.R, --args,
// --report-fd 3, --lib plotq_r_arm.so). Never returns in the zygote; returns in a job's child with
// *status 0, everything of the job in place. *status 1: the zygote could not start (R quits).
extern "C" __attribute__((visibility("default"))) void plotq_r_zygote_serve(int* ctl_fd, char** confine_lib,
                                                                           char** entry, int* n_entry,
                                                                           double* preload_s, int* status) {
  *status = 1;
  void* lib = ::dlopen(*confine_lib, RTLD_NOW | RTLD_LOCAL);
  auto prepare = lib ? reinterpret_cast<PrepareFn>(::dlsym(lib, "plotq_confine_prepare")) : nullptr;
  auto confine = lib ? reinterpret_cast<ConfineFn>(::dlsym(lib, "plotq_confine_job")) : nullptr;
  if (!prepare || !confine) {
    log(std::string("cannot load ") + *confine_lib + ": " + (lib ? "missing symbols" : ::dlerror()));
    return;
  }
  char err[256] = {};
  if (prepare(err, sizeof err) != 0) {  // both seccomp programs, built once before any fork
    log(std::string("prepare failed: ") + err);
    return;
  }
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::signal(SIGCHLD, SIG_DFL);  // the loop reaps its own children (wait4), nothing else may
  std::vector<std::string> argv(entry, entry + *n_entry);
  try {
    std::string ready = Json{{"event", "ready"}, {"mode", "r"}, {"preload_s", *preload_s}}.dump();
    if (::send(*ctl_fd, ready.data(), ready.size(), MSG_NOSIGNAL) < 0) return;
    Loop(*ctl_fd, confine, std::move(argv)).run();
  } catch (const std::exception& e) {  // nothing may cross into R
    log(std::string("zygote failed: ") + e.what());
    ::_exit(1);
  }
  *status = 0;
}
