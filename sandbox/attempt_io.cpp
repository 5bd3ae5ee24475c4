// A launched attempt on the loop: its stdout/stderr/report pipes, the status socket's records (the
// job's pidfd, its exit record, a spawn error), the timeout timer and the reader grace period.
#include "sandbox/launcher_state.hpp"

#include <signal.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>

#include "common/log.hpp"

namespace plotq::sandbox {

namespace detail {

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

}  // namespace detail

}  // namespace plotq::sandbox
