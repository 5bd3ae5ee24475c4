#include "sandbox/zygote.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "common/log.hpp"
#include "sandbox/namespaces.hpp"
#include "sandbox/output.hpp"
#include "sandbox/sandbox_metrics.hpp"

namespace plotq::sandbox {

namespace asio = boost::asio;

const char* to_string(Zygote::State s) {
  switch (s) {
    case Zygote::State::off: return "off";
    case Zygote::State::starting: return "starting";
    case Zygote::State::ready: return "ready";
    case Zygote::State::failed: return "failed";
  }
  return "off";
}

Zygote::Zygote(asio::io_context& io, const Config& config, std::string mode, std::uint32_t uid_first,
               std::uint32_t uid_count, std::vector<std::vector<std::string>> slot_cgroups)
    : io_(io), config_(config), mode_(std::move(mode)), uid_first_(uid_first), uid_count_(uid_count),
      slot_cgroups_(std::move(slot_cgroups)), start_timer_(io) {}

Zygote::~Zygote() { stop(); }

std::optional<pid_t> Zygote::pid() const {
  if (state_ != State::ready || zpid_ <= 0) return std::nullopt;
  return zpid_;
}

void Zygote::close_all() {
  ctl_.reset();
  sync_up_.reset();
  keeper_fd_.reset();  // closes the keeper's pidfd
  keeper_.pidfd = -1;
  if (sync_down_w_ >= 0) ::close(sync_down_w_);
  sync_down_w_ = -1;
  if (zpidfd_ >= 0) ::close(zpidfd_);
  zpidfd_ = -1;
  start_timer_.cancel();
}

// zygote.py for the Python modes.
void Zygote::python_image(ExecImage* out) const {
  ExecImage& img = *out;
  img.path = config_.python;
  img.argv = {config_.python, "-I", "-B", config_.harness_dir + "/zygote.py", "--mode", mode_, "--ctl-fd", "3",
              "--lib", config_.confine_lib};
  if (mode_ == "raw" && !config_.raw_preload.empty()) {
    std::string list;
    for (const auto& m : config_.raw_preload) list += (list.empty() ? "" : ",") + m;
    img.argv.push_back("--preload");
    img.argv.push_back(list);
  }
  if (std::uint32_t n = spares_for(config_, mode_)) {
    img.argv.push_back("--armed-spares");
    img.argv.push_back(std::to_string(n));
  }
  if (!slot_cgroups_.empty()) {
    img.argv.push_back("--slot-cgroups");
    img.argv.push_back(nlohmann::json(slot_cgroups_).dump());
  }
  img.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + scratch_, "TMPDIR=" + scratch_,
             "MPLCONFIGDIR=" + scratch_ + "/mpl", "MPLBACKEND=Agg", "PYTHONDONTWRITEBYTECODE=1",
             "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1", "NUMEXPR_NUM_THREADS=1",
             "LANG=C.UTF-8", "PLOTQ_SANDBOX_MODE=" + mode_};
}

