// The processes a Launcher keeps between jobs: one zygote per warm mode (started on its first job
// or by prewarm) and one cold helper per job slot (born in the slot's cgroups).
#include "sandbox/launcher_state.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cstring>

#include "common/log.hpp"

namespace plotq::sandbox {

namespace detail {

std::shared_ptr<Zygote> LauncherState::zygote_for(const std::string& mode) {
  auto it = zygotes.find(mode);
  if (it != zygotes.end()) return it->second;
  bool warm_mode = false;
  for (const auto& m : config.warm_modes) warm_mode = warm_mode || m == mode;
  // Mode r's zygote is R (harness/rzygote.R): none on a host without R (its jobs fail cold as before).
  if (!warm_mode || (mode == "r" && ::access(config.r_exec.c_str(), X_OK) != 0)) return nullptr;
  std::vector<std::vector<std::string>> slot_cgroups;
  for (const auto& slot : slots) slot_cgroups.push_back(slot.cgroup.procs_files());
  auto z = std::make_shared<Zygote>(io, config, mode, uids.first(), uids.size(), slot_cgroups);
  zygotes[mode] = z;
  if (spares_for(config, mode) > 0) {
    std::weak_ptr<LauncherState> weak = weak_from_this();
    z->on_ready = [weak, mode] {
      if (auto self = weak.lock()) self->arm_spares(mode);
    };
    z->on_event = [weak, mode](const std::string& event, const std::string& spare, pid_t pid) {
      if (auto self = weak.lock()) self->spare_event(mode, event, spare, pid);
    };
  }
  return z;
}

// (Re)starts a slot's cold helper and watches it: one that dies is reaped at once (no zombie)
// and started again lazily, by the slot's next cold job (a helper that cannot start does not loop).
void LauncherState::start_helper(std::size_t slot) {
  ColdHelper& h = *helpers[slot];
  const sock_filter* f = base_filter.insns.empty() ? nullptr : base_filter.insns.data();
  int rc = h.start(slots[slot].cgroup.procs_files(), f, static_cast<unsigned short>(base_filter.insns.size()));
  if (rc != 0) {
    log_event("sandbox_cold_helper_failed", {{"slot", slot}, {"error", std::strerror(-rc)}});
    return;
  }
  int fd = h.pidfd() >= 0 ? ::fcntl(h.pidfd(), F_DUPFD_CLOEXEC, 0) : -1;
  if (fd < 0) return;
  auto watch = std::make_shared<Descriptor>(io, fd);
  std::weak_ptr<LauncherState> weak = weak_from_this();
  pid_t pid = h.pid();
  watch->async_wait(Descriptor::wait_read, [weak, watch, slot, pid](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || self->shutting_down) return;
    ColdHelper& helper = *self->helpers[slot];
    if (helper.pid() != pid) return;  // replaced already
    log_event("sandbox_cold_helper_died", {{"slot", slot}, {"pid", pid}});
    helper.stop();  // reaps it
  });
}

}  // namespace detail

}  // namespace plotq::sandbox
