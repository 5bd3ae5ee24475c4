// Descriptors passed over SOCK_SEQPACKET sockets (SCM_RIGHTS) and pidfds: the host's side of
// the zygote and cold-helper protocols, and the R zygote's (plotq_r_zygote.so, which links this
// file alone: it runs inside R, without the rest of the sandbox library). Fork-safe (no allocation).
#include "sandbox/fd_passing.hpp"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace plotq::sandbox {

int pidfd_open(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

int send_with_fds(int sock, const void* data, std::size_t len, const int* fds, int nfds, int flags) {
  if (nfds < 0 || nfds > kMaxPassFds) return -EINVAL;
  struct iovec iov = {const_cast<void*>(data), len};
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxPassFds)];
  if (nfds > 0) {
    std::memset(cbuf, 0, sizeof cbuf);
    msg.msg_control = cbuf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  }
  ssize_t n;
  do {
    n = ::sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  return static_cast<std::size_t>(n) == len ? 0 : -EIO;
}

ssize_t recv_with_fds(int sock, void* buf, std::size_t cap, int flags, int* fds, int max_fds, int* nfds,
                      bool* truncated) {
  struct iovec iov = {buf, cap};
  struct msghdr msg;
  std::memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int) * kMaxPassFds)];
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof cbuf;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  *nfds = 0;
  if (n < 0) return -errno;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (*nfds < max_fds) fds[(*nfds)++] = fd;
      else ::close(fd);  // more than asked for: dropped
    }
  }
  if (truncated) *truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
  return n;
}

int send_record(int sock, const char* text, int pass_fd) {
  return send_with_fds(sock, text, std::strlen(text), &pass_fd, pass_fd >= 0 ? 1 : 0, 0);
}

}  // namespace plotq::sandbox