// rzygote.R for mode r: R's binary as a cold R job runs it, with R's variables as a job has them.
// HOME is the job's (/tmp/job, which the zygote cannot reach) because R keeps the HOME it first
// expands "~" with for the life of the process: a job must expand "~" to its own dir, as cold.
void Zygote::r_image(ExecImage* out) const {
  ExecImage& img = *out;
  img.path = config_.r_exec;
  img.argv = {config_.r_exec, "--vanilla", "--no-echo", "--no-readline", "-f", config_.harness_dir + "/rzygote.R",
              "--args", "--ctl-fd", "3", "--lib", config_.confine_lib, "--zygote-lib", r_zygote_module(config_),
              "--arm-lib", r_arm_module(config_)};
  img.env = {"PATH=/usr/local/bin:/usr/bin:/bin", std::string("HOME=") + kJobDirInside, "TMPDIR=" + scratch_,
             "LANG=C.UTF-8", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1", "PLOTQ_SANDBOX_MODE=r"};
  for (const auto& [k, v] : r_env(config_)) img.env.push_back(k + "=" + v);
}

void Zygote::start() {
  if (state_ == State::starting || state_ == State::ready || state_ == State::failed) return;
  ++generation_;
  state_ = State::starting;
  maps_written_ = false;
  sync_buf_.clear();
  zpid_ = -1;
  auto fail = [&](const std::string& why) {
    log_event("zygote_start_failed", {{"mode", mode_}, {"error", why}});
    close_all();
    settle(false);
  };
  // The zygote's own scratch dir (matplotlib's cache, temp files of the preload).
  scratch_ = config_.runs_dir + "/zygote-" + mode_ + "-" + std::to_string(::getpid()) + "-" + std::to_string(generation_);
  if (::mkdir(scratch_.c_str(), 0700) != 0 || ::chown(scratch_.c_str(), uid_first_, uid_first_) != 0)
    return fail("scratch dir " + scratch_ + ": " + std::strerror(errno));

  int ctl[2], up[2], down[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) != 0) return fail("socketpair");
  if (::pipe2(up, O_CLOEXEC) != 0) {
    ::close(ctl[0]);
    ::close(ctl[1]);
    return fail("pipe");
  }
  if (::pipe2(down, O_CLOEXEC) != 0) {
    for (int fd : {ctl[0], ctl[1], up[0], up[1]}) ::close(fd);
    return fail("pipe");
  }
  ExecImage img;
  if (mode_ == "r") {
    r_image(&img);
  } else {
    python_image(&img);
  }
  img.seal();
  int rc = spawn_zygote_keeper(img, ctl[1], up[1], down[0], &keeper_);
  ::close(ctl[1]);
  ::close(up[1]);
  ::close(down[0]);
  if (rc != 0) {
    ::close(ctl[0]);
    ::close(up[0]);
    ::close(down[1]);
    return fail(std::string("fork: ") + std::strerror(-rc));
  }
  ::fcntl(ctl[0], F_SETFL, O_NONBLOCK);
  ::fcntl(up[0], F_SETFL, O_NONBLOCK);
  ctl_ = std::make_unique<asio::posix::stream_descriptor>(io_, ctl[0]);
  sync_up_ = std::make_unique<asio::posix::stream_descriptor>(io_, up[0]);
  sync_down_w_ = down[1];
  if (keeper_.pidfd >= 0) keeper_fd_ = std::make_unique<asio::posix::stream_descriptor>(io_, keeper_.pidfd);

  std::weak_ptr<Zygote> weak = weak_from_this();
  std::uint64_t gen = generation_;
  auto guard = [weak, gen](auto fn) {
    return [weak, gen, fn](const boost::system::error_code& ec, auto&&...) {
      auto self = weak.lock();
      if (!self || ec || self->generation_ != gen) return;
      fn(self.get());
    };
  };
  sync_up_->async_wait(asio::posix::descriptor_base::wait_read, guard([](Zygote* z) { z->on_sync_readable(); }));
  ctl_->async_wait(asio::posix::descriptor_base::wait_read, guard([](Zygote* z) { z->on_ctl_readable(); }));
  if (keeper_fd_)
    keeper_fd_->async_wait(asio::posix::descriptor_base::wait_read, guard([](Zygote* z) { z->on_keeper_exit(); }));
  start_timer_.expires_after(std::chrono::milliseconds(static_cast<long>(config_.zygote_start_timeout_s * 1000)));
  start_timer_.async_wait(guard([](Zygote* z) {
    if (z->state_ != State::starting) return;
    log_event("zygote_start_timeout", {{"mode", z->mode_}});
    // Z first (K reaps it), else K; K's exit handler settles.
    if (z->zpidfd_ >= 0) pidfd_kill(z->zpidfd_, SIGKILL);
    else if (z->keeper_.pid > 0) ::kill(z->keeper_.pid, SIGKILL);
  }));
}

