// Armed spares (docs/sandbox.md "Armed spares"): for each warm mode and job slot, children of the
// zygote that are already confined in a fresh work dir the host made for them, with the exec
// filter armed, waiting for one job each. The host keeps the list (it must know the dir before it
// writes a job's files there); the zygote forks them (harness/zygote.py, "arm" and "retire").
// A job adopts one (its work dir becomes the job's); a spare that waited longer than
// spare_max_wait_s, or whose zygote or slot lost it, is retired and another armed.
#include "sandbox/launcher_state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "common/limits.hpp"
#include "common/log.hpp"

namespace plotq::sandbox {

namespace detail {

namespace {

// How often the waiting spares' ages are looked at, as a share of their longest wait.
constexpr double kAgeChecksPerWait = 4;

// How well a spare suits a job that draws with `warm_for` (lower is better): one warmed for its
// library, then one warmed for none (a warm-up's memory is wasted on another library's job, and
// its start may still be running), then any other.
int spare_rank(const ArmedSpare& s, const std::string& warm_for) {
  if (!s.warm_for.empty() && s.warm_for == warm_for) return 0;
  return s.warm_for.empty() ? 1 : 2;
}


}  // namespace

bool LauncherState::arm_spare(const std::string& mode, int slot, Zygote& z, const std::string& warm_for) {
  std::string name = "spare-" + std::to_string(::getpid()) + "-" + mode + (warm_for.empty() ? "" : "-" + warm_for) + "-" +
                     std::to_string(next_spare++);
  const char* step = nullptr;
  int dirfd = make_work_dir(name, uids.job_uid(static_cast<std::uint32_t>(slot)), &step);
  if (dirfd < 0) {
    if (std::string_view(step) != "mkdir work dir") remove_work_dir(name, -1);  // made, then failed
    return false;
  }
  ArmedSpare spare{name, slot, z.generation(), Clock::now(), dirfd, -1, warm_for};
  struct stat st{};
  bool ok = ::fstat(spare.dirfd, &st) == 0;
  if (ok) {
    // The longest CPU limit: the job lowers it to its own allowance (zygote.py set_job_cpu_limit).
    ConfineSpec spec = confine_spec_for(mode, slot, name, config.rlimit_cpu_s, true, st);
    nlohmann::json confine = to_json(spec);
    confine["seccomp"] = spec.filter != nullptr;
    // Its warm-up runs under the environment every job gets (HOME and TMPDIR its work dir), so
    // that nothing a library sets up then points where the job cannot go.
    nlohmann::json arm = {{"arm", name}, {"slot", slot}, {"confine", confine}, {"env", base_env()}};
    if (!warm_for.empty()) arm["warm"] = warm_for;  // harness.SPARE_WARM_UPS
    ok = z.send(arm.dump());
  }
  if (!ok) {
    remove_spare_dir(spare);
    return false;
  }
  spares[mode].push_back(std::move(spare));
  return true;
}

void LauncherState::arm_spares(const std::string& mode) {
  auto z = zygote_for(mode);
  if (!z || z->state() != Zygote::State::ready || shutting_down) return;
  if (armed_generation[mode] != z->generation()) {  // a new start: a fresh count of losses
    armed_generation[mode] = z->generation();
    spares_lost[mode] = 0;
  }
  auto& list = spares[mode];
  for (auto s = list.begin(); s != list.end();) {  // an earlier Z's: gone with it
    if (s->generation == z->generation()) {
      ++s;
      continue;
    }
    remove_spare_dir(*s);
    s = list.erase(s);
  }
  // Spread over the slots (each spare is bound to one: its uid, its cgroups); pick_slot sends a
  // job to the free slot whose spare waited longest.
  std::vector<std::uint32_t> per_slot(slots.size(), 0);
  for (const auto& s : list) ++per_slot[static_cast<size_t>(s.slot)];
  std::vector<SpareWarmUp> kinds = {{"", spares_for(config, mode)}};
  for (const auto& w : spare_warm_ups(config, mode)) kinds.push_back(w);
  for (const auto& kind : kinds) {
    auto have = static_cast<std::uint32_t>(std::count_if(list.begin(), list.end(), [&](const ArmedSpare& s) { return s.warm_for == kind.library; }));
    for (; have < kind.count; ++have) {
      auto fewest = std::min_element(per_slot.begin(), per_slot.end());
      if (fewest == per_slot.end() || !arm_spare(mode, static_cast<int>(fewest - per_slot.begin()), *z, kind.library)) break;
      ++*fewest;
    }
  }
  watch_spare_ages();
}

int LauncherState::pick_slot(const std::string& mode, const std::string& warm_for) const {
  if (auto it = spares.find(mode); it != spares.end()) {
    int best = -1, best_rank = 3;
    for (const auto& s : it->second)  // oldest first: the first of the best rank
      if (!slots[static_cast<size_t>(s.slot)].busy && spare_rank(s, warm_for) < best_rank) {
        best = s.slot;
        best_rank = spare_rank(s, warm_for);
      }
    if (best >= 0) return best;
  }
  for (size_t i = 0; i < slots.size(); ++i)
    if (!slots[i].busy) return static_cast<int>(i);
  return -1;
}

bool LauncherState::take_spare(const std::shared_ptr<Job>& job, Zygote& z) {
  auto it = spares.find(job->spec.mode);
  if (it == spares.end()) return false;
  auto& list = it->second;
  auto best = list.end();
  for (auto s = list.begin(); s != list.end(); ++s)
    if (s->slot == job->slot && s->generation == z.generation() &&
        (best == list.end() || spare_rank(*s, job->spec.warm_for) < spare_rank(*best, job->spec.warm_for)))
      best = s;
  if (best == list.end()) return false;
  job->dir_name = best->name;
  job->dirfd = best->dirfd;
  job->spare = best->name;
  job->spare_warm_for = best->warm_for;
  std::string warm_for = best->warm_for;
  list.erase(best);
  spares_lost[job->spec.mode] = 0;
  // The next one of its kind for this slot; the zygote forks it once the job has had its head start.
  arm_spare(job->spec.mode, job->slot, z, warm_for);
  return true;
}

void LauncherState::retire_spare(const std::string& mode, ArmedSpare& s) {
  auto it = zygotes.find(mode);
  if (it != zygotes.end() && it->second->generation() == s.generation)
    it->second->send(nlohmann::json{{"retire", s.name}}.dump());
  remove_spare_dir(s);
}

void LauncherState::remove_spare_dir(ArmedSpare& s) {
  remove_work_dir(s.name, s.dirfd);
  s.dirfd = -1;
}

void LauncherState::drop_spares(const std::string& mode, int slot) {
  auto it = spares.find(mode);
  if (it == spares.end()) return;
  auto& list = it->second;
  for (auto s = list.begin(); s != list.end();) {
    if (slot >= 0 && s->slot != slot) {
      ++s;
      continue;
    }
    retire_spare(mode, *s);
    s = list.erase(s);
  }
}

void LauncherState::spare_event(const std::string& mode, const std::string& event, const std::string& name, pid_t pid) {
  auto it = spares.find(mode);
  if (it == spares.end()) return;
  for (auto s = it->second.begin(); s != it->second.end(); ++s) {
    if (s->name != name) continue;
    if (event == "spare") {
      s->pid = pid;
      return;
    }
    if (event != "spare_lost") return;
    log_event("sandbox_spare_lost", {{"mode", mode}, {"slot", s->slot}});
    remove_spare_dir(*s);
    it->second.erase(s);
    // Spares that die waiting, again and again, are not armed again until the zygote restarts:
    // jobs then get the zygote's unarmed children.
    if (++spares_lost[mode] <= limits::kMaxSparesLost) arm_spares(mode);
    else log_event("sandbox_spares_off", {{"mode", mode}});
    return;
  }
}

std::vector<pid_t> LauncherState::spare_pids() const {
  std::vector<pid_t> out;
  for (const auto& [mode, list] : spares)
    for (const auto& s : list)
      if (s.pid > 0) out.push_back(s.pid);
  return out;
}

void LauncherState::after_slot_kill(int slot) {
  // The kill took every process of the slot's uid, its waiting spares too: others are armed once
  // the killed attempt is over (rearm_after_kill), not while a kill of it may still come.
  for (auto& [mode, list] : spares) drop_spares(mode, slot);
}

void LauncherState::rearm_after_kill() {
  for (const auto& [mode, z] : zygotes)
    if (spares_for(config, mode) > 0) arm_spares(mode);
}

void LauncherState::watch_spare_ages() {
  if (spare_timer_armed || shutting_down) return;
  spare_timer_armed = true;
  std::weak_ptr<LauncherState> weak = weak_from_this();
  spare_timer.expires_after(std::chrono::milliseconds(static_cast<long>(config.spare_max_wait_s * 1000 / kAgeChecksPerWait)));
  spare_timer.async_wait([weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec) return;
    self->spare_timer_armed = false;
    if (self->shutting_down) return;
    auto now = Clock::now();
    bool any = false;
    for (auto& [mode, list] : self->spares) {
      bool retired = false;
      for (auto s = list.begin(); s != list.end();) {
        if (seconds(now - s->armed_at) < self->config.spare_max_wait_s) {
          ++s;
          continue;
        }
        self->retire_spare(mode, *s);
        s = list.erase(s);
        retired = true;
      }
      if (retired) {
        log_event("sandbox_spares_retired", {{"mode", mode}});
        self->arm_spares(mode);
      }
      any = any || !list.empty();
    }
    if (any) self->watch_spare_ages();
  });
}

}  // namespace detail

}  // namespace plotq::sandbox
