/* Exec of /bin/sh (which would write a marker file) through execve and execveat.
 * Returns the errno of the refusal (0 is impossible: a successful exec does not return). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

int exec_sh(const char* command) {
  char* argv[] = {"/bin/sh", "-c", (char*)command, 0};
  char* envp[] = {"PATH=/bin:/usr/bin", 0};
  execve("/bin/sh", argv, envp);
  return errno;
}

int execveat_sh(const char* command) {
  char* argv[] = {"/bin/sh", "-c", (char*)command, 0};
  char* envp[] = {"PATH=/bin:/usr/bin", 0};
  int fd = open("/bin/sh", O_PATH | O_CLOEXEC);
  if (fd < 0) return -errno;
  syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
  int e = errno;
  close(fd);
  return e;
}
