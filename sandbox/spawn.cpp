#include "sandbox/spawn.hpp"

#include <fcntl.h>
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

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

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

int send_record(int sock, const char* text, int pass_fd) {
  struct iovec iov;
  iov.iov_base = const_cast<char*>(text);
  iov.iov_len = std::strlen(text);
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
  if (pass_fd >= 0) {
    std::memset(cbuf, 0, sizeof cbuf);
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  for (;;) {
    if (::sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0) return 0;
    if (errno != EINTR) return -errno;
  }
}

int recv_record(int sock, Record* out) {
  char buf[512];
  struct iovec iov = {buf, sizeof buf - 1};
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * 4)];
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof cbuf;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  out->fd = -1;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (out->fd < 0) out->fd = fd;
      else ::close(fd);  // more than we asked for: drop
    }
  }
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

[[noreturn]] void fail_record(int sock, const char* stage, int err) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "error %s %d", stage, err);
  send_record(sock, buf, -1);
  ::_exit(1);
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
      const char* stage = nullptr;
      int rc = confine_job(spec, &stage);
      if (rc != 0) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "error confine:%s %d\n", stage ? stage : "?", -rc);
        write_str(3, buf);
        ::_exit(125);
      }
      ::execve(image.path.c_str(), image.argv_p.data(), image.env_p.data());
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
    send_record(4, "pid", pfd);  // a failed pidfd_open sends no fd: the host kills through C
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
  out->pid = c;
  out->pidfd = pidfd_open(c);
  if (out->pidfd >= 0) ::fcntl(out->pidfd, F_SETFD, FD_CLOEXEC);
  return 0;
}

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
