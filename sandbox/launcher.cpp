#include "sandbox/launcher.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "sandbox/cgroup.hpp"
#include "sandbox/confine.hpp"
#include "sandbox/credentials.hpp"
#include "sandbox/namespaces.hpp"
#include "sandbox/output.hpp"
#include "sandbox/seccomp_filter.hpp"
#include "sandbox/spawn.hpp"
#include "sandbox/watchdog.hpp"
#include "sandbox/zygote.hpp"

namespace plotq::sandbox {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using Descriptor = asio::posix::stream_descriptor;

namespace {

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

bool known_mode(const std::string& m) { return m == "raw" || m == "data" || m == "plot" || m == "figure"; }

bool valid_env_name(const std::string& n) {
  if (n.empty() || n.size() > 128) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// The exact start line of the harness (sandbox/harness/README.md), among the first stdout bytes.
bool has_harness_start(const std::string& head) {
  static const std::string kLine = "HARNESS {\"event\": \"start\"}";
  size_t pos = 0;
  while (pos <= head.size()) {
    size_t nl = head.find('\n', pos);
    std::string line = head.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == kLine) return true;
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return false;
}

// Work dirs (job-<pid>-...) and zygote scratch dirs (zygote-<mode>-<pid>-...) of processes that
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

struct ExitRecord {
  int status = 0;
  double utime_s = 0, stime_s = 0;
  double maxrss_mb = 0;
};

}  // namespace

namespace detail {

struct Slot {
  bool busy = false;
  JobCgroup cgroup;
};

struct LauncherState;

struct Job : std::enable_shared_from_this<Job> {
  Job(asio::io_context& io, std::size_t keep_head, std::size_t keep_tail, std::size_t keep_err)
      : stdout_buf(keep_head, keep_tail), stderr_buf(keep_err), timeout_timer(io), watch_timer(io),
        grace_timer(io), kill_timer(io) {}

  std::uint64_t id = 0;
  std::weak_ptr<LauncherState> owner;
  JobSpec spec;
  std::function<void(JobResult)> on_done;
  JobResult result;
  enum class Phase { queued, waiting_zygote, running, finishing, done } phase = Phase::queued;
  int slot = -1;
  int attempt = 0;
  Clock::time_point created, first_spawn, attempt_start, launch_at, reported_at, exited_at;
  bool have_first_spawn = false;
  double used_s = 0;  // run time of earlier attempts (counted against the timeout)

  // --- one attempt ---
  std::string dir_name;
  int dirfd = -1;
  JobChannels ch;
  std::unique_ptr<Descriptor> out, err, rep, status, cpidfd;
  int gpidfd = -1;
  pid_t ghost = -1;
  pid_t cpid = -1;
  bool warm = false;
  HeadTail stdout_buf;
  Tail stderr_buf;
  std::string report;
  bool out_eof = false, err_eof = false, rep_eof = false, status_done = false, grace_over = false;
  std::optional<ExitRecord> exit;
  std::string spawn_error;
  std::optional<Reason> stop;
  std::optional<double> stop_measured, stop_limit;
  std::string stop_message;
  bool kill_pending = false, killed = false, stuck = false;
  bool measuring = false;
  std::uint64_t oom_base = 0;
  std::uint64_t cpu_limit_s = 0;
  asio::steady_timer timeout_timer, watch_timer, grace_timer, kill_timer;
  std::array<char, 65536> out_chunk{}, err_chunk{}, rep_chunk{};
};

struct LauncherState : std::enable_shared_from_this<LauncherState> {
  LauncherState(asio::io_context& io_, Config c) : io(io_), config(std::move(c)), pool(1) {}

  asio::io_context& io;
  Config config;
  LayerReport layers;
  CgroupSupport cgroups;
  UidBlock uids;
  BpfProgram base_filter;
  asio::thread_pool pool;  // the worker: walks, output reads, removals
  std::vector<Slot> slots;
  std::vector<std::unique_ptr<ColdHelper>> helpers;  // one per slot (cold jobs)
  std::deque<std::shared_ptr<Job>> queue;
  std::map<std::uint64_t, std::shared_ptr<Job>> active;  // queued or running
  std::map<std::string, std::shared_ptr<Zygote>> zygotes;
  std::uint64_t next_id = 1;
  std::size_t stuck_count = 0;
  bool shutting_down = false;

