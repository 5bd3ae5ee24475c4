// One attempt of a job, up to its launch: the work dir and its files, the job's environment and
// ConfineSpec, then warm (a zygote's spare) or cold (the slot's helper, else a fork of the host).
#include "common/files.hpp"
#include "sandbox/launcher_state.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "sandbox/namespaces.hpp"

namespace plotq::sandbox {

namespace detail {

std::map<std::string, std::string> LauncherState::base_env() const {
  return {
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
  };
}

std::vector<std::string> LauncherState::job_env(const std::shared_ptr<Job>& job) {
  std::map<std::string, std::string> env = base_env();
  env["PLOTQ_SANDBOX_MODE"] = job->spec.mode;
  env["PLOTQ_JOB_TIMEOUT_S"] = std::to_string(job->spec.timeout_s);
  env["PLOTQ_RLIMIT_CPU_S"] = std::to_string(job->cpu_limit_s);
  if (job->spec.mode == "r") {
    for (const auto& [k, v] : r_env(config)) env[k] = v;
    env["PLOTQ_R_GUARD"] = config.r_guard ? "1" : "0";
  }
  for (const auto& [k, v] : job->spec.env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

ConfineSpec LauncherState::confine_spec(const std::shared_ptr<Job>& job, bool warm_path, struct stat& st) {
  return confine_spec_for(job->spec.mode, job->slot, job->dir_name, job->cpu_limit_s, warm_path, st);
}

ConfineSpec LauncherState::confine_spec_for(const std::string& mode, int slot_index, const std::string& dir_name,
                                            std::uint64_t cpu_s, bool warm_path, struct stat& st) {
  ConfineSpec spec;
  spec.unshare_flags = job_self_namespaces();
  spec.new_session = true;
  Slot& slot = slots[static_cast<size_t>(slot_index)];
  if (slot.cgroup.valid()) {
    for (const auto& f : slot.cgroup.procs_files())
      if (spec.n_cgroups < ConfineSpec::kMaxCgroups) set_path(spec.cgroup_procs[spec.n_cgroups++], f);
  }
  set_path(spec.work_dir, config.runs_dir + "/" + dir_name);
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
  std::uint32_t ns_uid = 1 + static_cast<std::uint32_t>(slot_index);
  spec.uid = spec.gid = warm_path ? ns_uid : uids.job_uid(static_cast<std::uint32_t>(slot_index));
  spec.drop_groups = !warm_path;
  bool plot_like = mode == "plot" || mode == "figure" || mode == "r";
  bool memory_bounded = slot.cgroup.valid() && layers.active("cgroup_memory");
  spec.rlimits.as_bytes = (plot_like && memory_bounded ? config.plot_rlimit_as_mb : config.rlimit_as_mb) << 20;
  spec.rlimits.nproc = config.rlimit_nproc;
  spec.rlimits.cpu_s = cpu_s;
  spec.rlimits.fsize_bytes = config.rlimit_fsize_mb << 20;
  spec.rlimits.nofile = config.rlimit_nofile;
  spec.nice = static_cast<int>(config.sandbox_nice);
  if (!base_filter.insns.empty()) {
    spec.filter = base_filter.insns.data();
    spec.filter_len = static_cast<unsigned short>(base_filter.insns.size());
  }
  return spec;
}

int LauncherState::make_work_dir(const std::string& name, std::uint32_t uid, const char** step) {
  std::string path = config.runs_dir + "/" + name;
  if (::mkdir(path.c_str(), 0700) != 0) {
    *step = "mkdir work dir";
    return -1;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    *step = "open work dir";
    return -1;
  }
  if (::fchown(fd, uid, uid) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    *step = "chown work dir";
    return -1;
  }
  return fd;
}

// The work dir is an armed spare's when the attempt adopted one (take_spare), else made here.
bool LauncherState::prepare_attempt(const std::shared_ptr<Job>& job, std::string* why) {
  auto fail = [&](const std::string& w) {
    job->scratch_full = errno == ENOSPC || errno == EDQUOT;
    *why = w + ": " + std::strerror(errno);
    return false;
  };
  const std::uint32_t uid = uids.job_uid(static_cast<std::uint32_t>(job->slot));
  if (job->spare.empty()) {
    job->dir_name = "job-" + std::to_string(::getpid()) + "-" + std::to_string(job->id) + "-" + std::to_string(job->attempt);
    const char* step = nullptr;
    job->dirfd = make_work_dir(job->dir_name, uid, &step);
    if (job->dirfd < 0) return fail(step);
  }
  for (const auto& [name, bytes] : job->spec.files) {
    int fd = write_new_file(job->dirfd, name, bytes);
    if (fd < 0) return fail("write " + name);
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

  // A retry after a warm launcher failure runs cold: the zygote is the likely culprit (it may be
  // dying right now), the cold path shares nothing with it.
  bool retry_after_warm = job->attempt > 1 && job->warm;
  bool want_warm = !(job->spec.cold ? *job->spec.cold : config.sandbox_cold) && layers.active("warm") && !retry_after_warm;
  std::shared_ptr<Zygote> z = want_warm ? zygote_for(job->spec.mode) : nullptr;
  job->spare.clear();
  job->spare_warm_for.clear();
  if (z && z->state() == Zygote::State::ready) take_spare(job, *z);

  std::string why;
  if (!prepare_attempt(job, &why)) {
    job->result.reason = job->scratch_full ? Reason::scratch_full : Reason::io;
    job->result.message = why;
    log_event("sandbox_io_error", {{"job", job->id}, {"error", why}});
    complete(job);
    return;
  }
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
  nlohmann::json msg = {{"job", job->id}, {"slot", job->slot}, {"mode", job->spec.mode}, {"argv", job->spec.argv}, {"env", env},
                        {"require_filter", config.require_exec_filter}};
  if (!job->spare.empty()) {
    // Confined already, in this dir: the job brings only its CPU allowance.
    msg["spare"] = job->spare;
    msg["cpu_s"] = job->cpu_limit_s;
  } else {
    nlohmann::json confine = to_json(spec);
    confine["seccomp"] = spec.filter != nullptr;
    msg["confine"] = confine;
  }
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
  if (job->spec.mode == "r") {
    // R: its binary with rharness.R, which arms the exec filter (plotq_r_arm.so) before the plot.
    img.path = config.r_exec;
    img.argv = {config.r_exec, "--vanilla", "--no-echo", "--no-readline", "-f", config.harness_dir + "/rharness.R",
                "--args", "--report-fd", "3", "--lib", r_arm_module(config)};
  } else {
    img.path = config.python;
    img.argv = {config.python, "-I", "-B", config.harness_dir + "/entry.py", "--mode", job->spec.mode,
                "--report-fd", "3", "--lib", config.confine_lib};
  }
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

}  // namespace detail

}  // namespace plotq::sandbox
