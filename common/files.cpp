#include "common/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace plotq {

int write_new_file(int dirfd, const std::string& name, std::string_view bytes) {
  int fd = ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int saved = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlinkat(dirfd, name.c_str(), 0);
      errno = saved;
      return -1;
    }
    done += static_cast<std::size_t>(n);
  }
  return fd;
}

std::string write_file_replacing(const std::string& path, const std::string& bytes, mode_t mode) {
  std::string::size_type slash = path.rfind('/');
  std::string tmp = slash == std::string::npos ? "." + path + ".tmp"
                                               : path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
  auto failed = [&](const char* step, int fd) {
    std::string why = std::string(step) + " " + tmp + ": " + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    return why;
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return std::string("open ") + tmp + ": " + std::strerror(errno);
  for (std::size_t off = 0; off < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;
    if (n <= 0) return failed("write", fd);
    off += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) return failed("close", -1);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return failed("rename", -1);
  return "";
}

}  // namespace plotq
