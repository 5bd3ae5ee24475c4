// Who a job runs as. Every job gets its own unprivileged uid/gid (the slot's), never root
// (RLIMIT_NPROC is not enforced for root, and root could undo every other layer).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace plotq::sandbox {

// Drops to uid/gid: no supplementary groups (drop_groups: setgroups(0); otherwise they must
// already be empty, as in the zygote's user namespace where setgroups is denied), an empty
// capability bounding set, no ambient capabilities, then PR_SET_PDEATHSIG(SIGKILL) (the change
// of credentials cleared it), and fails (step parent-gone) when the parent died while it was
// cleared. Fork-safe. 0, or -errno with *step naming what failed.
int drop_to(uid_t uid, gid_t gid, bool drop_groups, const char** step);

// A block of the sandbox uid range reserved by one Launcher for its whole life, so that two
// processes (plotqd and `plotq sandbox run`, two test binaries) never hand the same uid to two
// jobs. Reserved with flock() on <lock_dir>/uid-<n>.lock, one per uid; released by the destructor
// (or by the kernel when the process dies).
class UidBlock {
 public:
  UidBlock() = default;
  // Reserves the first free block of `size` uids in [base, base+count): every lock free and no
  // live process with one of its uids. Throws on failure.
  UidBlock(const std::string& lock_dir, std::uint32_t base, std::uint32_t count, std::uint32_t size);
  UidBlock(UidBlock&& o) noexcept;
  UidBlock& operator=(UidBlock&& o) noexcept;
  UidBlock(const UidBlock&) = delete;
  UidBlock& operator=(const UidBlock&) = delete;
  ~UidBlock();

  std::uint32_t first() const { return first_; }  // the zygotes' uid (user-namespace root)
  std::uint32_t size() const { return size_; }
  std::uint32_t job_uid(std::uint32_t slot) const { return first_ + 1 + slot; }  // slot < size-1

 private:
  std::vector<int> fds_;
  std::uint32_t first_ = 0, size_ = 0;
};

}  // namespace plotq::sandbox
