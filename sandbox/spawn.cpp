#include "sandbox/spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <grp.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <type_traits>

#include "sandbox/namespaces.hpp"

namespace plotq::sandbox {

void ExecImage::seal() {
  argv_p.clear();
  env_p.clear();
  for (auto& a : argv) argv_p.push_back(a.data());
  argv_p.push_back(nullptr);
  for (auto& e : env) env_p.push_back(e.data());
  env_p.push_back(nullptr);
}

int JobChannels::open() {
  int p[2];
  auto pipe_pair = [&](int* r, int* w) {
    if (::pipe2(p, O_CLOEXEC) != 0) return -errno;
    *r = p[0];
    *w = p[1];
    ::fcntl(*r, F_SETFL, O_NONBLOCK);
    return 0;
  };
  if (int e = pipe_pair(&stdout_r, &child.stdout_w)) return e;
  if (int e = pipe_pair(&stderr_r, &child.stderr_w)) return e;
  if (int e = pipe_pair(&report_r, &child.report_w)) return e;
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) != 0) return -errno;
  status_r = p[0];
  child.status_w = p[1];
  ::fcntl(status_r, F_SETFL, O_NONBLOCK);
  return 0;
}

void JobChannels::close_child() {
  for (int* fd : {&child.stdout_w, &child.stderr_w, &child.report_w, &child.status_w}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void JobChannels::close_all() {
  close_child();
  for (int* fd : {&stdout_r, &stderr_r, &report_r, &status_r}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

pid_t pid_of_pidfd(int pidfd) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  std::ifstream f(path);
  std::string key;
  while (f >> key) {
    if (key == "Pid:") {
      long pid = -1;
      f >> pid;
      return pid > 0 ? static_cast<pid_t>(pid) : -1;
    }
  }
  return -1;
}

int pidfd_kill(int pidfd, int sig) {
  return ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0 ? 0 : -errno;
}

int reap_pidfd(int pidfd, bool block, int* status) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  constexpr int kPidfd = 3;  // P_PIDFD
  long rc = ::syscall(SYS_waitid, kPidfd, pidfd, &info, WEXITED | (block ? 0 : WNOHANG), nullptr);
  if (rc != 0) return -errno;
  if (info.si_pid == 0) return 0;
  if (status) {
    if (info.si_code == CLD_EXITED) *status = (info.si_status & 0xff) << 8;
    else *status = info.si_status & 0x7f;  // killed / dumped: the signal
  }
  return 1;
}

int send_job_fds(int sock, const void* data, std::size_t len, const ChildFds& fds) {
  const int pass[4] = {fds.stdout_w, fds.stderr_w, fds.report_w, fds.status_w};
  return send_with_fds(sock, data, len, pass, 4, MSG_DONTWAIT);
}

int recv_record(int sock, Record* out) {
  char buf[512];
  int nfds = 0;
  ssize_t n = recv_with_fds(sock, buf, sizeof buf - 1, MSG_DONTWAIT, &out->fd, 1, &nfds, nullptr);
  if (n < 0) return static_cast<int>(n);
  if (nfds == 0) out->fd = -1;
  if (n == 0 && out->fd < 0) return 0;  // SEQPACKET: an empty read is EOF
  out->text.assign(buf, static_cast<size_t>(n));
  return 1;
}

namespace {

// --- fork-safe helpers (no allocation, no locks) ---

void put_fd(int from, int to) {
  if (from == to) {
    int fl = ::fcntl(to, F_GETFD);
    ::fcntl(to, F_SETFD, fl & ~FD_CLOEXEC);
  } else {
    ::dup2(from, to);
  }
}

// Moves `fds` (n of them) to 0..n-1 (a -1 becomes /dev/null) and closes every other descriptor.
bool arrange_fds(const int* fds, int n) {
  int high[8];
  for (int i = 0; i < n; ++i) {
    int src = fds[i] >= 0 ? fds[i] : ::open("/dev/null", O_RDWR | O_CLOEXEC);
    high[i] = ::fcntl(src, F_DUPFD_CLOEXEC, 64);  // out of the way of the targets
    if (high[i] < 0) return false;
  }
  for (int i = 0; i < n; ++i) put_fd(high[i], i);
  return ::syscall(SYS_close_range, n, ~0U, 0) == 0;
}

void reset_signals() {
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    ::signal(s, SIG_DFL);
  }
}

void write_str(int fd, const char* s) {
  size_t len = std::strlen(s);
  while (len > 0) {
    ssize_t n = ::write(fd, s, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    s += n;
    len -= static_cast<size_t>(n);
  }
}

void fail_record_keep(int sock, const char* stage, int err) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "error %s %d", stage, err);
  send_record(sock, buf, -1);
}

[[noreturn]] void fail_record(int sock, const char* stage, int err) {
  fail_record_keep(sock, stage, err);
  ::_exit(1);
}

}  // namespace

