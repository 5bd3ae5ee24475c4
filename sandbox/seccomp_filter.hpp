// The two seccomp filters of a job, built with libseccomp (default allow; each refusal is EPERM,
// never a kill, so the harness can report it) and exported as raw BPF so that a forked child can
// install them with one syscall and no allocation.
//
// base filter (installed by confine, before the job's interpreter starts):
//   io_uring_*, ptrace, process_vm_readv/writev, mount/umount2/pivot_root/chroot and the new mount
//   API, unshare/setns and clone() with any CLONE_NEW* flag (clone3 answers ENOSYS so libc falls
//   back to clone), bpf, perf_event_open, userfaultfd, keyctl/add_key/request_key, personality
//   other than the query, ioctl TIOCSTI/TIOCLINUX (masked compare of arg1), socket() and
//   socketpair() of any domain but AF_UNIX, kexec_*, reboot, swapon/off, *_module, acct, the clock
//   setters, quotactl, syslog, iopl/ioperm, open_by_handle_at/name_to_handle_at, kcmp,
//   pidfd_getfd, process_madvise, vhangup, uselib.
// exec filter (armed by entry.py after the interpreter started, before user code):
//   execve, execveat.
#pragma once
#include <linux/filter.h>

#include <string>
#include <vector>

namespace plotq::sandbox {

struct BpfProgram {
  std::vector<sock_filter> insns;
};

// Build with libseccomp (allocates; call before forking). Throw std::runtime_error on failure.
BpfProgram build_base_filter();
BpfProgram build_exec_filter();

// Installs a program on the calling thread, on every thread with tsync. Needs PR_SET_NO_NEW_PRIVS
// (or CAP_SYS_ADMIN). Fork-safe. 0, or -errno (-ESRCH+... when a thread could not be synced).
int install_filter(const sock_filter* insns, unsigned short count, bool tsync);

}  // namespace plotq::sandbox
