#include "sandbox/namespaces.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace plotq::sandbox {

int job_self_namespaces() { return CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS; }

int zygote_namespaces() { return CLONE_NEWUSER | CLONE_NEWPID | job_self_namespaces(); }

int unshare_ns(int flags) { return ::unshare(flags) == 0 ? 0 : -errno; }

namespace {

int write_file(const char* path, const char* text, size_t len) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = ::write(fd, text, len);
  int err = n == static_cast<ssize_t>(len) ? 0 : (n < 0 ? -errno : -EIO);
  ::close(fd);
  return err;
}

}  // namespace

int write_id_maps(pid_t pid, std::uint32_t outside_base, std::uint32_t count) {
  char path[64], map[64];
  int len = std::snprintf(map, sizeof map, "0 %u %u\n", outside_base, count);
  std::snprintf(path, sizeof path, "/proc/%d/uid_map", static_cast<int>(pid));
  if (int e = write_file(path, map, static_cast<size_t>(len))) return e;
  // setgroups must be denied before an unprivileged gid_map write; we deny it anyway: the
  // zygote dropped its supplementary groups before unsharing and must never regain any.
  std::snprintf(path, sizeof path, "/proc/%d/setgroups", static_cast<int>(pid));
  if (int e = write_file(path, "deny", 4)) return e;
  std::snprintf(path, sizeof path, "/proc/%d/gid_map", static_cast<int>(pid));
  return write_file(path, map, static_cast<size_t>(len));
}

}  // namespace plotq::sandbox
