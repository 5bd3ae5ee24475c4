// Descriptors passed over SOCK_SEQPACKET sockets (SCM_RIGHTS) and pidfds, shared by the host
// (spawn.cpp, zygote.cpp) and the R zygote (r_zygote.cpp, a module loaded into R that links this
// file alone). Fork-safe: no allocation.
#pragma once
#include <sys/types.h>

#include <cstddef>

namespace plotq::sandbox {

// Messages with descriptors attached (SCM_RIGHTS) on a SOCK_SEQPACKET socket. Fork-safe (no
// allocation). send_with_fds: 0 when the whole message went, else -errno (-EIO: partial).
// recv_with_fds: bytes received (0 with no fd = EOF) or -errno; up to max_fds descriptors
// (O_CLOEXEC) into fds, any more are closed; *truncated when the message or its descriptors did
// not fit. Both retry on EINTR.
constexpr int kMaxPassFds = 4;
int send_with_fds(int sock, const void* data, std::size_t len, const int* fds, int nfds, int flags);
ssize_t recv_with_fds(int sock, void* buf, std::size_t cap, int flags, int* fds, int max_fds, int* nfds,
                      bool* truncated);
// A status-socket record (text, and a descriptor when pass_fd >= 0), blocking.
int send_record(int sock, const char* text, int pass_fd);
int pidfd_open(pid_t pid);  // -1 on failure

}  // namespace plotq::sandbox
