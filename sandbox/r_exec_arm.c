/* plotq_r_arm: the R job's way to arm the exec filter (sandbox/harness/rharness.R).
 *
 * R has no audit hook and no entry.py: the harness dyn.load()s this object from the read-only
 * build (or stage) dir first thing and calls it through .C (plain C, no R headers, no C++
 * runtime). It installs the same program as plotq_exec_arm.so (build_exec_filter(), generated
 * into exec_filter_bpf.h at build time) and writes the entry protocol's one report line itself:
 *
 *   plotq_r_arm(int* report_fd, int* required, int* armed)
 *     report line "armed tsync" | "refused <state>" (state as exec_arm_module.c), fd closed;
 *     *armed = 1 when armed; refused and *required -> _exit(3) (EXEC_DENY_EXIT) before any user code.
 * Steps, as plotq_arm_exec_filter (sandbox/confine.cpp): PR_SET_DUMPABLE 0 (the exec made the
 * process dumpable again), PR_SET_NO_NEW_PRIVS, seccomp(SET_MODE_FILTER, TSYNC).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec_filter_bpf.h"

#define EXEC_DENY_EXIT 3

static int arm(char* state, size_t n) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    snprintf(state, n, "no_new_privs");
    return 0;
  }
  struct sock_fprog prog;
  prog.len = (unsigned short)(sizeof plotq_exec_filter / sizeof plotq_exec_filter[0]);
  prog.filter = (struct sock_filter*)plotq_exec_filter;
  long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
  if (rc == 0) {
    snprintf(state, n, "tsync");
    return 1;
  }
  if (rc > 0) /* TSYNC: the id of a thread that could not be synchronised */
    snprintf(state, n, "error:%s", strerror(ESRCH));
  else
    snprintf(state, n, "error:%s", errno == EINVAL || errno == ENOSYS ? "unavailable" : strerror(errno));
  return 0;
}

__attribute__((visibility("default"))) void plotq_r_arm(int* report_fd, int* required, int* armed) {
  char state[64];
  char line[96];
  int ok = arm(state, sizeof state);
  int len = snprintf(line, sizeof line, "%s %s\n", ok ? "armed" : "refused", state);
  if (len > 0 && (size_t)len < sizeof line) {
    const char* p = line;
    while (len > 0) {
      ssize_t w = write(*report_fd, p, (size_t)len);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      p += w;
      len -= (int)w;
    }
  }
  close(*report_fd);
  *armed = ok;
  if (!ok && *required) _exit(EXEC_DENY_EXIT);
}
