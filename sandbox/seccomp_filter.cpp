#include "sandbox/seccomp_filter.hpp"

#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

namespace plotq::sandbox {

namespace {

struct Ctx {
  scmp_filter_ctx ctx;
  Ctx() : ctx(seccomp_init(SCMP_ACT_ALLOW)) {
    if (!ctx) throw std::runtime_error("seccomp_init failed");
  }
  ~Ctx() { seccomp_release(ctx); }
};

void deny(scmp_filter_ctx ctx, const char* name, int err = EPERM) {
  int nr = seccomp_syscall_resolve_name(name);
  if (nr == __NR_SCMP_ERROR) return;  // the kernel headers of libseccomp do not know it: nothing to deny
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), nr, 0);
  if (rc != 0) throw std::runtime_error(std::string("seccomp rule for ") + name + ": " + std::strerror(-rc));
}

void deny_if(scmp_filter_ctx ctx, int nr, const scmp_arg_cmp& cmp) {
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, cmp);
  if (rc != 0) throw std::runtime_error(std::string("seccomp conditional rule: ") + std::strerror(-rc));
}

BpfProgram export_bpf(scmp_filter_ctx ctx) {
  // libseccomp 2.5 exports only to a file descriptor: use an anonymous memory file.
  int fd = static_cast<int>(::syscall(SYS_memfd_create, "plotq-bpf", MFD_CLOEXEC));
  if (fd < 0) throw std::runtime_error("memfd_create failed");
  int rc = seccomp_export_bpf(ctx, fd);
  BpfProgram prog;
  if (rc == 0) {
    off_t size = ::lseek(fd, 0, SEEK_END);
    if (size > 0 && size % sizeof(sock_filter) == 0 && size / sizeof(sock_filter) < 65536) {
      prog.insns.resize(static_cast<size_t>(size) / sizeof(sock_filter));
      rc = ::pread(fd, prog.insns.data(), static_cast<size_t>(size), 0) == size ? 0 : -EIO;
    } else {
      rc = -EINVAL;
    }
  }
  ::close(fd);
  if (rc != 0) throw std::runtime_error("seccomp_export_bpf failed");
  return prog;
}

}  // namespace

BpfProgram build_base_filter() {
  Ctx c;
  // Our own install sets NO_NEW_PRIVS first; libseccomp must not try (it is only exporting).
  seccomp_attr_set(c.ctx, SCMP_FLTATR_CTL_NNP, 0);
  static const char* const kDenied[] = {
      "io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv",
      "process_vm_writev", "process_madvise", "kcmp", "pidfd_getfd", "mount", "umount2",
      "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
      "mount_setattr", "unshare", "setns", "bpf", "perf_event_open", "userfaultfd", "keyctl",
      "add_key", "request_key", "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
      "init_module", "finit_module", "delete_module", "acct", "settimeofday", "clock_settime",
      "clock_adjtime", "adjtimex", "quotactl", "quotactl_fd", "syslog", "iopl", "ioperm",
      "open_by_handle_at", "name_to_handle_at", "vhangup", "uselib", "lookup_dcookie",
      "fanotify_init", "nfsservctl"};
  for (const char* name : kDenied) deny(c.ctx, name);
  // clone3 passes its flags in a struct seccomp cannot read: make it look absent so that libc
  // falls back to clone(), whose flags we can check.
  deny(c.ctx, "clone3", ENOSYS);
  for (unsigned long flag : {CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
                             CLONE_NEWNET, static_cast<int>(CLONE_NEWCGROUP),
                             static_cast<int>(CLONE_NEWTIME)}) {
    deny_if(c.ctx, SCMP_SYS(clone), SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
  }
  // personality: only the query (0xffffffff) stays allowed; setting a persona (ADDR_NO_RANDOMIZE,
  // READ_IMPLIES_EXEC, ...) is refused. libseccomp cannot AND two tests of one argument, and
  // nothing we run sets the default persona explicitly.
  deny_if(c.ctx, SCMP_SYS(personality), SCMP_A0(SCMP_CMP_NE, 0xffffffffUL));
  // ioctl: the command is an int; compare its low 32 bits only.
  deny_if(c.ctx, SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCSTI));
  deny_if(c.ctx, SCMP_SYS(ioctl), SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCLINUX));
  // socket()/socketpair(): AF_UNIX only (the net namespace is empty anyway; this also closes
  // netlink, packet and vsock).
  deny_if(c.ctx, SCMP_SYS(socket), SCMP_A0(SCMP_CMP_NE, AF_UNIX));
  deny_if(c.ctx, SCMP_SYS(socketpair), SCMP_A0(SCMP_CMP_NE, AF_UNIX));
  return export_bpf(c.ctx);
}

BpfProgram build_exec_filter() {
  Ctx c;
  seccomp_attr_set(c.ctx, SCMP_FLTATR_CTL_NNP, 0);
  deny(c.ctx, "execve");
  deny(c.ctx, "execveat");
  return export_bpf(c.ctx);
}

int install_filter(const sock_filter* insns, unsigned short count, bool tsync) {
  sock_fprog prog;
  prog.len = count;
  prog.filter = const_cast<sock_filter*>(insns);
  long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, tsync ? SECCOMP_FILTER_FLAG_TSYNC : 0, &prog);
  if (rc == 0) return 0;
  if (rc > 0) return -ESRCH;  // tsync: the id of a thread that could not be synchronised
  return -errno;
}

}  // namespace plotq::sandbox
