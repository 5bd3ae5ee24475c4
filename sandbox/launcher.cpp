#include "sandbox/launcher_state.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstring>

#include <boost/asio/post.hpp>

#include "common/log.hpp"

namespace plotq::sandbox {

namespace {

bool known_mode(const std::string& m) { return m == "raw" || m == "data" || m == "plot" || m == "figure" || m == "r"; }

bool valid_env_name(const std::string& n) {
  if (n.empty() || n.size() > 128) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Work dirs (job-<pid>-..., spare-<pid>-...) and zygote scratch dirs (zygote-<mode>-<pid>-...) of processes that
// died without cleaning up.
void remove_stale_runs(const std::string& runs_dir) {
  int dfd = ::open(runs_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;
  std::vector<std::string> stale;
  if (DIR* d = ::fdopendir(::dup(dfd))) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      std::string rest;
      if (name.rfind("job-", 0) == 0) rest = name.substr(4);
      else if (name.rfind("spare-", 0) == 0) rest = name.substr(6);
      else if (name.rfind("zygote-", 0) == 0 && name.find('-', 7) != std::string::npos) rest = name.substr(name.find('-', 7) + 1);
      else continue;
      long pid = std::strtol(rest.c_str(), nullptr, 10);
      if (pid <= 0 || pid == ::getpid()) continue;
      if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // its owner lives
      stale.push_back(name);
    }
    ::closedir(d);
  }
  for (const auto& name : stale) remove_tree(dfd, name);
  ::close(dfd);
}

}  // namespace

using detail::Job;
using detail::LauncherState;

// ---------------------------------------------------------------------------------------------
// Construction

Launcher::Launcher(asio::io_context& io, Config config) {
  config = resolved(std::move(config));
  if (config.sandbox_max_jobs == 0) config.sandbox_max_jobs = 1;
  state_ = std::make_shared<LauncherState>(io, config);
  auto& s = *state_;
  // Runs dir: 0711 root, so that a job can reach its own dir by path but list nobody's.
  {
    std::string path;
    for (size_t i = 1; i <= s.config.runs_dir.size(); ++i) {
      if (i == s.config.runs_dir.size() || s.config.runs_dir[i] == '/') {
        path = s.config.runs_dir.substr(0, i);
        ::mkdir(path.c_str(), 0711);
      }
    }
    struct stat st;
    if (::lstat(s.config.runs_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      throw std::runtime_error("runs_dir " + s.config.runs_dir + " is not a directory");
    ::chmod(s.config.runs_dir.c_str(), 0711);
    remove_stale_runs(s.config.runs_dir);
  }
  s.uids = UidBlock(s.config.sandbox_lock_dir, s.config.sandbox_uid_base, s.config.sandbox_uid_count,
                    s.config.sandbox_max_jobs + 1);
  if (s.config.sandbox_cgroup) s.cgroups = setup_cgroups(s.config.cgroup_parent);
  Config probe = s.config;
  probe.sandbox_uid_base = s.uids.first();
  s.layers = probe_layers(probe, s.cgroups);
  try {
    s.base_filter = build_base_filter();
  } catch (const std::exception& e) {
    log_event("sandbox_seccomp_unavailable", {{"error", e.what()}});
  }
  s.slots.resize(s.config.sandbox_max_jobs);
  // Every slot's cgroup exists from the start: the zygotes' spares join theirs ahead of time.
  if (s.cgroups.memory() || s.cgroups.pids()) {
    for (size_t i = 0; i < s.slots.size(); ++i) {
      std::string err;
      std::uint32_t uid = s.uids.job_uid(static_cast<std::uint32_t>(i));
      s.slots[i].cgroup = JobCgroup::make(s.cgroups, "slot-" + std::to_string(i), s.config.cgroup_memory_mb << 20,
                                          s.config.cgroup_pids_max, uid, uid, &err);
      if (!s.slots[i].cgroup.valid()) log_event("sandbox_cgroup_failed", {{"slot", i}, {"error", err}});
    }
  }
  // One cold helper per slot, born in the slot's cgroups (a failure only means cold jobs of that
  // slot are forked by the host itself).
  for (size_t i = 0; i < s.slots.size(); ++i) {
    s.helpers.push_back(std::make_unique<ColdHelper>());
    s.start_helper(i);
  }
  log_event("sandbox_ready", {{"ok", s.layers.ok()}, {"missing", s.layers.missing},
                              {"uid_first", s.uids.first()}, {"cgroup", s.cgroups.detail}});
}

Launcher::~Launcher() { state_->shutdown(); }

std::optional<pid_t> Launcher::cold_helper_pid(std::size_t slot) const {
  if (slot >= state_->helpers.size() || !state_->helpers[slot]->alive()) return std::nullopt;
  return state_->helpers[slot]->pid();
}

const LayerReport& Launcher::layers() const { return state_->layers; }
bool Launcher::ready() const { return state_->layers.ok(); }
const Config& Launcher::config() const { return state_->config; }
std::uint32_t Launcher::uid_first() const { return state_->uids.first(); }
std::uint32_t Launcher::uid_count() const { return state_->uids.size(); }
std::size_t Launcher::queued() const { return state_->queue.size(); }
std::size_t Launcher::stuck() const { return state_->stuck_count; }

std::size_t Launcher::running() const {
  std::size_t n = 0;
  for (const auto& [id, job] : state_->active)
    if (job->phase != Job::Phase::queued) ++n;
  return n;
}

void Launcher::prewarm() {
  for (const auto& m : state_->config.warm_modes) prewarm(m);
}

void Launcher::prewarm(const std::string& mode) {
  if (state_->config.sandbox_cold || !state_->layers.active("warm")) return;
  if (auto z = state_->zygote_for(mode)) z->start();
}

std::optional<pid_t> Launcher::zygote_pid(const std::string& mode) const {
  auto it = state_->zygotes.find(mode);
  return it == state_->zygotes.end() ? std::nullopt : it->second->pid();
}

std::vector<pid_t> Launcher::spare_pids() const { return state_->spare_pids(); }

std::map<std::string, std::size_t> Launcher::spares_waiting() const {
  std::map<std::string, std::size_t> out;
  for (const auto& [mode, list] : state_->spares) out[mode] = list.size();
  return out;
}

bool Launcher::zygote_starting(const std::string& mode) const {
  auto it = state_->zygotes.find(mode);
  return it != state_->zygotes.end() && it->second->state() == Zygote::State::starting;
}

bool Launcher::zygote_ready(const std::string& mode) const {
  auto it = state_->zygotes.find(mode);
  return it != state_->zygotes.end() && it->second->state() == Zygote::State::ready;
}

void JobHandle::cancel() {
  auto job = job_.lock();
  if (!job) return;
  if (auto owner = job->owner.lock()) owner->cancel(job);
}

bool JobHandle::done() const {
  auto job = job_.lock();
  return !job || job->phase == Job::Phase::done;
}

std::uint64_t JobHandle::id() const { return id_; }

std::optional<pid_t> JobHandle::host_pid() const {
  auto job = job_.lock();
  if (!job || job->ghost <= 0 || job->status_done) return std::nullopt;
  return job->ghost;
}

// ---------------------------------------------------------------------------------------------
// run()

JobHandle Launcher::run(JobSpec spec, std::function<void(JobResult)> on_done) {
  auto& s = *state_;
  auto job = std::make_shared<Job>(s.io, s.config.stdout_head_bytes, s.config.stdout_tail_bytes,
                                   s.config.stderr_keep_bytes);
  job->id = s.next_id++;
  job->owner = state_;
  job->spec = std::move(spec);
  job->on_done = std::move(on_done);
  job->created = Clock::now();
  JobHandle handle;
  handle.job_ = job;
  handle.id_ = job->id;
  s.active[job->id] = job;

  // Validate before anything touches the machine.
  std::string bad;
  const JobSpec& js = job->spec;
  if (!known_mode(js.mode)) bad = "unknown mode";
  else if (!(js.timeout_s > 0) || !std::isfinite(js.timeout_s)) bad = "timeout_s must be > 0";
  else if (js.mode == "raw" && js.argv.empty()) bad = "raw mode needs argv[0], the program";
  for (const auto& [name, bytes] : js.files)
    if (!valid_file_name(name)) bad = "bad file name";
  for (const auto& [name, cap] : js.outputs)
    if (!valid_file_name(name)) bad = "bad output name";
  for (const auto& [name, value] : js.env)
    if (!valid_env_name(name) || value.find('\0') != std::string::npos) bad = "bad env name";
  for (const auto& a : js.argv)
    if (a.find('\0') != std::string::npos) bad = "NUL in argv";
  if (!bad.empty()) {
    s.finish_now(job, Reason::invalid_job, bad);
    return handle;
  }
  job->spec.timeout_s = std::min(job->spec.timeout_s, s.config.sandbox_max_timeout_s);
  if (!s.layers.ok()) {
    std::string missing;
    for (const auto& m : s.layers.missing) missing += (missing.empty() ? "" : ",") + m;
    s.finish_now(job, Reason::sandbox_unavailable, "missing layers: " + missing);
    return handle;
  }
  if (s.config.min_scratch_free_mb > 0) {
    struct statvfs fs;
    if (::statvfs(s.config.runs_dir.c_str(), &fs) == 0) {
      double free_mb = double(fs.f_bavail) * double(fs.f_frsize) / 1048576.0;
      if (free_mb < double(s.config.min_scratch_free_mb)) {
        job->result.measured = free_mb;
        job->result.limit = static_cast<double>(s.config.min_scratch_free_mb);
        s.finish_now(job, Reason::scratch_full, "the runs dir's file system is under its free-space floor");
        return handle;
      }
    }
  }
  if (s.config.min_mem_available_mb > 0) {
    auto avail = mem_available_mb();
    if (avail && *avail < s.config.min_mem_available_mb) {
      job->result.measured = static_cast<double>(*avail);
      job->result.limit = static_cast<double>(s.config.min_mem_available_mb);
      s.finish_now(job, Reason::low_memory, "MemAvailable under the floor");
      return handle;
    }
  }
  s.queue.push_back(job);
  std::weak_ptr<LauncherState> weak = state_;
  asio::post(s.io, [weak] {
    if (auto st = weak.lock()) st->start_queue();
  });
  return handle;
}
namespace detail {

void LauncherState::finish_now(const std::shared_ptr<Job>& job, Reason reason, const std::string& message) {
  job->result.reason = reason;
  job->result.message = message;
  job->phase = Job::Phase::done;
  active.erase(job->id);
  auto cb = std::move(job->on_done);
  JobResult r = job->result;
  asio::post(io, [cb, r] {
    if (cb) cb(r);
  });
}

void LauncherState::start_queue() {
  if (shutting_down) return;
  while (!queue.empty()) {
    int free_slot = pick_slot(queue.front()->spec.mode, queue.front()->spec.warm_for);
    if (free_slot < 0) return;
    auto job = queue.front();
    queue.pop_front();
    slots[static_cast<size_t>(free_slot)].busy = true;
    job->slot = free_slot;
    start_attempt(job);
  }
}

void LauncherState::cancel(const std::shared_ptr<Job>& job) {
  switch (job->phase) {
    case Job::Phase::queued:
      for (auto it = queue.begin(); it != queue.end(); ++it)
        if (*it == job) {
          queue.erase(it);
          break;
        }
      job->result.timings.queue_s = seconds(Clock::now() - job->created);
      finish_now(job, Reason::cancelled, "cancelled while queued");
      return;
    case Job::Phase::waiting_zygote:
      job->result.reason = Reason::cancelled;
      job->result.message = "cancelled while waiting for the zygote";
      job->result.timings.queue_s = seconds(Clock::now() - job->created);
      complete(job);
      return;
    case Job::Phase::running:
      stop_job(job, Reason::cancelled, std::nullopt, std::nullopt, "cancelled");
      return;
    case Job::Phase::finishing:
    case Job::Phase::done:
      return;
  }
}

void LauncherState::complete(const std::shared_ptr<Job>& job) {
  if (job->phase == Job::Phase::done) return;
  cleanup_attempt(job);
  job->phase = Job::Phase::done;
  if (job->slot >= 0 && !job->stuck) slots[static_cast<size_t>(job->slot)].busy = false;
  job->slot = job->stuck ? job->slot : -1;
  active.erase(job->id);
  auto cb = std::move(job->on_done);
  JobResult r = std::move(job->result);
  log_event("sandbox_job", {{"job", job->id}, {"label", job->spec.label}, {"mode", job->spec.mode},
                            {"reason", to_string(r.reason)}, {"warm", r.warm}, {"spare", r.spare}, {"attempts", r.attempts},
                            {"wall_s", std::round(r.wall_s * 1000) / 1000}});
  asio::post(io, [cb, r] {
    if (cb) cb(r);
  });
  std::weak_ptr<LauncherState> weak = weak_from_this();
  asio::post(io, [weak] {
    if (auto self = weak.lock()) self->start_queue();
  });
}

void LauncherState::shutdown() {
  shutting_down = true;
  for (auto& [id, job] : active) {
    if (job->gpidfd >= 0) pidfd_kill(job->gpidfd, SIGKILL);
    if (job->slot >= 0 && slots[static_cast<size_t>(job->slot)].cgroup.valid())
      slots[static_cast<size_t>(job->slot)].cgroup.kill_all(uids.job_uid(static_cast<std::uint32_t>(job->slot)));
    if (job->cpidfd) {
      // C exits once its G is gone; wait for it (bounded by the kill) so that no zombie stays.
      int fd = job->cpidfd->release();
      if (job->gpidfd < 0 && job->cpid > 0) ::kill(job->cpid, SIGKILL);
      reap_pidfd(fd, true, nullptr);
      ::close(fd);
    }
  }
  for (auto& [mode, z] : zygotes) z->stop();
  spare_timer.cancel();
  for (auto& [mode, list] : spares)
    for (auto& s : list) remove_spare_dir(s);
  spares.clear();
  for (auto& h : helpers) h->stop();
  for (auto& [id, job] : active) cleanup_attempt(job);
  active.clear();
  queue.clear();
  pool.join();
  for (auto& slot : slots)
    if (slot.cgroup.valid()) slot.cgroup.remove();
  teardown_cgroups(cgroups);
}

}  // namespace detail

}  // namespace plotq::sandbox
