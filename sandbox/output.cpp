#include "sandbox/output.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace plotq::sandbox {

bool valid_file_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name != "." && name != ".." &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

OutputRead read_output(int dirfd, const std::string& name, std::uint64_t cap) {
  OutputRead r;
  if (!valid_file_name(name)) {
    r.status = OutputRead::rejected;
    r.why = "bad name";
    return r;
  }
  int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) {
      r.status = OutputRead::missing;
    } else if (errno == ELOOP) {
      r.status = OutputRead::rejected;
      r.why = "symlink";
    } else {
      r.status = OutputRead::rejected;
      r.why = std::strerror(errno);
    }
    return r;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    r.status = OutputRead::error;
    r.why = std::strerror(errno);
    ::close(fd);
    return r;
  }
  if (!S_ISREG(st.st_mode)) {
    r.status = OutputRead::rejected;
    r.why = S_ISFIFO(st.st_mode) ? "fifo" : S_ISDIR(st.st_mode) ? "directory" : S_ISSOCK(st.st_mode) ? "socket" : "not a regular file";
    ::close(fd);
    return r;
  }
  r.measured = static_cast<std::uint64_t>(st.st_size);
  if (r.measured > cap) {
    r.status = OutputRead::too_large;
    r.why = "over the cap";
    ::close(fd);
    return r;
  }
  r.data.resize(static_cast<size_t>(r.measured));
  std::uint64_t got = 0;
  char extra;
  for (;;) {
    ssize_t n;
    if (got < r.data.size()) {
      n = ::read(fd, r.data.data() + got, r.data.size() - got);
    } else {
      n = ::read(fd, &extra, 1);  // must be EOF, else it grew
      if (n > 0) {
        r.status = OutputRead::too_large;
        r.why = "grew past the cap while read";
        r.measured = got + 1;
        r.data.clear();
        ::close(fd);
        return r;
      }
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      r.status = OutputRead::error;
      r.why = std::strerror(errno);
      r.data.clear();
      ::close(fd);
      return r;
    }
    if (n == 0) break;
    got += static_cast<std::uint64_t>(n);
    if (got > cap) break;  // unreachable: the buffer is at most cap bytes
  }
  ::close(fd);
  // The file may also have shrunk while read: keep what was there.
  r.data.resize(static_cast<size_t>(got));
  if (got > cap) {
    r.status = OutputRead::too_large;
    r.data.clear();
    return r;
  }
  r.status = OutputRead::ok;
  r.measured = got;
  return r;
}

OutputRead read_file(const std::string& path, std::uint64_t cap) {
  std::string::size_type slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  int dirfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    OutputRead r;
    r.status = errno == ENOENT ? OutputRead::missing : OutputRead::rejected;
    r.why = std::strerror(errno);
    return r;
  }
  OutputRead r = read_output(dirfd, slash == std::string::npos ? path : path.substr(slash + 1), cap);
  ::close(dirfd);
  return r;
}

void HeadTail::append(const char* p, std::size_t n) {
  total_ += n;
  if (head_.size() < head_cap_) {
    std::size_t take = std::min(n, head_cap_ - head_.size());
    head_.append(p, take);
    p += take;
    n -= take;
  }
  if (n == 0 || tail_cap_ == 0) return;
  if (n >= tail_cap_) {  // only the last tail_cap_ bytes of this chunk can survive
    ring_.assign(p + n - tail_cap_, tail_cap_);
    pos_ = 0;
    return;
  }
  if (ring_.size() < tail_cap_) {
    std::size_t take = std::min(n, tail_cap_ - ring_.size());
    ring_.append(p, take);
    p += take;
    n -= take;
    pos_ = ring_.size() % tail_cap_;
  }
  while (n > 0) {
    std::size_t take = std::min(n, tail_cap_ - pos_);
    std::memcpy(ring_.data() + pos_, p, take);
    pos_ = (pos_ + take) % tail_cap_;
    p += take;
    n -= take;
  }
}

std::string HeadTail::tail() const {
  if (ring_.size() < tail_cap_) return ring_;
  return ring_.substr(pos_) + ring_.substr(0, pos_);
}

std::string last_chars(const std::string& text, std::size_t chars) {
  if (chars == 0) return {};
  std::size_t i = text.size(), count = 0;
  while (i > 0 && count < chars) {
    std::size_t j = i - 1;
    // Step back over continuation bytes (at most 3) to the start of the character.
    std::size_t k = j;
    while (k > 0 && j - k < 3 && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80) --k;
    unsigned char lead = static_cast<unsigned char>(text[k]);
    std::size_t len = lead < 0x80 ? 1 : (lead >> 5) == 6 ? 2 : (lead >> 4) == 14 ? 3 : (lead >> 3) == 30 ? 4 : 0;
    if (len != 0 && k + len == i) {
      i = k;
    } else {
      i = j;  // an invalid byte counts as one character
    }
    ++count;
  }
  return text.substr(i);
}

int remove_tree(int parent_fd, const std::string& name) {
  // Descend one directory at a time; when a directory is empty, go back up through its parent
  // (re-opened from the stack of names: no process writes here any more, so no race) and remove it.
  std::vector<std::string> path{name};
  int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    if (errno == ENOTDIR || errno == ELOOP) return ::unlinkat(parent_fd, name.c_str(), 0) == 0 ? 0 : -errno;
    return -errno;
  }
  // Going up uses "..": safe here because no process can move these directories any more.
  int rc = 0;
  while (fd >= 0) {
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      return -errno;
    }
    std::string descend;
    while (dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      if (::unlinkat(::dirfd(d), e->d_name, 0) == 0) continue;
      if (errno == EISDIR || errno == EPERM) {  // a directory (EPERM on some systems for dirs)
        if (::unlinkat(::dirfd(d), e->d_name, AT_REMOVEDIR) == 0) continue;
        if (errno == ENOTEMPTY || errno == EEXIST) {
          descend = e->d_name;
          break;
        }
      }
      if (errno != ENOENT) rc = -errno;
    }
    if (!descend.empty()) {
      int child = ::openat(::dirfd(d), descend.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      ::closedir(d);
      if (child < 0) return -errno;
      path.push_back(descend);
      fd = child;
      continue;
    }
    // This directory is empty (or holds what we could not remove): go up and remove it.
    int up = ::openat(::dirfd(d), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::closedir(d);
    std::string done = path.back();
    path.pop_back();
    if (path.empty()) {
      if (up >= 0) ::close(up);
      if (::unlinkat(parent_fd, done.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) rc = rc ? rc : -errno;
      return rc;
    }
    if (up < 0) return -errno;
    if (::unlinkat(up, done.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      ::close(up);
      return rc ? rc : -errno;  // cannot make progress: stop instead of looping
    }
    fd = up;
  }
  return rc;
}

}  // namespace plotq::sandbox