  void start_queue();
  void cancel(const std::shared_ptr<Job>& job);
  void finish_now(const std::shared_ptr<Job>& job, Reason reason, const std::string& message);
  void start_attempt(const std::shared_ptr<Job>& job);
  bool prepare_attempt(const std::shared_ptr<Job>& job, std::string* why);
  void launch(const std::shared_ptr<Job>& job);
  void launch_cold(const std::shared_ptr<Job>& job);
  bool launch_warm(const std::shared_ptr<Job>& job);
  void spawned(const std::shared_ptr<Job>& job);
  void read_pipe(const std::shared_ptr<Job>& job, int which);
  void read_status(const std::shared_ptr<Job>& job);
  void on_record(const std::shared_ptr<Job>& job, Record& rec);
  void status_finished(const std::shared_ptr<Job>& job);
  void watch(const std::shared_ptr<Job>& job);
  void stop_job(const std::shared_ptr<Job>& job, Reason reason, std::optional<double> measured,
                std::optional<double> limit, const std::string& message);
  void kill_job(const std::shared_ptr<Job>& job);
  void maybe_finish(const std::shared_ptr<Job>& job);
  void finish_attempt(const std::shared_ptr<Job>& job);
  void decide(const std::shared_ptr<Job>& job, const TreeMeasure& tree, bool tree_checked,
              std::map<std::string, OutputRead>& reads);
  void cleanup_attempt(const std::shared_ptr<Job>& job);
  void complete(const std::shared_ptr<Job>& job);
  void reap_c(const std::shared_ptr<Job>& job);
  std::string build_warm_message(const std::shared_ptr<Job>& job, const ConfineSpec& spec);
  ConfineSpec confine_spec(const std::shared_ptr<Job>& job, bool warm_path, struct stat& st);
  std::vector<std::string> job_env(const std::shared_ptr<Job>& job);
  std::shared_ptr<Zygote> zygote_for(const std::string& mode);
  void start_helper(std::size_t slot);
  void shutdown();
};

}  // namespace detail

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
    int free_slot = -1;
    for (size_t i = 0; i < slots.size(); ++i)
      if (!slots[i].busy) {
        free_slot = static_cast<int>(i);
        break;
      }
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

std::shared_ptr<Zygote> LauncherState::zygote_for(const std::string& mode) {
  auto it = zygotes.find(mode);
  if (it != zygotes.end()) return it->second;
  bool warm_mode = false;
  for (const auto& m : config.warm_modes) warm_mode = warm_mode || m == mode;
  if (!warm_mode) return nullptr;
  std::vector<std::vector<std::string>> slot_cgroups;
  for (const auto& slot : slots) slot_cgroups.push_back(slot.cgroup.procs_files());
  auto z = std::make_shared<Zygote>(io, config, mode, uids.first(), uids.size(), slot_cgroups);
  zygotes[mode] = z;
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

std::vector<std::string> LauncherState::job_env(const std::shared_ptr<Job>& job) {
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", kJobDirInside},
      {"TMPDIR", kJobDirInside},
      {"LANG", "C.UTF-8"},
      {"MPLBACKEND", "Agg"},
      {"MPLCONFIGDIR", std::string(kJobDirInside) + "/.config/matplotlib"},
      {"PYTHONDONTWRITEBYTECODE", "1"},
      {"OPENBLAS_NUM_THREADS", "1"},
      {"OMP_NUM_THREADS", "1"},
      {"MKL_NUM_THREADS", "1"},
      {"NUMEXPR_NUM_THREADS", "1"},
      {"PLOTQ_SANDBOX_MODE", job->spec.mode},
      {"PLOTQ_JOB_TIMEOUT_S", std::to_string(job->spec.timeout_s)},
      {"PLOTQ_RLIMIT_CPU_S", std::to_string(job->cpu_limit_s)},
  };
  for (const auto& [k, v] : job->spec.env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

ConfineSpec LauncherState::confine_spec(const std::shared_ptr<Job>& job, bool warm_path, struct stat& st) {
  ConfineSpec spec;
  spec.unshare_flags = job_self_namespaces();
  spec.new_session = true;
  Slot& slot = slots[static_cast<size_t>(job->slot)];
  if (slot.cgroup.valid()) {
    for (const auto& f : slot.cgroup.procs_files())
      if (spec.n_cgroups < ConfineSpec::kMaxCgroups) set_path(spec.cgroup_procs[spec.n_cgroups++], f);
  }
  set_path(spec.work_dir, config.runs_dir + "/" + job->dir_name);
  spec.work_dev = st.st_dev;
  spec.work_ino = st.st_ino;
  spec.read_only_root = true;
  spec.mount_proc = true;
  std::vector<std::string> hidden = config.hidden_paths;
  hidden.push_back(config.runs_dir);
  hidden.push_back(config.sandbox_lock_dir);
  for (const auto& h : hidden)
    if (spec.n_hidden < ConfineSpec::kMaxHidden && !h.empty() && h[0] == '/' && set_path(spec.hidden[spec.n_hidden], h))
      ++spec.n_hidden;
  // Warm: uids of the zygote's user namespace (0 = the zygote, 1+slot = this job).
  std::uint32_t ns_uid = 1 + static_cast<std::uint32_t>(job->slot);
  spec.uid = spec.gid = warm_path ? ns_uid : uids.job_uid(static_cast<std::uint32_t>(job->slot));
  spec.drop_groups = !warm_path;
  spec.rlimits.as_bytes = config.rlimit_as_mb << 20;
  spec.rlimits.nproc = config.rlimit_nproc;
  spec.rlimits.cpu_s = job->cpu_limit_s;
  spec.rlimits.fsize_bytes = config.rlimit_fsize_mb << 20;
  spec.rlimits.nofile = config.rlimit_nofile;
  spec.nice = static_cast<int>(config.sandbox_nice);
  if (!base_filter.insns.empty()) {
    spec.filter = base_filter.insns.data();
    spec.filter_len = static_cast<unsigned short>(base_filter.insns.size());
  }
  return spec;
}

bool LauncherState::prepare_attempt(const std::shared_ptr<Job>& job, std::string* why) {
  auto fail = [&](const std::string& w) {
    *why = w + ": " + std::strerror(errno);
    return false;
  };
  const std::uint32_t uid = uids.job_uid(static_cast<std::uint32_t>(job->slot));
  job->dir_name = "job-" + std::to_string(::getpid()) + "-" + std::to_string(job->id) + "-" + std::to_string(job->attempt);
  std::string path = config.runs_dir + "/" + job->dir_name;
  if (::mkdir(path.c_str(), 0700) != 0) return fail("mkdir work dir");
  job->dirfd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (job->dirfd < 0) return fail("open work dir");
  if (::fchown(job->dirfd, uid, uid) != 0) return fail("chown work dir");
  for (const auto& [name, bytes] : job->spec.files) {
    int fd = ::openat(job->dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return fail("create " + name);
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fd);
        return fail("write " + name);
      }
      off += static_cast<size_t>(n);
    }
    bool ok = ::fchown(fd, uid, uid) == 0;
    ::close(fd);
    if (!ok) return fail("chown " + name);
  }
  // The slot's cgroup (made at start, reused: it is empty between jobs).
  Slot& slot = slots[static_cast<size_t>(job->slot)];
  if (slot.cgroup.valid()) {
    job->oom_base = slot.cgroup.oom_kills();
    slot.cgroup.reset_peak();
  }
  if (int e = job->ch.open()) {
    errno = -e;
    return fail("pipes");
  }
  return true;
}

void LauncherState::start_attempt(const std::shared_ptr<Job>& job) {
  ++job->attempt;
  job->result.attempts = job->attempt;
  job->attempt_start = Clock::now();
  if (job->attempt == 1) job->result.timings.queue_s = seconds(job->attempt_start - job->created);
  // Fresh per-attempt state.
  job->stdout_buf = HeadTail(config.stdout_head_bytes, config.stdout_tail_bytes);
  job->stderr_buf = Tail(config.stderr_keep_bytes);
  job->report.clear();
  job->out_eof = job->err_eof = job->rep_eof = job->status_done = job->grace_over = false;
  job->exit.reset();
  job->spawn_error.clear();
  job->kill_pending = job->killed = false;
  job->reported_at = job->exited_at = Clock::time_point{};
  job->gpidfd = -1;
  job->ghost = job->cpid = -1;
  double remaining = job->spec.timeout_s - job->used_s;
  job->cpu_limit_s = cpu_limit_for(remaining, config.rlimit_cpu_s);

  std::string why;
  if (!prepare_attempt(job, &why)) {
    job->result.reason = Reason::io;
    job->result.message = why;
    log_event("sandbox_io_error", {{"job", job->id}, {"error", why}});
    complete(job);
    return;
  }
  // A retry after a warm launcher failure runs cold: the zygote is the likely culprit (it may be
  // dying right now), the cold path shares nothing with it.
  bool retry_after_warm = job->attempt > 1 && job->warm;
  bool want_warm = !(job->spec.cold ? *job->spec.cold : config.sandbox_cold) && layers.active("warm") && !retry_after_warm;
  std::shared_ptr<Zygote> z = want_warm ? zygote_for(job->spec.mode) : nullptr;
  if (z && z->state() != Zygote::State::failed) {
    if (z->state() == Zygote::State::ready) {
      if (launch_warm(job)) return;
      // The send failed (it just died): fall through to cold.
    } else if (!config.zygote_fallback_cold) {
      job->phase = Job::Phase::waiting_zygote;
      std::weak_ptr<LauncherState> weak = weak_from_this();
      auto waited_from = Clock::now();
      z->when_ready([weak, job, waited_from](bool ok) {
        auto self = weak.lock();
        if (!self || self->shutting_down || job->phase != Job::Phase::waiting_zygote) return;
        job->result.timings.queue_s += seconds(Clock::now() - waited_from);
        if (ok && self->launch_warm(job)) return;
        self->launch_cold(job);
      });
      return;
    } else {
      z->start();  // for the next job; this one runs cold
    }
  }
  launch_cold(job);
}

std::string LauncherState::build_warm_message(const std::shared_ptr<Job>& job, const ConfineSpec& spec) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& kv : job_env(job)) {
    auto eq = kv.find('=');
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  nlohmann::json confine = to_json(spec);
  confine["seccomp"] = spec.filter != nullptr;
  nlohmann::json msg = {{"job", job->id}, {"slot", job->slot}, {"mode", job->spec.mode}, {"argv", job->spec.argv}, {"env", env},
                        {"confine", confine}, {"require_filter", config.require_exec_filter}};
  return msg.dump();
}

bool LauncherState::launch_warm(const std::shared_ptr<Job>& job) {
  auto z = zygote_for(job->spec.mode);
  if (!z || z->state() != Zygote::State::ready) return false;
  struct stat st;
  if (::fstat(job->dirfd, &st) != 0) return false;
  ConfineSpec spec = confine_spec(job, true, st);
  if (!z->submit(build_warm_message(job, spec), job->ch.child)) return false;
  job->warm = true;
  spawned(job);
  return true;
}

void LauncherState::launch_cold(const std::shared_ptr<Job>& job) {
  struct stat st;
  if (::fstat(job->dirfd, &st) != 0) {
    job->spawn_error = "fstat work dir";
    job->status_done = true;
    spawned(job);
    return;
  }
  ConfineSpec spec = confine_spec(job, false, st);
  ExecImage img;
  img.path = config.python;
  img.argv = {config.python, "-I", "-B", config.harness_dir + "/entry.py", "--mode", job->spec.mode,
              "--report-fd", "3", "--lib", config.confine_lib};
  if (!config.require_exec_filter) img.argv.push_back("--filter-optional");
  img.argv.push_back("--");
  for (const auto& a : job->spec.argv) img.argv.push_back(a);
  img.env = job_env(job);
  img.seal();
  job->warm = false;
  ColdHelper* helper = helpers[static_cast<size_t>(job->slot)].get();
  ConfineSpec born_in_cgroup = spec;
  born_in_cgroup.n_cgroups = 0;  // the helper is in the slot's cgroups already; so is its C, so is G
  if (helper->alive() && helper->spawn(born_in_cgroup, img, job->ch.child) == 0) {
    spawned(job);  // C is the helper's child: the kernel reaps it
    return;
  }
  if (!helper->alive()) start_helper(static_cast<size_t>(job->slot));  // for the next job (one migration)
  Spawned c;
  int rc = spawn_cold(spec, img, job->ch.child, &c);
  if (rc != 0) {
    job->spawn_error = std::string("fork: ") + std::strerror(-rc);
    job->status_done = true;
  } else {
    job->cpid = c.pid;
    if (c.pidfd >= 0) job->cpidfd = std::make_unique<Descriptor>(io, c.pidfd);
  }
  spawned(job);
}

void LauncherState::spawned(const std::shared_ptr<Job>& job) {
  job->phase = Job::Phase::running;
  job->launch_at = Clock::now();
  job->ch.close_child();  // only the child (and the zygote, for warm jobs) holds them now
  if (!job->have_first_spawn) {
    job->have_first_spawn = true;
    job->first_spawn = job->attempt_start;
  }
  job->out = std::make_unique<Descriptor>(io, job->ch.stdout_r);
  job->err = std::make_unique<Descriptor>(io, job->ch.stderr_r);
  job->rep = std::make_unique<Descriptor>(io, job->ch.report_r);
  job->status = std::make_unique<Descriptor>(io, job->ch.status_r);
  job->ch.stdout_r = job->ch.stderr_r = job->ch.report_r = job->ch.status_r = -1;
  read_pipe(job, 0);
  read_pipe(job, 1);
  read_pipe(job, 2);
  if (job->status_done) {
    status_finished(job);
  } else {
    read_status(job);
  }
  if (job->cpidfd) reap_c(job);

  std::weak_ptr<LauncherState> weak = weak_from_this();
  double remaining = std::max(0.0, job->spec.timeout_s - job->used_s);
  job->timeout_timer.expires_after(std::chrono::microseconds(static_cast<long long>(remaining * 1e6)));
  job->timeout_timer.async_wait([weak, job](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || job->phase != Job::Phase::running) return;
    self->stop_job(job, Reason::timeout, job->spec.timeout_s, job->spec.timeout_s, "wall-clock timeout");
  });
  watch(job);
}

