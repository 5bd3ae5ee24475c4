// The end of an attempt: the watchdog's walks, stopping and killing the job's whole tree, the
// collection after exit (work-dir walk, output reads on the worker) and the verdict (verdict.hpp),
// a launcher-failure retry, and the attempt's clean-up.
#include "sandbox/launcher_state.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmath>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "common/log.hpp"

namespace plotq::sandbox {

namespace detail {

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
  if (slot.cgroup.valid() && slot.cgroup.kill_all(uids.job_uid(static_cast<std::uint32_t>(job->slot))) > 0)
    after_slot_kill(job->slot);
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
    std::optional<std::uint64_t> scratch_free;
    struct statvfs fs;
    if (dirfd >= 0 && ::fstatvfs(dirfd, &fs) == 0) scratch_free = std::uint64_t(fs.f_bavail) * fs.f_frsize;
    asio::post(io, [weak, job = std::move(job), tree, check_tree, scratch_free, reads = std::move(reads)]() mutable {
      auto self2 = weak.lock();
      if (!self2) return;
      self2->decide(job, tree, check_tree, scratch_free, reads);
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
                           std::optional<std::uint64_t> scratch_free,
                           std::map<std::string, OutputRead>& reads) {
  AttemptFacts f;
  f.mode = job->spec.mode;
  f.report = job->report;
  f.exit = job->exit;
  f.spawn_error = job->spawn_error;
  if (job->stop) f.stop = HostStop{*job->stop, job->stop_measured, job->stop_limit, job->stop_message};
  f.stuck = job->stuck;
  Slot& slot = slots[static_cast<size_t>(job->slot)];
  f.oom = slot.cgroup.valid() && slot.cgroup.oom_kills() > job->oom_base;
  if (f.oom) f.memory_peak_bytes = slot.cgroup.memory_peak();
  f.cgroup_memory_mb = config.cgroup_memory_mb;
  f.tree_checked = tree_checked;
  f.tree = tree;
  f.limits = TreeLimits{config.run_budget_mb << 20, config.max_run_entries, config.max_run_depth};
  f.cpu_limit_s = job->cpu_limit_s;
  f.stdout_head = job->stdout_buf.head();
  f.scratch_free_bytes = scratch_free;
  f.output_caps = job->spec.outputs;

  JobResult verdict = judge_attempt(f, std::move(reads));
  JobResult& r = job->result;
  r.reason = verdict.reason;
  r.exit_code = verdict.exit_code;
  r.signal = verdict.signal;
  r.timed_out = verdict.timed_out;
  r.measured = verdict.measured;
  r.limit = verdict.limit;
  r.message = std::move(verdict.message);
  r.filter = std::move(verdict.filter);
  r.cpu_s = verdict.cpu_s;
  r.max_rss_mb = verdict.max_rss_mb;
  r.outputs = std::move(verdict.outputs);
  r.attempts = job->attempt;
  r.warm = job->warm;
  r.spare = job->warm && !job->spare.empty();
  if (r.spare) r.spare_warmed_for = job->spare_warm_for;
  r.wall_s = seconds(job->exited_at - job->first_spawn);
  r.stdout_head = job->stdout_buf.head();
  r.stdout_tail = job->stdout_buf.tail();
  r.stdout_bytes = job->stdout_buf.total();
  r.stderr_tail = last_chars(job->stderr_buf.text(), config.stderr_tail_chars);
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
  if (job->killed && !shutting_down) rearm_after_kill();  // its kill took its slot's spares
  int dirfd = job->dirfd;
  job->dirfd = -1;
  if (dirfd >= 0) remove_work_dir(job->dir_name, dirfd);
}

void LauncherState::remove_work_dir(const std::string& name, int dirfd) {
  std::string runs = config.runs_dir;
  auto remove = [dirfd, name, runs] {
    int parent = ::open(runs.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parent >= 0) {
      remove_tree(parent, name);
      ::close(parent);
    }
    if (dirfd >= 0) ::close(dirfd);
  };
  if (shutting_down) remove();
  else asio::post(pool, remove);
}

}  // namespace detail

}  // namespace plotq::sandbox
