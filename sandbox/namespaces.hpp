// Linux namespaces: which ones a job gets, and the id maps of the zygote's user namespace.
#pragma once
#include <sys/types.h>

#include <cstdint>

namespace plotq::sandbox {

// Namespaces the job's first process unshares for itself (its pid namespace is made by its parent,
// which must fork into it). Net: empty (no interface but a down lo). Mount: private tmpfs, read-only
// view. IPC: SysV/POSIX queues and segments die with the job. UTS: its own hostname.
int job_self_namespaces();   // CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
int zygote_namespaces();     // CLONE_NEWUSER | CLONE_NEWPID | the job_self_namespaces()

// Writes /proc/<pid>/uid_map and gid_map "0 <outside_base> <count>" and setgroups "deny".
// Called by the host (root) for a child that has just unshared CLONE_NEWUSER. 0 or -errno.
int write_id_maps(pid_t pid, std::uint32_t outside_base, std::uint32_t count);

// Fork-safe unshare wrapper: 0 or -errno.
int unshare_ns(int flags);

}  // namespace plotq::sandbox