void LauncherState::reap_c(const std::shared_ptr<Job>& job) {
  std::weak_ptr<LauncherState> weak = weak_from_this();
  job->cpidfd->async_wait(Descriptor::wait_read, [weak, job](const boost::system::error_code& ec) {
    if (ec || !job->cpidfd) return;
    int status = 0;
    reap_pidfd(job->cpidfd->native_handle(), false, &status);
    job->cpidfd.reset();
    if (auto self = weak.lock()) self->maybe_finish(job);
  });
}

void LauncherState::read_pipe(const std::shared_ptr<Job>& job, int which) {
  Descriptor* d = which == 0 ? job->out.get() : which == 1 ? job->err.get() : job->rep.get();
  if (!d) return;
  auto& chunk = which == 0 ? job->out_chunk : which == 1 ? job->err_chunk : job->rep_chunk;
  std::weak_ptr<LauncherState> weak = weak_from_this();
  d->async_read_some(asio::buffer(chunk), [weak, job, which](const boost::system::error_code& ec, std::size_t n) {
    auto self = weak.lock();
    if (!self) return;
    if (n > 0) {
      if (which == 0) job->stdout_buf.append(job->out_chunk.data(), n);
      else if (which == 1) job->stderr_buf.append(job->err_chunk.data(), n);
      else if (job->report.size() < 512) job->report.append(job->rep_chunk.data(), std::min<size_t>(n, 512 - job->report.size()));
      if (which == 2 && job->reported_at == Clock::time_point{}) job->reported_at = Clock::now();
    }
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      (which == 0 ? job->out_eof : which == 1 ? job->err_eof : job->rep_eof) = true;
      self->maybe_finish(job);
      return;
    }
    self->read_pipe(job, which);
  });
}

