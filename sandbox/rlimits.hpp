// Resource limits of a job: soft = hard, only ever lowered (a value above the current hard limit
// keeps the hard limit: without CAP_SYS_RESOURCE it cannot be raised, and we never want to).
#pragma once
#include <cstdint>

namespace plotq::sandbox {

struct RlimitSpec {
  std::uint64_t as_bytes = 0;     // RLIMIT_AS; 0 = leave
  std::uint64_t nproc = 0;        // RLIMIT_NPROC; 0 = leave
  std::uint64_t cpu_s = 0;        // RLIMIT_CPU; 0 = leave
  std::uint64_t fsize_bytes = 0;  // RLIMIT_FSIZE; 0 = leave
  std::uint64_t nofile = 0;       // RLIMIT_NOFILE; 0 = leave
  // RLIMIT_CORE and RLIMIT_NICE are always 0 (no core files; niceness can only go up).
};

// The CPU limit of a job: max(1, min(max_cpu_s, ceil(timeout_s))).
std::uint64_t cpu_limit_for(double timeout_s, std::uint64_t max_cpu_s);

// Applies every limit; fork-safe (syscalls only). 0, or -errno with *which naming the limit.
int apply_rlimits(const RlimitSpec& spec, const char** which);

}  // namespace plotq::sandbox
