/* Attempts on the boundary itself. Each returns 0 when the attack worked, else the errno. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

static int rc(long r) { return r < 0 ? errno : 0; }

int become_root(void) { return rc(setresuid(0, 0, 0)); }
int become_root_gid(void) { return rc(setresgid(0, 0, 0)); }
int add_root_group(void) {
  gid_t g = 0;
  return rc(setgroups(1, &g));
}
int ptrace_attach(int pid) { return rc(ptrace(PTRACE_ATTACH, pid, 0, 0)); }
int ptrace_seize(int pid) { return rc(ptrace(PTRACE_SEIZE, pid, 0, 0)); }
int vm_read(int pid) {
  char buf[64];
  static char remote_probe[64];
  struct iovec local = {buf, sizeof buf}, remote = {remote_probe, sizeof buf};
  return rc(process_vm_readv(pid, &local, 1, &remote, 1, 0));
}
int vm_write(int pid) {
  char buf[8] = {0};
  static char target[8];
  struct iovec local = {buf, sizeof buf}, remote = {target, sizeof buf};
  return rc(process_vm_writev(pid, &local, 1, &remote, 1, 0));
}
int send_signal(int pid, int sig) { return rc(kill(pid, sig)); }
int io_uring(void) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  long fd = syscall(__NR_io_uring_setup, 4, &p);
  if (fd >= 0) {
    close((int)fd);
    return 0;
  }
  return errno;
}
/* Connects to 127.0.0.1:port over TCP. */
int tcp_connect(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0) return errno;
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((unsigned short)port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int r = connect(s, (struct sockaddr*)&a, sizeof a);
  int e = r < 0 ? errno : 0;
  close(s);
  return e;
}
/* Connects to an abstract AF_UNIX name (per network namespace). */
int abstract_connect(const char* name) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) return errno;
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  size_t n = strlen(name);
  if (n > sizeof a.sun_path - 2) n = sizeof a.sun_path - 2;
  memcpy(a.sun_path + 1, name, n);
  int r = connect(s, (struct sockaddr*)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
  int e = r < 0 ? errno : 0;
  close(s);
  return e;
}

/* The syscall battery: each line "name=errno" (0 = it worked) into out. */
static void add(char* out, size_t len, const char* name, int e) {
  size_t used = strlen(out);
  if (used + 64 < len) {
    char* p = out + used;
    const char* s = name;
    while (*s) *p++ = *s++;
    *p++ = '=';
    char digits[16];
    int k = 0;
    unsigned v = (unsigned)e;
    do {
      digits[k++] = (char)('0' + v % 10);
      v /= 10;
    } while (v);
    while (k) *p++ = digits[--k];
    *p++ = '\n';
    *p = 0;
  }
}

void battery(char* out, size_t len) {
  out[0] = 0;
  add(out, len, "unshare_user", rc(unshare(CLONE_NEWUSER)));
  add(out, len, "unshare_net", rc(unshare(CLONE_NEWNET)));
  add(out, len, "clone_newuser", rc(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)));
  add(out, len, "clone3", rc(syscall(435 /* clone3 */, 0, 0)));
  add(out, len, "mount", rc(mount("none", "/tmp", "tmpfs", 0, 0)));
  add(out, len, "umount", rc(umount2("/tmp/job", MNT_DETACH)));
  add(out, len, "chroot", rc(chroot("/tmp")));
  add(out, len, "setns", rc(setns(0, 0)));
  add(out, len, "bpf", rc(syscall(SYS_bpf, 0, 0, 0)));
  add(out, len, "perf_event_open", rc(syscall(SYS_perf_event_open, 0, 0, -1, -1, 0)));
  add(out, len, "userfaultfd", rc(syscall(SYS_userfaultfd, 0)));
  add(out, len, "keyctl", rc(syscall(SYS_keyctl, 0, 0, 0, 0, 0)));
  add(out, len, "add_key", rc(syscall(SYS_add_key, "user", "x", "y", 1, -2)));
  add(out, len, "personality_no_aslr", rc(personality(ADDR_NO_RANDOMIZE)));
  add(out, len, "socket_inet", rc(socket(AF_INET, SOCK_STREAM, 0)));
  add(out, len, "socket_inet6", rc(socket(AF_INET6, SOCK_DGRAM, 0)));
  add(out, len, "socket_netlink", rc(socket(AF_NETLINK, SOCK_RAW, 0)));
  add(out, len, "socket_packet", rc(socket(AF_PACKET, SOCK_RAW, 0)));
  int sv[2];
  add(out, len, "socketpair_inet", rc(socketpair(AF_INET, SOCK_STREAM, 0, sv)));
  char c = 'x';
  add(out, len, "ioctl_tiocsti", rc(ioctl(0, TIOCSTI, &c)));
  add(out, len, "ioctl_tiocsti_high_bits", rc(syscall(SYS_ioctl, 0, 0xffffffff00000000UL | TIOCSTI, &c)));
  add(out, len, "io_uring_setup", io_uring());
  add(out, len, "ptrace_traceme", rc(ptrace(PTRACE_TRACEME, 0, 0, 0)));
  add(out, len, "kexec_load", rc(syscall(SYS_kexec_load, 0, 0, 0, 0)));
  add(out, len, "init_module", rc(syscall(SYS_init_module, 0, 0, "")));
  add(out, len, "reboot", rc(syscall(SYS_reboot, 0, 0, 0, 0)));
  add(out, len, "pivot_root", rc(syscall(SYS_pivot_root, "/tmp", "/tmp")));
  add(out, len, "open_by_handle_at", rc(syscall(SYS_open_by_handle_at, 0, 0, 0)));
}