void LauncherState::read_status(const std::shared_ptr<Job>& job) {
  std::weak_ptr<LauncherState> weak = weak_from_this();
  job->status->async_wait(Descriptor::wait_read, [weak, job](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || !job->status || job->status_done) return;
    for (;;) {
      Record rec;
      int rc = recv_record(job->status->native_handle(), &rec);
      if (rc == -EAGAIN) break;
      if (rc <= 0) {  // EOF (or error): whoever reported on it is gone
        self->status_finished(job);
        return;
      }
      self->on_record(job, rec);
      if (job->status_done) return;
    }
    self->read_status(job);
  });
}

void LauncherState::on_record(const std::shared_ptr<Job>& job, Record& rec) {
  if (rec.text == "pid") {
    if (rec.fd >= 0) {
      if (job->gpidfd >= 0) ::close(job->gpidfd);
      job->gpidfd = rec.fd;
      job->ghost = pid_of_pidfd(rec.fd);
      // A warm job's session (its scheduler autogroup) was made by its spare; only a privileged
      // writer may nice it at once (a cold job, root when it makes its session, does it itself).
      if (job->warm && config.sandbox_nice > 0 && job->ghost > 0) {
        int e = set_autogroup_nice(job->ghost, static_cast<int>(config.sandbox_nice));
        if (e != 0 && e != -ENOENT && e != -ESRCH) log_event("sandbox_autogroup_nice_failed", {{"errno", -e}});
      }
    }
    if (job->kill_pending || job->killed) kill_job(job);
    return;
  }
  if (rec.fd >= 0) ::close(rec.fd);
  if (rec.text.rfind("exit ", 0) == 0) {
    ExitRecord e;
    long long ut = 0, stt = 0;
    long rss = 0;
    if (std::sscanf(rec.text.c_str(), "exit %d %lld %lld %ld", &e.status, &ut, &stt, &rss) == 4) {
      e.utime_s = static_cast<double>(ut) / 1e6;
      e.stime_s = static_cast<double>(stt) / 1e6;
      e.maxrss_mb = static_cast<double>(rss) / 1024.0;
      job->exit = e;
    }
    job->exited_at = Clock::now();
    status_finished(job);
    return;
  }
  if (rec.text.rfind("error ", 0) == 0) {
    job->spawn_error = rec.text.substr(6);
    status_finished(job);
  }
}

