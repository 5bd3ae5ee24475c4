#include "sandbox/watchdog.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace plotq::sandbox {

namespace {

struct Walker {
  const TreeLimits& lim;
  TreeMeasure m;
  bool stop() const { return !m.measurable || m.over_bytes(lim) || m.over_entries(lim); }

  void walk(int fd, std::uint32_t depth) {
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      m.measurable = false;
      return;
    }
    for (;;) {
      errno = 0;
      dirent* e = ::readdir(d);
      if (!e) {
        if (errno != 0) m.measurable = false;
        break;
      }
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      struct stat st;
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // vanished while we walked: fine
        m.measurable = false;
        break;
      }
      ++m.entries;
      m.bytes += static_cast<std::uint64_t>(st.st_blocks) * 512u;
      if (stop()) break;
      if (S_ISDIR(st.st_mode)) {
        if (depth + 1 > lim.max_depth) {
          m.measurable = false;
          break;
        }
        int child = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (child < 0) {
          if (errno == ENOENT) continue;
          m.measurable = false;
          break;
        }
        walk(child, depth + 1);
        if (stop()) break;
      }
    }
    ::closedir(d);
  }
};

}  // namespace

TreeMeasure measure_tree(int dirfd, const TreeLimits& limits) {
  Walker w{limits, {}};
  int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    w.m.measurable = false;
    return w.m;
  }
  w.walk(fd, 0);
  return w.m;
}

std::optional<std::uint64_t> mem_available_mb() {
  int fd = ::open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = 0;
  const char* p = std::strstr(buf, "MemAvailable:");
  if (!p) return std::nullopt;
  unsigned long long kb = 0;
  if (std::sscanf(p + 13, "%llu", &kb) != 1) return std::nullopt;
  return kb / 1024;
}

}  // namespace plotq::sandbox
