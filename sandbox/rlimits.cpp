#include "sandbox/rlimits.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <cmath>

namespace plotq::sandbox {

std::uint64_t cpu_limit_for(double timeout_s, std::uint64_t max_cpu_s) {
  double t = std::isfinite(timeout_s) && timeout_s > 0 ? std::ceil(timeout_s) : 1.0;
  std::uint64_t cpu = t >= static_cast<double>(max_cpu_s) ? max_cpu_s : static_cast<std::uint64_t>(t);
  return cpu < 1 ? 1 : cpu;
}

namespace {

int lower(int resource, std::uint64_t value) {
  struct rlimit cur;
  if (::getrlimit(resource, &cur) != 0) return -errno;
  rlim_t v = static_cast<rlim_t>(value);
  if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < v) v = cur.rlim_max;  // only ever lower
  struct rlimit next = {v, v};
  return ::setrlimit(resource, &next) == 0 ? 0 : -errno;
}

}  // namespace

int apply_rlimits(const RlimitSpec& spec, const char** which) {
  struct Item {
    int resource;
    std::uint64_t value;
    const char* name;
  };
  const Item items[] = {
      {RLIMIT_AS, spec.as_bytes, "as"},         {RLIMIT_NPROC, spec.nproc, "nproc"},
      {RLIMIT_CPU, spec.cpu_s, "cpu"},          {RLIMIT_FSIZE, spec.fsize_bytes, "fsize"},
      {RLIMIT_NOFILE, spec.nofile, "nofile"},
  };
  for (const Item& it : items) {
    if (it.value == 0) continue;
    if (int e = lower(it.resource, it.value)) {
      if (which) *which = it.name;
      return e;
    }
  }
  if (int e = lower(RLIMIT_CORE, 0)) {
    if (which) *which = "core";
    return e;
  }
  if (int e = lower(RLIMIT_NICE, 0)) {
    if (which) *which = "nice";
    return e;
  }
  return 0;
}

}  // namespace plotq::sandbox