void LauncherState::status_finished(const std::shared_ptr<Job>& job) {
  if (job->exited_at == Clock::time_point{}) job->exited_at = Clock::now();
  job->status_done = true;
  job->status.reset();
  job->timeout_timer.cancel();
  job->watch_timer.cancel();
  job->kill_timer.cancel();
  // Every process of the job is gone (its pid namespace died with its first process): the pipes
  // reach EOF now. Give them a grace period anyway (a descriptor passed to a stranger).
  if (!job->exit && job->gpidfd >= 0) pidfd_kill(job->gpidfd, SIGKILL);
  std::weak_ptr<LauncherState> weak = weak_from_this();
  job->grace_timer.expires_after(std::chrono::milliseconds(config.reader_grace_ms));
  job->grace_timer.async_wait([weak, job](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec) return;
    job->grace_over = true;
    self->maybe_finish(job);
  });
  maybe_finish(job);
}

void LauncherState::watch(const std::shared_ptr<Job>& job) {
  std::weak_ptr<LauncherState> weak = weak_from_this();
  job->watch_timer.expires_after(std::chrono::milliseconds(config.watch_interval_ms));
  job->watch_timer.async_wait([weak, job](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || job->phase != Job::Phase::running || job->status_done) return;
    if (!job->measuring && job->dirfd >= 0) {
      job->measuring = true;
      TreeLimits lim{self->config.run_budget_mb << 20, self->config.max_run_entries, self->config.max_run_depth};
      std::uint64_t kill_floor = self->config.kill_mem_available_mb;
      int dirfd = job->dirfd;
      // The walk runs on the worker; the verdict comes back to the loop. The work guard keeps
      // io.run() alive meanwhile; the job pointer is moved back so the loop drops the last copy.
      auto guard = asio::make_work_guard(self->io);
      asio::post(self->pool, [weak, job, lim, kill_floor, dirfd, guard, &io = self->io]() mutable {
        TreeMeasure m = measure_tree(dirfd, lim);
        std::optional<std::uint64_t> avail = kill_floor ? mem_available_mb() : std::nullopt;
        asio::post(io, [weak, job = std::move(job), m, lim, avail, kill_floor] {
          auto self3 = weak.lock();
          job->measuring = false;
          if (!self3 || job->phase != Job::Phase::running || job->status_done) return;
          if (!m.measurable)
            self3->stop_job(job, Reason::files, std::nullopt, static_cast<double>(lim.max_entries), "work dir unmeasurable (too deep)");
          else if (m.over_bytes(lim))
            self3->stop_job(job, Reason::disk, static_cast<double>(m.bytes), static_cast<double>(lim.max_bytes), "work dir over its byte budget");
          else if (m.over_entries(lim))
            self3->stop_job(job, Reason::files, static_cast<double>(m.entries), static_cast<double>(lim.max_entries), "work dir over its entry budget");
          else if (avail && *avail < kill_floor)
            self3->stop_job(job, Reason::memory, static_cast<double>(*avail), static_cast<double>(kill_floor), "MemAvailable under the kill floor");
        });
        guard.reset();
      });
    }
    self->watch(job);
  });
}

