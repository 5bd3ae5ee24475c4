// Process creation on the host side: the cold job path and the zygote keeper. Everything a child
// needs is prepared before fork(); after it, children make system calls only (the host is
// multi-threaded, so nothing that could wait on a lock another thread held is called).
//
// Cold path:  host (or its cold helper) --fork--> C (setsid, PDEATHSIG) --unshare(NEWPID), fork--> G (pid 1 of the
//   job's pid namespace): confine_job(), then execve(python -I -B entry.py ...).
//   C sends on the status socket: "pid <n>" with G's pidfd attached (SCM_RIGHTS), then, after
//   wait4(G), "exit <wait status> <utime us> <stime us> <maxrss KiB>"; or "error <stage> <errno>".
// Zygote:     host --fork--> K: drop groups, unshare(USER|PID|NS|NET|IPC|UTS), tell the host
//   ("u"), wait for the id maps ("g"), become root of its user namespace, fork Z (pid 1 of the
//   zygote's pid namespace) and report Z's pid; Z execs python -I -B zygote.py. K waits for Z and
//   exits with it.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/confine.hpp"
#include "sandbox/fd_passing.hpp"

namespace plotq::sandbox {

// argv/envp with stable char* arrays (call seal() after filling).
struct ExecImage {
  std::string path;
  std::vector<std::string> argv, env;
  std::vector<char*> argv_p, env_p;
  void seal();
};

// The child's ends of a job's channels (closed by the host after spawning).
struct ChildFds {
  int stdout_w = -1, stderr_w = -1, report_w = -1, status_w = -1;
};

// The host's ends plus the child's ends of a job's channels: three pipes and a SOCK_SEQPACKET
// status socket pair. Everything O_CLOEXEC; host ends non-blocking.
struct JobChannels {
  int stdout_r = -1, stderr_r = -1, report_r = -1, status_r = -1;
  ChildFds child;
  int open();          // 0 or -errno
  void close_child();  // after the spawn
  void close_all();
};

struct Spawned {
  pid_t pid = -1;   // C or K (the host's direct child)
  int pidfd = -1;   // for it (reap with waitid(P_PIDFD))
};

// Cold job: returns 0 and C, or -errno. spec.filter must point at a program built before.
int spawn_cold(const ConfineSpec& spec, const ExecImage& image, const ChildFds& fds, Spawned* out);

// A cold helper per job slot: a small single-threaded child of the host, forked once at start,
// already in the slot's cgroups, that forks C for each cold job of its slot. Jobs are born in the
// cgroups (no migration, which waits for an RCU grace period on v1) and the host never
// forks its own (large, multi-threaded) image per job. Message: header + the ConfineSpec bytes +
// path, argv, env (NUL-terminated) + SCM_RIGHTS [stdout, stderr, report, status].
class ColdHelper {
 public:
  ColdHelper() = default;
  ColdHelper(const ColdHelper&) = delete;
  ColdHelper& operator=(const ColdHelper&) = delete;
  ~ColdHelper();
  // filter: the base program, built before (the helper inherits it at the same address).
  int start(const std::vector<std::string>& cgroup_procs, const sock_filter* filter, unsigned short filter_len);
  bool alive() const;
  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_; }  // readable once it exited (owned: dup it to watch it)
  // 0 when handed over (C's records then arrive on the status socket), else -errno.
  int spawn(const ConfineSpec& spec, const ExecImage& image, const ChildFds& fds);
  void stop();  // blocking (bounded): close, wait, kill, reap

 private:
  int ctl_ = -1, pidfd_ = -1;
  pid_t pid_ = -1;
};

// Zygote keeper: ctrl is the zygote's end of the control socket (becomes its fd 3); sync_up is
// written by K ("u" when ready for its id maps, then "z<pid>\n" with Z's host pid), sync_down
// is read by K (the host writes "g" once the maps are in place).
int spawn_zygote_keeper(const ExecImage& image, int ctrl, int sync_up_w, int sync_down_r, Spawned* out);

// A job handed to a zygote or a cold helper: the message plus [stdout, stderr, report, status],
// non-blocking.
int send_job_fds(int sock, const void* data, std::size_t len, const ChildFds& fds);

// Status-socket records (both paths; send_record: fd_passing.hpp).
struct Record {
  std::string text;
  int fd = -1;  // received fd (owned by the caller), or -1
};
// Non-blocking receive of one record: 1 got one, 0 EOF, -EAGAIN none yet, other -errno.
int recv_record(int sock, Record* out);

pid_t pid_of_pidfd(int pidfd);        // the pid in our namespace (from fdinfo); -1 when gone
int pidfd_kill(int pidfd, int sig);   // 0 or -errno
// waitid(P_PIDFD): reaps the process; 1 reaped (status = wait-style status), 0 still running
// (block false), -errno on error.
int reap_pidfd(int pidfd, bool block, int* status);

}  // namespace plotq::sandbox