namespace {

// The body of C (see the header): never returns. Runs in a fresh child of the host or of a cold
// helper; fds are the child ends of the job's channels.
[[noreturn]] void run_c(const ConfineSpec& spec, const char* path, char* const argv[], char* const envp[],
                        const ChildFds& fds) {
  reset_signals();
  // 0 stdin (/dev/null), 1 stdout, 2 stderr, 3 report, 4 status.
  const int want[5] = {-1, fds.stdout_w, fds.stderr_w, fds.report_w, fds.status_w};
  if (!arrange_fds(want, 5)) ::_exit(1);
  ::setsid();
  if (::unshare(CLONE_NEWPID) != 0) fail_record(4, "unshare-pid", errno);
  pid_t g = ::fork();
  if (g < 0) fail_record(4, "fork", errno);
  if (g == 0) {
    // --- G: pid 1 of the job's pid namespace ---
    ::close(4);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);  // set again after the uid change (confine)
    const char* stage = nullptr;
    int rc = confine_job(spec, &stage);
    if (rc != 0) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "error confine:%s %d\n", stage ? stage : "?", -rc);
      write_str(3, buf);
      ::_exit(125);
    }
    ::execve(path, argv, envp);
    char buf[64];
    std::snprintf(buf, sizeof buf, "error exec %d\n", errno);
    write_str(3, buf);
    ::_exit(127);
  }
  // C keeps only the status socket.
  int null = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 4; ++fd) ::dup2(null, fd);
  if (null > 4) ::close(null);
  int pfd = pidfd_open(g);
  send_record(4, "pid", pfd);  // a failed pidfd_open sends no fd: the host then has no early kill
  int st = 0;
  struct rusage ru;
  std::memset(&ru, 0, sizeof ru);
  while (::wait4(g, &st, 0, &ru) < 0) {
    if (errno != EINTR) fail_record(4, "wait4", errno);
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "exit %d %lld %lld %ld", st,
                static_cast<long long>(ru.ru_utime.tv_sec) * 1000000 + ru.ru_utime.tv_usec,
                static_cast<long long>(ru.ru_stime.tv_sec) * 1000000 + ru.ru_stime.tv_usec, ru.ru_maxrss);
  send_record(4, buf, -1);
  ::_exit(0);
}

}  // namespace

int spawn_cold(const ConfineSpec& spec, const ExecImage& image, const ChildFds& fds, Spawned* out) {
  pid_t host = ::getpid();
  pid_t c = ::fork();
  if (c < 0) return -errno;
  if (c == 0) {
    // --- C ---
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != host) ::_exit(1);
    run_c(spec, image.path.c_str(), image.argv_p.data(), image.env_p.data(), fds);
  }
  out->pid = c;
  out->pidfd = pidfd_open(c);
  if (out->pidfd >= 0) ::fcntl(out->pidfd, F_SETFD, FD_CLOEXEC);
  return 0;
}

// ---- cold helper ------------------------------------------------------------------------------