void LauncherState::stop_job(const std::shared_ptr<Job>& job, Reason reason, std::optional<double> measured,
                             std::optional<double> limit, const std::string& message) {
  if (job->status_done) return;
  if (!job->stop) {  // the first verdict names the run
    log_event("sandbox_stop", {{"job", job->id}, {"reason", to_string(reason)}, {"measured", measured ? nlohmann::json(*measured) : nlohmann::json(nullptr)},
                               {"after_s", std::round(seconds(Clock::now() - job->launch_at) * 1000) / 1000}});
    job->stop = reason;
    job->stop_measured = measured;
    job->stop_limit = limit;
    job->stop_message = message;
  }
  kill_job(job);
}

void LauncherState::kill_job(const std::shared_ptr<Job>& job) {
  job->kill_pending = true;
  if (job->gpidfd >= 0) {
    pidfd_kill(job->gpidfd, SIGKILL);  // pid 1 of the job's namespace: the kernel kills the rest
    if (job->ghost > 0 && pid_of_pidfd(job->gpidfd) == job->ghost) ::killpg(job->ghost, SIGKILL);
  } else if (job->cpid > 0 && !job->warm && !job->cpidfd) {
    // nothing: C is gone already
  }
  Slot& slot = slots[static_cast<size_t>(job->slot)];
  if (slot.cgroup.valid()) slot.cgroup.kill_all(uids.job_uid(static_cast<std::uint32_t>(job->slot)));
  if (!job->killed) {
    job->killed = true;
    std::weak_ptr<LauncherState> weak = weak_from_this();
    job->kill_timer.expires_after(std::chrono::milliseconds(static_cast<long>(config.kill_grace_s * 1000)));
    job->kill_timer.async_wait([weak, job](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (!self || ec || job->status_done) return;
      // It did not die: count it as stuck and give up waiting (its slot stays taken).
      job->stuck = true;
      ++self->stuck_count;
      log_event("sandbox_job_stuck", {{"job", job->id}, {"pid", job->ghost}});
      self->status_finished(job);
    });
  }
}

void LauncherState::maybe_finish(const std::shared_ptr<Job>& job) {
  if (job->phase != Job::Phase::running || !job->status_done) return;
  // C (cold path) is reaped before the result goes out: no zombie outlives a job.
  bool pipes_done = job->out_eof && job->err_eof && job->rep_eof && !job->cpidfd;
  if (!pipes_done && !job->grace_over) return;
  finish_attempt(job);
}

