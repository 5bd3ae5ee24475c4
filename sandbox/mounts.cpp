#include "sandbox/mounts.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sandbox/confine.hpp"

namespace plotq::sandbox {

namespace {

// The mount flags a bind remount must repeat (in a user namespace the kernel refuses to clear
// locked nosuid/nodev/noexec/atime flags, so we keep whatever the mount has).
unsigned long kept_flags(const char* path) {
  struct statvfs sv;
  if (::statvfs(path, &sv) != 0) return 0;
  unsigned long f = 0;
  if (sv.f_flag & ST_NOSUID) f |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) f |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) f |= MS_RELATIME;
  if (!(sv.f_flag & (ST_NOATIME | ST_RELATIME))) f |= MS_STRICTATIME;
  if (sv.f_flag & ST_RDONLY) f |= MS_RDONLY;
  return f;
}

// Decodes mountinfo's octal escapes (\040 for a space) in place.
void unescape(char* s) {
  char* out = s;
  for (char* p = s; *p; ++p) {
    if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
      *out++ = static_cast<char>((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
      p += 3;
    } else {
      *out++ = *p;
    }
  }
  *out = 0;
}

// Static: a forked child must not allocate. One job process uses it once.
char g_mountinfo[1 << 18];

// Remounts every reachable mount read-only (and nosuid), except `keep`.
int remount_all_read_only(const char* keep, const char** stage) {
  int fd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *stage = "mount:mountinfo";
    return -errno;
  }
  size_t len = 0;
  for (;;) {
    ssize_t n = ::read(fd, g_mountinfo + len, sizeof g_mountinfo - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
    if (len >= sizeof g_mountinfo - 1) {
      ::close(fd);
      *stage = "mount:mountinfo-too-large";
      return -E2BIG;
    }
  }
  ::close(fd);
  g_mountinfo[len] = 0;
  char* line = g_mountinfo;
  while (line && *line) {
    char* next = std::strchr(line, '\n');
    if (next) *next++ = 0;
    // Fifth field: the mount point.
    char* p = line;
    for (int field = 0; field < 4 && p; ++field) {
      p = std::strchr(p, ' ');
      if (p) ++p;
    }
    char* mp = p;
    char* end = mp ? std::strchr(mp, ' ') : nullptr;
    line = next;
    if (!mp || !end) continue;
    *end = 0;
    unescape(mp);
    if (std::strcmp(mp, keep) == 0) continue;
    struct stat st;
    if (::stat(mp, &st) != 0) continue;  // not reachable (under a dir we cannot enter, or covered)
    unsigned long flags = kept_flags(mp);
    if (flags & MS_RDONLY) continue;
    if (::mount(nullptr, mp, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | flags, nullptr) != 0) {
      if (errno == ENOENT || errno == EACCES) continue;  // vanished / unreachable for us and the job
      *stage = "mount:read-only";
      return -errno;
    }
  }
  return 0;
}

}  // namespace

bool covers_job_dir(const char* path) {
  // Trailing slashes aside, path is a prefix of kJobDirInside ending at a '/' of it (or all of it).
  std::size_t n = std::strlen(path);
  while (n > 1 && path[n - 1] == '/') --n;
  if (n == 1 && path[0] == '/') return true;
  return std::strncmp(path, kJobDirInside, n) == 0 && (kJobDirInside[n] == '\0' || kJobDirInside[n] == '/');
}

int setup_job_mounts(const ConfineSpec& spec, const char** stage) {
  auto fail = [&](const char* s) {
    *stage = s;
    return -errno;
  };
  // Nothing we mount may propagate back to the host's (or the zygote's) namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return fail("mount:private");

  // The work dir the host made for this job, checked by device and inode.
  int wfd = ::open(spec.work_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (wfd < 0) return fail("mount:open-work-dir");
  struct stat st;
  if (::fstat(wfd, &st) != 0 || st.st_dev != spec.work_dev || st.st_ino != spec.work_ino) {
    ::close(wfd);
    errno = EXDEV;
    return fail("mount:work-dir-changed");
  }
  // An empty tmpfs over /tmp, with the work dir bound at /tmp/job (noexec: nothing the job writes
  // can be executed or mapped executable).
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,nr_inodes=16,mode=0755") != 0) {
    ::close(wfd);
    return fail("mount:tmp");
  }
  if (::mkdir(kJobDirInside, 0755) != 0) {
    ::close(wfd);
    return fail("mount:mkdir-job");
  }
  char src[64];
  std::snprintf(src, sizeof src, "/proc/self/fd/%d", wfd);
  int rc = ::mount(src, kJobDirInside, nullptr, MS_BIND, nullptr);
  ::close(wfd);
  if (rc != 0) return fail("mount:bind-work-dir");
  unsigned long wflags = kept_flags(kJobDirInside) & ~static_cast<unsigned long>(MS_RDONLY);
  if (::mount(nullptr, kJobDirInside, nullptr, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC | wflags, nullptr) != 0)
    return fail("mount:work-dir-flags");

  if (spec.read_only_root) {
    if (int e = remount_all_read_only(kJobDirInside, stage)) return e;
  }
  if (spec.mount_proc) {
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, nullptr) != 0)
      return fail("mount:proc");
  }
  for (int i = 0; i < spec.n_hidden; ++i) {
    const char* path = spec.hidden[i];
    if (covers_job_dir(path)) continue;
    if (::lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;  // absent: nothing to hide
    if (::mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,nr_inodes=2,mode=0555") != 0)
      return fail("mount:hide");
  }
  return 0;
}

}  // namespace plotq::sandbox
