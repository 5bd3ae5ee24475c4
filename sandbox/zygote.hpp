// The host side of a warm-start zygote (harness/zygote.py): starts it in its own user, pid,
// mount, net, ipc and uts namespaces, writes its id maps, waits for its "ready", hands it jobs
// over a SOCK_SEQPACKET control socket, notices its death and restarts it on demand.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "sandbox/config.hpp"
#include "sandbox/spawn.hpp"

namespace plotq::sandbox {

class Zygote : public std::enable_shared_from_this<Zygote> {
 public:
  enum class State { off, starting, ready, failed };

  // uid_first/uid_count: the user namespace maps its uids 0..count-1 to these host uids.
  // slot_cgroups[i]: the cgroup.procs files of job slot i (its spares join them ahead of time).
  Zygote(boost::asio::io_context& io, const Config& config, std::string mode, std::uint32_t uid_first,
         std::uint32_t uid_count, std::vector<std::vector<std::string>> slot_cgroups = {});
  ~Zygote();

  State state() const { return state_; }
  const std::string& mode() const { return mode_; }
  // Starts it when off. Failing to start `zygote_max_restarts` times in a row -> failed (for good).
  void start();
  // cb(true) once ready, cb(false) if this start failed; immediately (posted) when already settled.
  void when_ready(std::function<void(bool)> cb);
  // Hands a job over (message + the job's stdout, stderr, report and status descriptors).
  // False when not ready or the send failed.
  bool submit(const std::string& message, const ChildFds& fds);
  // A message without descriptors (arm or retire a spare). False when not ready or it failed.
  bool send(const std::string& message);
  // Called on the loop each time Z says it is ready (after every start).
  std::function<void()> on_ready;
  // Called on the loop with each event Z sends once ready: "spare" (an armed spare was forked;
  // pid: its pid on the host, from the pidfd the event carries) and "spare_lost".
  std::function<void(const std::string& event, const std::string& spare, pid_t pid)> on_event;
  // Bumps with every start and stop: what was handed to an earlier Z is gone.
  std::uint64_t generation() const { return generation_; }
  std::optional<pid_t> pid() const;  // Z's pid on the host
  // Kills it and waits (briefly) until it and everything under it is gone. Blocking: destructor
  // and shutdown only.
  void stop();
  double preload_s() const { return preload_s_; }

 private:
  void python_image(ExecImage* img) const;
  void r_image(ExecImage* img) const;
  void on_sync_readable();
  void on_ctl_readable();
  void on_keeper_exit();
  void settle(bool ok);
  void close_all();

  boost::asio::io_context& io_;
  Config config_;
  std::string mode_;
  std::uint32_t uid_first_, uid_count_;
  std::vector<std::vector<std::string>> slot_cgroups_;
  State state_ = State::off;
  std::uint32_t failures_ = 0;
  std::uint64_t generation_ = 0;  // bumps per start: stale handlers ignore themselves
  Spawned keeper_;
  pid_t zpid_ = -1;
  int zpidfd_ = -1;
  int sync_down_w_ = -1;
  std::string sync_buf_;
  bool maps_written_ = false;
  double preload_s_ = 0;
  std::string scratch_;  // the zygote's own HOME/TMPDIR (under runs_dir, owned by uid_first)
  std::unique_ptr<boost::asio::posix::stream_descriptor> ctl_, sync_up_, keeper_fd_;
  boost::asio::steady_timer start_timer_;
  std::vector<std::function<void(bool)>> waiters_;
};

const char* to_string(Zygote::State s);

}  // namespace plotq::sandbox
