// cgroup limits of a job (memory and pids for the whole job, all its processes together), when a
// writable hierarchy with those controllers exists: cgroup v1 `memory` and `pids` hierarchies (this
// machine), or v2 with both controllers delegated to an explicit Config::cgroup_parent. Otherwise
// the job runs under rlimits alone and the layer report says so.
//
// Layout (v1): <controller mount>/<own cgroup of this process or cgroup_parent>/plotq-<pid>/slot-<n>.
// One group per job slot, made on first use, reused by the slot's next job (it is empty between
// jobs: the job's pid namespace is gone), removed with the Launcher. The job's first process joins
// it itself (writes 0 to cgroup.procs, which is chowned to the job's uid) before it drops anything.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace plotq::sandbox {

struct CgroupSupport {
  int version = 0;          // 0 none, 1 v1, 2 v2
  std::string memory_dir;   // the launcher's group in the memory hierarchy ("" = no memory control)
  std::string pids_dir;     // ... in the pids hierarchy (v2: the same directory)
  std::string detail;       // why not, or where
  bool memory() const { return !memory_dir.empty(); }
  bool pids() const { return !pids_dir.empty(); }
};

// Detects the controllers, makes the launcher's own parent group (plotq-<pid>) and removes stale
// ones of launchers that are gone (dead, or their pid reused by a later process), SIGKILLing what
// is still in them. Never throws; a missing controller is reported in `detail`.
CgroupSupport setup_cgroups(const std::string& cgroup_parent);
void teardown_cgroups(const CgroupSupport& s);  // removes the launcher's groups (must be empty)

class JobCgroup {
 public:
  JobCgroup() = default;
  // Makes (or reuses) slot group `name`, sets the limits, hands cgroup.procs to `owner`.
  // Empty on failure with *err set.
  static JobCgroup make(const CgroupSupport& s, const std::string& name, std::uint64_t memory_bytes,
                        std::uint64_t pids_max, uid_t owner, gid_t group, std::string* err);
  bool valid() const { return !procs_files_.empty(); }
  const std::vector<std::string>& procs_files() const { return procs_files_; }  // for the child
  std::uint64_t oom_kills() const;   // the kernel's counter (compare before/after a job)
  std::uint64_t memory_peak() const; // bytes (v1 max_usage_in_bytes, v2 memory.peak), 0 unknown
  void reset_peak() const;
  // SIGKILL each task listed whose real uid is `uid` (the group also holds the slot's cold
  // helper and a zygote's waiting spare, which must live); returns how many were signalled.
  int kill_all(uid_t uid) const;
  bool empty() const;                // no task left
  bool remove() const;               // rmdir both groups

 private:
  int version_ = 0;
  std::string memory_, pids_;  // group directories
  std::vector<std::string> procs_files_;
};

}  // namespace plotq::sandbox