namespace {

constexpr std::uint32_t kHelperMagic = 0x706c7131;  // "plq1"
constexpr int kHelperMaxStrings = 512;
// The spec travels as its bytes: it must stay plain data (fixed buffers, no owning pointers; the
// one pointer, the filter, is replaced on arrival).
static_assert(std::is_trivially_copyable_v<ConfineSpec>);

struct HelperHeader {
  std::uint32_t magic;
  std::uint32_t spec_size;
  std::uint32_t argc, envc;
  std::uint32_t strings_len;  // path, argv..., env..., each NUL-terminated
};

// The helper's receive buffer and decoded job (static: the helper is a fork of a multi-threaded
// host and never allocates).
alignas(16) char g_helper_buf[1 << 18];
ConfineSpec g_helper_spec;
char* g_helper_argv[kHelperMaxStrings + 1];
char* g_helper_env[kHelperMaxStrings + 1];

// Decodes the message in g_helper_buf (n bytes) into g_helper_spec, argv and env; *path points
// into the buffer. False on anything malformed (the host is trusted, but a bad message must not
// make the helper read past what came).
bool decode_helper_message(std::size_t n, const sock_filter* filter, unsigned short filter_len, char** path) {
  HelperHeader h;
  if (n < sizeof h) return false;
  std::memcpy(&h, g_helper_buf, sizeof h);
  if (h.magic != kHelperMagic || h.spec_size != sizeof(ConfineSpec) || h.argc < 1 || h.argc > kHelperMaxStrings ||
      h.envc > kHelperMaxStrings || h.strings_len == 0 || sizeof h + sizeof(ConfineSpec) + h.strings_len != n)
    return false;
  std::memcpy(&g_helper_spec, g_helper_buf + sizeof h, sizeof(ConfineSpec));
  g_helper_spec.filter = filter;  // our own copy of the host's program (inherited at fork)
  g_helper_spec.filter_len = filter_len;
  char* p = g_helper_buf + sizeof h + sizeof(ConfineSpec);
  char* end = g_helper_buf + n;
  if (end[-1] != 0) return false;  // the last string must end inside the message
  auto next = [&](char** out) {
    if (p >= end) return false;
    *out = p;
    p += std::strlen(p) + 1;  // stops at end[-1] at the latest
    return true;
  };
  if (!next(path)) return false;
  for (std::uint32_t i = 0; i < h.argc; ++i)
    if (!next(&g_helper_argv[i])) return false;
  g_helper_argv[h.argc] = nullptr;
  for (std::uint32_t i = 0; i < h.envc; ++i)
    if (!next(&g_helper_env[i])) return false;
  g_helper_env[h.envc] = nullptr;
  return p == end;  // nothing left over
}

[[noreturn]] void helper_main(const sock_filter* filter, unsigned short filter_len) {
  // fd 3: the control socket. Children are reaped by the kernel (C resets SIGCHLD itself).
  ::signal(SIGCHLD, SIG_IGN);
  const pid_t self = ::getpid();
  for (;;) {
    int fds[4] = {-1, -1, -1, -1};
    int nfds = 0;
    bool truncated = false;
    ssize_t n = recv_with_fds(3, g_helper_buf, sizeof g_helper_buf, 0, fds, 4, &nfds, &truncated);
    if (n <= 0 && nfds == 0) ::_exit(0);  // the host closed it (or is gone)
    char* path = nullptr;
    bool ok = n > 0 && !truncated && nfds == 4 &&
              decode_helper_message(static_cast<std::size_t>(n), filter, filter_len, &path);
    if (ok) {
      const ChildFds cf{fds[0], fds[1], fds[2], fds[3]};
      pid_t c = ::fork();
      if (c == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (::getppid() != self) ::_exit(1);  // the helper died before PDEATHSIG was set
        ::close(3);
        run_c(g_helper_spec, path, g_helper_argv, g_helper_env, cf);
      }
      if (c < 0) fail_record_keep(fds[3], "fork", errno);
    } else if (nfds == 4) {
      fail_record_keep(fds[3], "helper-message", EINVAL);
    }
    for (int i = 0; i < nfds; ++i) ::close(fds[i]);
  }
}

}  // namespace

int ColdHelper::start(const std::vector<std::string>& cgroup_procs, const sock_filter* filter,
                      unsigned short filter_len) {
  stop();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -errno;
  // Everything the helper needs is prepared here (it must not allocate after fork).
  std::vector<int> procs_fds;
  auto fail = [&](int e) {
    for (int x : procs_fds) ::close(x);
    ::close(sv[0]);
    ::close(sv[1]);
    return e;
  };
  for (const auto& f : cgroup_procs) {
    int fd = ::open(f.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return fail(-errno);
    procs_fds.push_back(fd);
  }
  pid_t host = ::getpid();
  pid_t h = ::fork();
  if (h < 0) return fail(-errno);
  if (h == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != host) ::_exit(1);
    ::prctl(PR_SET_NAME, "plotq-cold", 0, 0, 0);  // in ps/top: not one more copy of the host
    reset_signals();
    // Join the slot's cgroups once: every job forked from here is born in them (a v1 migration
    // costs an RCU grace period; this way no job pays it).
    for (int fd : procs_fds)
      if (::write(fd, "0", 1) != 1) ::_exit(2);
    const int want[4] = {-1, -1, 2, sv[1]};
    if (!arrange_fds(want, 4)) ::_exit(1);
    helper_main(filter, filter_len);
  }
  for (int x : procs_fds) ::close(x);
  ::close(sv[1]);
  ctl_ = sv[0];
  pid_ = h;
  pidfd_ = pidfd_open(h);
  if (pidfd_ >= 0) ::fcntl(pidfd_, F_SETFD, FD_CLOEXEC);
  return 0;
}

