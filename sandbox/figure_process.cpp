#include "sandbox/figure_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/log.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/sandbox_metrics.hpp"

namespace plotq::sandbox {

namespace asio = boost::asio;

namespace {

constexpr std::size_t kMaxLine = 1 << 20;  // answers are ~200 bytes; anything longer is a fault

std::string errno_text(int e) { return std::strerror(e); }

// Writes "figure renderer: <what> failed, errno <e>" and exits: async-signal-safe (child, after fork).
[[noreturn]] void child_fail(const char* what, int e, int code) {
  char num[16];
  int n = 0;
  unsigned v = e < 0 ? 0u : static_cast<unsigned>(e);
  do {
    num[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v && n < 15);
  char line[160];
  std::size_t len = 0;
  auto put = [&](const char* s, std::size_t k) {
    for (std::size_t i = 0; i < k && len < sizeof line; ++i) line[len++] = s[i];
  };
  put("figure renderer: ", 17);
  put(what, std::strlen(what));
  put(" failed, errno ", 15);
  while (n > 0) put(&num[--n], 1);
  put("\n", 1);
  (void)!::write(2, line, len);
  ::_exit(code);
}

void read_out(const std::shared_ptr<FigureProc>& p, std::shared_ptr<FigureProcEvents> ev) {
  asio::async_read_until(p->out, p->out_buf, '\n',
                         [p, ev](const boost::system::error_code& ec, std::size_t n) {
                           if (ec) {
                             // EOF (it exited; the pidfd tells when) or a line over kMaxLine.
                             if (ec != asio::error::eof && ec != asio::error::operation_aborted)
                               ev->on_fault("an overlong line from the renderer");
                             else if (ec == asio::error::eof)
                               kill_group(*p);
                             return;
                           }
                           std::string line(asio::buffers_begin(p->out_buf.data()),
                                            asio::buffers_begin(p->out_buf.data()) + n - 1);
                           p->out_buf.consume(n);
                           ev->on_line(line);
                           read_out(p, ev);
                         });
}

void read_err(const std::shared_ptr<FigureProc>& p, std::size_t keep) {
  p->err.async_read_some(asio::buffer(p->err_chunk), [p, keep](const boost::system::error_code& ec, std::size_t n) {
    if (ec) return;
    p->err_tail.append(p->err_chunk.data(), n);
    if (p->err_tail.size() > keep) p->err_tail.erase(0, p->err_tail.size() - keep);
    read_err(p, keep);
  });
}

// Reaps after the pidfd said so; false on a spurious wake-up (not exited yet).
bool reap(FigureProc& p, FigureExit& x) {
  int status = 0;
  pid_t r = ::waitpid(p.pid, &status, WNOHANG);
  if (r == 0) return false;
  p.exited = true;
  ::kill(-p.pid, SIGKILL);  // whatever is left of the group (Chromium helpers)
  p.start_timer.cancel();
  p.kill_timer.cancel();
  boost::system::error_code ignored;
  p.in.close(ignored);
  p.pidfd.close(ignored);
  x.stderr_tail = p.err_tail.size() > 600 ? p.err_tail.substr(p.err_tail.size() - 600) : p.err_tail;
  x.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  x.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  log_event("figure_renderer_exit", {{"pid", p.pid}, {"exit_code", x.exit_code}, {"signal", x.signal},
                                     {"jobs", p.jobs}, {"stderr_tail", x.stderr_tail}});
  count_chromium_exit();
  std::error_code fec;
  std::filesystem::remove_all(p.tmp_dir, fec);  // never follows links; the group is dead
  return true;
}

void wait_exit(const std::shared_ptr<FigureProc>& p, std::shared_ptr<FigureProcEvents> ev) {
  p->pidfd.async_wait(asio::posix::stream_descriptor::wait_read, [p, ev](const boost::system::error_code& ec) {
    if (ec) return;
    FigureExit x;
    if (!reap(*p, x)) return wait_exit(p, ev);
    ev->on_exit(x);
  });
}

void write_next(const std::shared_ptr<FigureProc>& p) {
  if (p->write_queue.empty() || p->exited) {
    p->writing = false;
    return;
  }
  p->writing = true;
  asio::async_write(p->in, asio::buffer(p->write_queue.front()), [p](const boost::system::error_code& ec, std::size_t) {
    if (ec) {
      // The renderer is gone or wedged; its exit handler answers the job.
      p->write_queue.clear();
      p->writing = false;
      kill_group(*p);
      return;
    }
    p->write_queue.pop_front();
    write_next(p);
  });
}

}  // namespace

FigureProc::FigureProc(asio::io_context& io)
    : in(io), out(io), err(io), pidfd(io), out_buf(kMaxLine), start_timer(io), kill_timer(io) {}

void kill_group(FigureProc& p) {
  if (p.pid > 0 && !p.exited) {
    ::kill(-p.pid, SIGKILL);
    ::kill(p.pid, SIGKILL);
    p.killed = true;
  }
}

FigureSpawn spawn_figure_process(asio::io_context& io, const FigureConfig& cfg,
                                 const std::function<std::vector<std::string>(const std::string&)>& argv_for) {
  FigureSpawn s;
  std::string tmpl = cfg.figure_tmp_root + "/plotq-figure-XXXXXX";
  std::vector<char> tbuf(tmpl.begin(), tmpl.end());
  tbuf.push_back('\0');
  if (!::mkdtemp(tbuf.data())) {
    s.error = "cannot make a private dir in " + cfg.figure_tmp_root + ": " + errno_text(errno);
    return s;
  }
  std::string tmp_dir(tbuf.data());

  std::vector<std::string> args = argv_for(tmp_dir);
  std::vector<std::string> envs = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + tmp_dir, "LANG=C.UTF-8"};
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);