void LauncherState::finish_attempt(const std::shared_ptr<Job>& job) {
  job->phase = Job::Phase::finishing;
  job->grace_timer.cancel();
  job->out.reset();
  job->err.reset();
  job->rep.reset();
  if (job->gpidfd >= 0) ::close(job->gpidfd);
  job->gpidfd = -1;
  job->result.timings.run_s = job->reported_at != Clock::time_point{} ? seconds(job->exited_at - job->reported_at) : 0.0;
  job->result.timings.spawn_s = job->reported_at != Clock::time_point{} ? seconds(job->reported_at - job->attempt_start)
                                                                       : seconds(job->exited_at - job->attempt_start);
  // Waiting for a starting zygote is queue time, not spawn time.
  job->result.timings.spawn_s = std::max(0.0, job->result.timings.spawn_s - seconds(job->launch_at - job->attempt_start));
  // Post-exit check and output reads happen on the worker (disk I/O).
  bool exited_zero = job->exit && WIFEXITED(job->exit->status) && WEXITSTATUS(job->exit->status) == 0;
  // Outputs are read after any exit the host did not cause (a failed job's records explain the
  // failure: result.json, validation.json) and after a timeout; the caller decides what to trust.
  bool exited_normally = job->exit && WIFEXITED(job->exit->status);
  bool collect = (!job->stop && exited_normally) || job->stop == Reason::timeout;
  (void)exited_zero;
  std::map<std::string, std::uint64_t> wanted = collect ? job->spec.outputs : std::map<std::string, std::uint64_t>{};
  TreeLimits lim{config.run_budget_mb << 20, config.max_run_entries, config.max_run_depth};
  bool check_tree = !job->stop && job->dirfd >= 0;
  int dirfd = job->dirfd;
  std::weak_ptr<LauncherState> weak = weak_from_this();
  auto guard = asio::make_work_guard(io);
  asio::post(pool, [weak, job, wanted, lim, check_tree, dirfd, guard, &io = io]() mutable {
    TreeMeasure tree;
    if (check_tree) tree = measure_tree(dirfd, lim);
    bool tree_ok = !check_tree || (tree.measurable && !tree.over_bytes(lim) && !tree.over_entries(lim));
    std::map<std::string, OutputRead> reads;
    if (tree_ok && dirfd >= 0)
      for (const auto& [name, cap] : wanted) reads[name] = read_output(dirfd, name, cap);
    asio::post(io, [weak, job = std::move(job), tree, check_tree, reads = std::move(reads)]() mutable {
      auto self2 = weak.lock();
      if (!self2) return;
      self2->decide(job, tree, check_tree, reads);
      job->result.timings.collect_s = seconds(Clock::now() - job->exited_at);
      // A launcher failure (the entry never reported) is retried once with the remaining time.
      bool launcher_failed = job->result.reason == Reason::launcher && job->result.filter.empty();
      double used = job->used_s + seconds(job->exited_at - job->attempt_start);
      if (launcher_failed && job->attempt < 2 && job->spec.timeout_s - used >= self2->config.min_retry_s &&
          !self2->shutting_down) {
        log_event("sandbox_launcher_retry", {{"job", job->id}, {"error", job->result.message}});
        job->used_s = used;
        self2->cleanup_attempt(job);
        double queue_s = job->result.timings.queue_s;
        job->result = JobResult();
        job->result.timings.queue_s = queue_s;
        job->stop.reset();
        job->stop_measured.reset();
        job->stop_limit.reset();
        job->stop_message.clear();
        self2->start_attempt(job);
        return;
      }
      self2->complete(job);
    });
    guard.reset();
  });
}