bool ColdHelper::alive() const {
  if (pid_ <= 0 || pidfd_ < 0) return false;
  struct pollfd p = {pidfd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;  // readable = exited
}

int ColdHelper::spawn(const ConfineSpec& spec, const ExecImage& image, const ChildFds& fds) {
  if (!alive()) return -ESRCH;
  HelperHeader h;
  h.magic = kHelperMagic;
  h.spec_size = sizeof(ConfineSpec);
  h.argc = static_cast<std::uint32_t>(image.argv.size());
  h.envc = static_cast<std::uint32_t>(image.env.size());
  if (h.argc == 0 || h.argc > kHelperMaxStrings || h.envc > kHelperMaxStrings) return -E2BIG;
  std::string strings = image.path + '\0';
  for (const auto& a : image.argv) strings += a + '\0';
  for (const auto& e : image.env) strings += e + '\0';
  h.strings_len = static_cast<std::uint32_t>(strings.size());
  std::string msgbuf(reinterpret_cast<const char*>(&h), sizeof h);
  msgbuf.append(reinterpret_cast<const char*>(&spec), sizeof spec);
  msgbuf += strings;
  if (msgbuf.size() > sizeof g_helper_buf) return -E2BIG;
  return send_job_fds(ctl_, msgbuf.data(), msgbuf.size(), fds);
}

void ColdHelper::stop() {
  if (ctl_ >= 0) ::close(ctl_);  // EOF: it exits
  ctl_ = -1;
  if (pidfd_ >= 0) {
    struct pollfd p = {pidfd_, POLLIN, 0};
    if (::poll(&p, 1, 1000) != 1) pidfd_kill(pidfd_, SIGKILL);
    reap_pidfd(pidfd_, true, nullptr);
    ::close(pidfd_);
  } else if (pid_ > 0) {  // no pidfd (pidfd_open failed): by pid, it is our child
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pidfd_ = -1;
  pid_ = -1;
}

ColdHelper::~ColdHelper() { stop(); }

int spawn_zygote_keeper(const ExecImage& image, int ctrl, int sync_up_w, int sync_down_r, Spawned* out) {
  pid_t host = ::getpid();
  pid_t k = ::fork();
  if (k < 0) return -errno;
  if (k == 0) {
    // --- K ---
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != host) ::_exit(1);
    reset_signals();
    // 0 /dev/null, 1 /dev/null, 2 the host's stderr, 3 ctrl, 4 sync up, 5 sync down.
    const int want[6] = {-1, -1, 2, ctrl, sync_up_w, sync_down_r};
    if (!arrange_fds(want, 6)) ::_exit(1);
    ::setsid();
    // No supplementary group may follow us into the user namespace (setgroups is denied there).
    if (::setgroups(0, nullptr) != 0) ::_exit(2);
    if (::unshare(zygote_namespaces()) != 0) ::_exit(3);
    if (::write(4, "u", 1) != 1) ::_exit(4);
    char go = 0;
    if (::read(5, &go, 1) != 1 || go != 'g') ::_exit(5);
    ::close(5);
    if (::setresgid(0, 0, 0) != 0 || ::setresuid(0, 0, 0) != 0) ::_exit(6);
    // The uid change cleared the parent-death signal (prctl(2)): without it again a K and its
    // zygote outlived a killed host (tests/crash). The host may have died in between: then go.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (::getppid() != host) ::_exit(1);
    pid_t z = ::fork();
    if (z < 0) ::_exit(7);
    if (z == 0) {
      // --- Z: pid 1 of the zygote's pid namespace, root of its user namespace ---
      ::close(4);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(8);
      ::execve(image.path.c_str(), image.argv_p.data(), image.env_p.data());
      ::_exit(127);
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "z%d\n", static_cast<int>(z));
    write_str(4, buf);
    ::close(4);
    ::close(3);  // only Z holds the control socket: its EOF means Z is gone
    int st = 0;
    while (::waitpid(z, &st, 0) < 0 && errno == EINTR) {
    }
    ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  }
  out->pid = k;
  out->pidfd = pidfd_open(k);
  if (out->pidfd >= 0) ::fcntl(out->pidfd, F_SETFD, FD_CLOEXEC);
  return 0;
}

}  // namespace plotq::sandbox