  auto fail = [&](std::string why) {
    std::error_code fec;
    std::filesystem::remove_all(tmp_dir, fec);
    s.error = std::move(why);
    return s;
  };
  int in_p[2], out_p[2], err_p[2];
  if (::pipe2(in_p, O_CLOEXEC) != 0) return fail("pipe: " + errno_text(errno));
  if (::pipe2(out_p, O_CLOEXEC) != 0) {
    ::close(in_p[0]), ::close(in_p[1]);
    return fail("pipe: " + errno_text(errno));
  }
  if (::pipe2(err_p, O_CLOEXEC) != 0) {
    for (int fd : {in_p[0], in_p[1], out_p[0], out_p[1]}) ::close(fd);
    return fail("pipe: " + errno_text(errno));
  }
  const bool netns = cfg.figure_netns, pidns = cfg.figure_pidns;
  const pid_t parent = ::getpid();
  // With namespaces: a raw clone (fork semantics) so that the renderer itself is PID 1 of the new
  // PID namespace and our direct child. Without: a plain fork.
  unsigned long ns_flags = (netns ? CLONE_NEWNET : 0) | (pidns ? CLONE_NEWPID : 0);
  pid_t pid = ns_flags ? static_cast<pid_t>(::syscall(SYS_clone, ns_flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr))
                       : ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {in_p[0], in_p[1], out_p[0], out_p[1], err_p[0], err_p[1]}) ::close(fd);
    if (ns_flags && e == EPERM)
      return fail("new namespaces need root (set PLOTQ_FIGURE_NETNS=0 and PLOTQ_FIGURE_PIDNS=0 otherwise)");
    return fail(std::string(ns_flags ? "clone: " : "fork: ") + errno_text(e));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only until execve.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!pidns && ::getppid() != parent) ::_exit(125);  // in a new PID namespace getppid() is 0
    if (::dup2(in_p[0], 0) < 0 || ::dup2(out_p[1], 1) < 0 || ::dup2(err_p[1], 2) < 0) ::_exit(124);
    ::syscall(SYS_close_range, 3u, ~0u, 0u);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
    ::execve(argv[0], argv.data(), envp.data());
    child_fail("execve", errno, 127);
  }
  ::setpgid(pid, pid);  // also from the parent: no window where the group does not exist
  ::close(in_p[0]);
  ::close(out_p[1]);
  ::close(err_p[1]);

  auto p = std::make_shared<FigureProc>(io);
  p->pid = pid;
  p->tmp_dir = tmp_dir;
  p->in.assign(in_p[1]);
  p->out.assign(out_p[0]);
  p->err.assign(err_p[0]);
  int pfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pfd < 0) {
    int e = errno;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);  // just killed: returns at once
    return fail("pidfd_open: " + errno_text(e));
  }
  p->pidfd.assign(pfd);
  log_event("figure_renderer_start", {{"pid", pid}, {"netns", netns}, {"pidns", pidns}, {"tmp_dir", tmp_dir}});
  s.proc = std::move(p);
  return s;
}

void watch_figure_process(const std::shared_ptr<FigureProc>& p, std::size_t stderr_keep_bytes,
                          FigureProcEvents events) {
  auto ev = std::make_shared<FigureProcEvents>(std::move(events));
  read_out(p, ev);
  read_err(p, stderr_keep_bytes);
  wait_exit(p, ev);
}

void send_figure_line(const std::shared_ptr<FigureProc>& p, std::string line) {
  p->write_queue.push_back(std::move(line));
  if (!p->writing) write_next(p);
}

void destroy_figure_process(FigureProc& p) {
  if (!p.exited) {
    ::kill(-p.pid, SIGKILL);
    ::kill(p.pid, SIGKILL);
    ::waitpid(p.pid, nullptr, 0);
    p.exited = true;
  }
  boost::system::error_code ignored;
  p.in.close(ignored);
  p.out.close(ignored);
  p.err.close(ignored);
  p.pidfd.close(ignored);
  p.start_timer.cancel();
  p.kill_timer.cancel();
  std::error_code fec;
  std::filesystem::remove_all(p.tmp_dir, fec);
}

}  // namespace plotq::sandbox