void LauncherState::decide(const std::shared_ptr<Job>& job, const TreeMeasure& tree, bool tree_checked,
                           std::map<std::string, OutputRead>& reads) {
  JobResult& r = job->result;
  r.attempts = job->attempt;
  r.warm = job->warm;
  r.wall_s = seconds(job->exited_at - job->first_spawn);
  r.stdout_head = job->stdout_buf.head();
  r.stdout_tail = job->stdout_buf.tail();
  r.stdout_bytes = job->stdout_buf.total();
  r.stderr_tail = last_chars(job->stderr_buf.text(), config.stderr_tail_chars);
  std::string first_line = job->report.substr(0, job->report.find('\n'));
  bool entry_started = first_line.rfind("armed ", 0) == 0 || first_line.rfind("refused ", 0) == 0;
  r.filter = entry_started ? first_line : "";
  if (job->exit) {
    r.cpu_s = job->exit->utime_s + job->exit->stime_s;
    r.max_rss_mb = job->exit->maxrss_mb;
    if (WIFEXITED(job->exit->status)) r.exit_code = WEXITSTATUS(job->exit->status);
    if (WIFSIGNALED(job->exit->status)) r.signal = WTERMSIG(job->exit->status);
  }
  Slot& slot = slots[static_cast<size_t>(job->slot)];
  bool oom = slot.cgroup.valid() && slot.cgroup.oom_kills() > job->oom_base;
  if (oom) {
    std::uint64_t peak = slot.cgroup.memory_peak();
    if (peak) r.measured = static_cast<double>(peak) / 1048576.0;
    r.limit = static_cast<double>(config.cgroup_memory_mb);
  }

  auto stopped = [&](Reason reason, std::optional<double> measured, std::optional<double> limit, const std::string& msg) {
    r.reason = reason;
    r.measured = measured;
    r.limit = limit;
    r.message = msg;
    r.exit_code.reset();
    r.timed_out = reason == Reason::timeout;
  };
  if (job->stuck) r.message = "did not die within kill_grace_s of SIGKILL";
  if (job->stop) {
    stopped(*job->stop, job->stop_measured, job->stop_limit, job->stop_message);
    if (*job->stop == Reason::timeout) {
      // A timed-out run's outputs are still read.
      for (auto& [name, rd] : reads)
        if (rd.status == OutputRead::ok) r.outputs[name] = std::move(rd.data);
    }
    return;
  }
  if (tree_checked && !tree.measurable) {
    stopped(Reason::files, std::nullopt, static_cast<double>(config.max_run_entries), "work dir unmeasurable after exit");
    return;
  }
  if (tree_checked && tree.bytes > (config.run_budget_mb << 20)) {
    stopped(Reason::disk, static_cast<double>(tree.bytes), static_cast<double>(config.run_budget_mb << 20), "work dir over its byte budget after exit");
    return;
  }
  if (tree_checked && tree.entries > config.max_run_entries) {
    stopped(Reason::files, static_cast<double>(tree.entries), static_cast<double>(config.max_run_entries), "work dir over its entry budget after exit");
    return;
  }
  if (oom) {
    r.reason = Reason::memory;
    r.exit_code.reset();
    r.message = "the job's cgroup ran out of memory (OOM kill)";
    return;
  }
  if (!entry_started) {
    r.reason = Reason::launcher;
    std::string detail = !job->spawn_error.empty() ? job->spawn_error : first_line;
    r.message = detail.empty() ? "the sandbox never reached the job's entry" : "sandbox start failed: " + detail;
    r.exit_code.reset();
    return;
  }
  if (!job->exit) {  // the zygote (or C) died under it
    r.reason = Reason::launcher;
    r.message = "lost the job's process (" + (job->spawn_error.empty() ? std::string("no exit status") : job->spawn_error) + ")";
    return;
  }
  if (first_line.rfind("refused ", 0) == 0 && r.exit_code == 3) {
    r.reason = Reason::exec_denied;
    r.message = "the exec filter could not be armed: " + first_line.substr(8);
    return;
  }
  if (r.signal) {
    bool cpu_kill = (*r.signal == SIGKILL || *r.signal == SIGXCPU) &&
                    r.cpu_s + 0.25 >= static_cast<double>(job->cpu_limit_s);
    if (cpu_kill) {
      r.reason = Reason::cpu;
      r.measured = r.cpu_s;
      r.limit = static_cast<double>(job->cpu_limit_s);
      r.message = "CPU time limit reached";
    } else {
      r.reason = Reason::crashed;
      r.message = std::string("killed by signal ") + std::to_string(*r.signal);
    }
    return;
  }
  if (r.exit_code != 0) {
    if (job->spec.mode != "raw" && !has_harness_start(r.stdout_head)) {
      r.reason = Reason::harness_error;
      r.message = "the harness did not start";
    } else {
      r.reason = Reason::nonzero_exit;
      // The records of a failed job (result.json, validation.json) are read like any output;
      // one that cannot be read is simply absent.
      for (auto& [name, rd] : reads)
        if (rd.status == OutputRead::ok) r.outputs[name] = std::move(rd.data);
    }
    return;
  }
  r.reason = Reason::ok;
  for (auto& [name, rd] : reads) {
    if (rd.status == OutputRead::ok) {
      r.outputs[name] = std::move(rd.data);
    } else if (rd.status == OutputRead::too_large && r.reason == Reason::ok) {
      r.reason = Reason::output_too_large;
      r.measured = static_cast<double>(rd.measured);
      r.limit = static_cast<double>(job->spec.outputs[name]);
      r.message = name + ": " + rd.why;
    } else if ((rd.status == OutputRead::rejected || rd.status == OutputRead::error) && r.reason == Reason::ok) {
      r.reason = Reason::output_rejected;
      r.message = name + ": " + rd.why;
    }
  }
  if (r.reason != Reason::ok) r.outputs.clear();
}

void LauncherState::cleanup_attempt(const std::shared_ptr<Job>& job) {
  if (job->cpidfd) {  // C not reaped yet (grace ran out): it has nothing left to do
    int fd = job->cpidfd->native_handle();
    if (reap_pidfd(fd, false, nullptr) == 0) {
      pidfd_kill(fd, SIGKILL);
      reap_pidfd(fd, true, nullptr);
    }
    job->cpidfd.reset();
  }
  job->out.reset();
  job->err.reset();
  job->rep.reset();
  job->status.reset();
  job->ch.close_all();
  if (job->gpidfd >= 0) ::close(job->gpidfd);
  job->gpidfd = -1;
  job->timeout_timer.cancel();
  job->watch_timer.cancel();
  job->grace_timer.cancel();
  job->kill_timer.cancel();
  int dirfd = job->dirfd;
  job->dirfd = -1;
  std::string name = job->dir_name;
  if (dirfd < 0) return;
  std::string runs = config.runs_dir;
  auto remove = [dirfd, name, runs] {
    int parent = ::open(runs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parent >= 0) {
      remove_tree(parent, name);
      ::close(parent);
    }
    ::close(dirfd);
  };
  if (shutting_down) remove();
  else asio::post(pool, remove);
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
                            {"reason", to_string(r.reason)}, {"warm", r.warm}, {"attempts", r.attempts},
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
