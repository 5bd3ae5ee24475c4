#include "sandbox/credentials.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace plotq::sandbox {

int drop_to(uid_t uid, gid_t gid, bool drop_groups, const char** step) {
  auto fail = [&](const char* s) {
    if (step) *step = s;
    return -errno;
  };
  if (uid == 0 || gid == 0) {
    errno = EINVAL;
    return fail("root-refused");
  }
  // The uid change below clears PR_SET_PDEATHSIG until it is armed again at the end: a parent
  // that dies in between would leave this child running unseen. Who the parent is now, to check
  // after re-arming (0 when the parent is outside our PID namespace: nothing to compare then).
  const pid_t parent = ::getppid();
  if (drop_groups) {
    if (::setgroups(0, nullptr) != 0) return fail("setgroups");
  } else {
    gid_t probe[1];
    if (::getgroups(0, probe) != 0) {
      errno = EPERM;
      return fail("groups-present");
    }
  }
  // While still privileged: empty the bounding set so nothing can ever be regained.
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return fail("capbset");
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (::setresgid(gid, gid, gid) != 0) return fail("setresgid");
  if (::setresuid(uid, uid, uid) != 0) return fail("setresuid");
  uid_t r, e, s;
  gid_t rg, eg, sg;
  if (::getresuid(&r, &e, &s) != 0 || r != uid || e != uid || s != uid) return fail("verify-uid");
  if (::getresgid(&rg, &eg, &sg) != 0 || rg != gid || eg != gid || sg != gid) return fail("verify-gid");
  // Root in no namespace any more: setuid(0) must fail now.
  if (::setuid(0) == 0) {
    errno = EPERM;
    return fail("regained-root");
  }
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return fail("pdeathsig");
  if (parent != 0 && ::getppid() != parent) {
    errno = ESRCH;  // reparented: the parent died while the death signal was off
    return fail("parent-gone");
  }
  return 0;
}

namespace {

// True when some process has a real uid in [first, first+count) (scan of /proc/*/status; the
// owner of /proc/<pid> is root for non-dumpable processes, so it cannot be used).
bool uids_in_use(std::uint32_t first, std::uint32_t count) {
  DIR* d = ::opendir("/proc");
  if (!d) return false;
  bool used = false;
  char buf[2048];
  while (!used) {
    dirent* e = ::readdir(d);
    if (!e) break;
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string path = std::string("/proc/") + e->d_name + "/status";
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = 0;
    const char* uid = std::strstr(buf, "\nUid:");
    if (!uid) continue;
    unsigned long real = std::strtoul(uid + 5, nullptr, 10);
    used = real >= first && real < static_cast<unsigned long>(first) + count;
  }
  ::closedir(d);
  return used;
}

}  // namespace

UidBlock::UidBlock(const std::string& lock_dir, std::uint32_t base, std::uint32_t count,
                   std::uint32_t size) {
  if (base == 0) throw std::runtime_error("sandbox_uid_base must not be 0");
  if (size == 0 || size > count) throw std::runtime_error("sandbox_uid_count too small for max_jobs");
  ::mkdir(lock_dir.c_str(), 0700);  // may exist
  struct stat st;
  if (::lstat(lock_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error("lock_dir " + lock_dir + " is not a directory");
  // One lock per uid, so that blocks of different sizes (another Launcher with another max_jobs)
  // can never overlap.
  for (std::uint32_t start = 0; start + size <= count; start += size) {
    std::vector<int> got;
    for (std::uint32_t i = 0; i < size; ++i) {
      std::string path = lock_dir + "/uid-" + std::to_string(base + start + i) + ".lock";
      int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
      if (fd < 0) break;
      if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        break;
      }
      got.push_back(fd);
    }
    // A process already running with one of these uids (a Launcher that used another lock
    // directory, or a leftover) makes the block unusable even though its locks were free.
    if (got.size() == size && uids_in_use(base + start, size)) {
      for (int fd : got) ::close(fd);
      continue;
    }
    if (got.size() == size) {
      fds_ = std::move(got);
      first_ = base + start;
      size_ = size;
      return;
    }
    for (int fd : got) ::close(fd);
  }
  throw std::runtime_error("no free block of " + std::to_string(size) + " uids in the sandbox range");
}

UidBlock::UidBlock(UidBlock&& o) noexcept : fds_(std::move(o.fds_)), first_(o.first_), size_(o.size_) {
  o.fds_.clear();
}

UidBlock& UidBlock::operator=(UidBlock&& o) noexcept {
  if (this != &o) {
    for (int fd : fds_) ::close(fd);
    fds_ = std::move(o.fds_);
    o.fds_.clear();
    first_ = o.first_;
    size_ = o.size_;
  }
  return *this;
}

UidBlock::~UidBlock() {
  for (int fd : fds_) ::close(fd);
}

}  // namespace plotq::sandbox