void Zygote::on_sync_readable() {
  char buf[64];
  bool eof = false;
  for (;;) {
    ssize_t n = ::read(sync_up_->native_handle(), buf, sizeof buf);
    if (n > 0) {
      sync_buf_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    eof = n == 0;  // K closed it: done (after z<pid>) or dead (the exit handler settles)
    break;         // or EAGAIN
  }
  if (!maps_written_ && !sync_buf_.empty() && sync_buf_[0] == 'u') {
    int rc = write_id_maps(keeper_.pid, uid_first_, uid_count_);
    if (rc != 0) {
      log_event("zygote_id_maps_failed", {{"mode", mode_}, {"error", std::strerror(-rc)}});
      ::kill(keeper_.pid, SIGKILL);
      return;
    }
    maps_written_ = true;
    if (::write(sync_down_w_, "g", 1) != 1) {
      ::kill(keeper_.pid, SIGKILL);
      return;
    }
    ::close(sync_down_w_);
    sync_down_w_ = -1;
  }
  auto z = sync_buf_.find('z');
  auto nl = sync_buf_.find('\n', z == std::string::npos ? 0 : z);
  if (z != std::string::npos && nl != std::string::npos && zpid_ <= 0) {
    zpid_ = static_cast<pid_t>(std::strtol(sync_buf_.c_str() + z + 1, nullptr, 10));
    if (zpid_ > 0) {
      zpidfd_ = pidfd_open(zpid_);
      if (zpidfd_ >= 0) ::fcntl(zpidfd_, F_SETFD, FD_CLOEXEC);
    }
  }
  if (eof) {
    sync_up_.reset();
    return;
  }
  std::weak_ptr<Zygote> weak = weak_from_this();
  std::uint64_t gen = generation_;
  if (sync_up_)
    sync_up_->async_wait(asio::posix::descriptor_base::wait_read, [weak, gen](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (self && !ec && self->generation_ == gen && self->sync_up_) self->on_sync_readable();
    });
}

void Zygote::on_ctl_readable() {
  char buf[4096];
  // An event may carry one descriptor (a spare's pidfd); more are closed by recv_with_fds.
  int event_fd = -1, nfds = 0;
  ssize_t n = recv_with_fds(ctl_->native_handle(), buf, sizeof buf, MSG_DONTWAIT, &event_fd, 1, &nfds, nullptr);
  if (nfds == 0) event_fd = -1;
  if (n == -EAGAIN || n == -EINTR) {
    // spurious wake-up: wait again
  } else if (n <= 0) {
    // EOF: Z is gone; the keeper's exit settles everything. Stop listening.
    if (event_fd >= 0) ::close(event_fd);
    return;
  } else {
    try {
      auto j = nlohmann::json::parse(std::string(buf, static_cast<size_t>(n)));
      if (state_ == State::starting && j.value("event", "") == "ready") {
        preload_s_ = j.value("preload_s", 0.0);
        log_event("zygote_ready", {{"mode", mode_}, {"pid", zpid_}, {"preload_s", preload_s_}});
        count_zygote_ready(mode_);
        settle(true);
      } else if (state_ == State::ready && on_event) {
        on_event(j.value("event", ""), j.value("spare", ""), event_fd >= 0 ? pid_of_pidfd(event_fd) : -1);
      }
    } catch (const std::exception&) {
      log_event("zygote_bad_message", {{"mode", mode_}});
    }
  }
  if (event_fd >= 0) ::close(event_fd);
  std::weak_ptr<Zygote> weak = weak_from_this();
  std::uint64_t gen = generation_;
  if (ctl_)
    ctl_->async_wait(asio::posix::descriptor_base::wait_read, [weak, gen](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (self && !ec && self->generation_ == gen && self->ctl_) self->on_ctl_readable();
    });
}

void Zygote::on_keeper_exit() {
  int status = 0;
  reap_pidfd(keeper_.pidfd, false, &status);
  bool was_ready = state_ == State::ready;
  log_event("zygote_exit", {{"mode", mode_}, {"pid", zpid_}, {"status", status}, {"was_ready", was_ready}});
  count_zygote_exit(mode_);
  close_all();
  keeper_.pid = -1;
  if (!scratch_.empty()) {
    remove_tree(AT_FDCWD, scratch_);
    scratch_.clear();
  }
  if (was_ready) {
    state_ = State::off;  // restarted by the next job that wants it
  } else {
    settle(false);
  }
}

void Zygote::settle(bool ok) {
  start_timer_.cancel();
  if (ok) {
    state_ = State::ready;
    failures_ = 0;
  } else {
    ++failures_;
    state_ = failures_ > config_.zygote_max_restarts ? State::failed : State::off;
  }
  auto waiters = std::move(waiters_);
  waiters_.clear();
  // Armed first (posted before the waiters): a job that waited for this start finds its spare.
  if (ok && on_ready) on_ready();
  for (auto& cb : waiters) asio::post(io_, [cb, ok] { cb(ok); });
}

void Zygote::when_ready(std::function<void(bool)> cb) {
  if (state_ == State::ready || state_ == State::failed) {
    bool ok = state_ == State::ready;
    asio::post(io_, [cb, ok] { cb(ok); });
    return;
  }
  waiters_.push_back(std::move(cb));
  if (state_ == State::off) start();
}

bool Zygote::submit(const std::string& message, const ChildFds& fds) {
  if (state_ != State::ready || !ctl_) return false;
  // Dead but not noticed yet (its spares may still hold the socket open): do not hand it a job.
  if (zpidfd_ >= 0) {
    struct pollfd p = {zpidfd_, POLLIN, 0};
    if (::poll(&p, 1, 0) == 1) return false;
  }
  return send_job_fds(ctl_->native_handle(), message.data(), message.size(), fds) == 0;
}

bool Zygote::send(const std::string& message) {
  if (state_ != State::ready || !ctl_) return false;
  return ::send(ctl_->native_handle(), message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT) ==
         static_cast<ssize_t>(message.size());
}

void Zygote::stop() {
  ++generation_;
  pid_t k = keeper_.pid;
  int kfd = keeper_fd_ ? keeper_fd_->release() : -1;
  int zfd = zpidfd_;
  zpidfd_ = -1;
  // Z first, so that K (its parent) reaps it: killing K first would leave Z a zombie for the
  // machine's init to reap. Everything in Z's pid namespace dies with Z.
  auto wait_exit = [](int fd, int ms) {
    struct pollfd p = {fd, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1;
  };
  if (zfd >= 0) pidfd_kill(zfd, SIGKILL);
  else if (k > 0) ::kill(k, SIGKILL);
  if (kfd >= 0 && !wait_exit(kfd, 2000) && k > 0) {
    ::kill(k, SIGKILL);  // Z follows (PDEATHSIG)
    wait_exit(kfd, 3000);
  }
  if (kfd >= 0) {
    reap_pidfd(kfd, true, nullptr);
    ::close(kfd);
  }
  if (zfd >= 0) ::close(zfd);
  keeper_.pid = -1;
  close_all();
  if (!scratch_.empty()) {
    remove_tree(AT_FDCWD, scratch_);
    scratch_.clear();
  }
  if (state_ != State::failed) state_ = State::off;
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& cb : waiters) asio::post(io_, [cb] { cb(false); });
}

}  // namespace plotq::sandbox
