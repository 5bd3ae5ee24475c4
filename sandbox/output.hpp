// Safe host-side reads of what a job produced: output files (never followed, never blocking,
// capped), its stdout/stderr (bounded buffers: the host's memory does not grow with a flood), and
// removal of its work dir (by file descriptors, never following a link, any depth).
#pragma once
#include <cstdint>
#include <string>

namespace plotq::sandbox {

// A plain file name: not empty, no '/', not "." or "..", no NUL, at most 255 bytes.
bool valid_file_name(const std::string& name);

struct OutputRead {
  enum Status { ok, missing, rejected, too_large, error } status = missing;
  std::string data;
  std::uint64_t measured = 0;  // size seen (too_large)
  std::string why;             // "symlink", "fifo", "directory", "grew past the cap", ...
};

// openat(dirfd, name, O_RDONLY|O_NOFOLLOW|O_NONBLOCK), fstat must say regular file, size <= cap,
// read at most cap+1 bytes (growth past the cap during the read -> too_large).
OutputRead read_output(int dirfd, const std::string& name, std::uint64_t cap);
// read_output of a path (its directory opened first): the same refusals for any file a user or a
// job could have planted (a symlink as the last component, a FIFO, a directory, over the cap).
OutputRead read_file(const std::string& path, std::uint64_t cap);

// stdout: the first `head` bytes and the last `tail` bytes.
class HeadTail {
 public:
  HeadTail(std::size_t head, std::size_t tail) : head_cap_(head), tail_cap_(tail) {}
  void append(const char* p, std::size_t n);
  const std::string& head() const { return head_; }
  std::string tail() const;  // bytes after the head, at most tail_cap_ of them
  std::uint64_t total() const { return total_; }

 private:
  std::size_t head_cap_, tail_cap_;
  std::string head_;
  std::string ring_;     // circular, tail_cap_ bytes once full
  std::size_t pos_ = 0;  // next write position in ring_ when full
  std::uint64_t total_ = 0;
};

// stderr: the last `keep` bytes.
class Tail {
 public:
  explicit Tail(std::size_t keep) : ht_(0, keep) {}
  void append(const char* p, std::size_t n) { ht_.append(p, n); }
  std::string text() const { return ht_.tail(); }
  std::uint64_t total() const { return ht_.total(); }

 private:
  HeadTail ht_;
};

// The last `chars` UTF-8 characters of `text` (never splitting a character; invalid bytes count
// as one character each).
std::string last_chars(const std::string& text, std::size_t chars);

// Removes `name` (a directory tree) under parent_fd without following any link, whatever its
// depth (one or two descriptors open at a time). Only for trees no process writes to any more.
// 0 or -errno.
int remove_tree(int parent_fd, const std::string& name);

}  // namespace plotq::sandbox
