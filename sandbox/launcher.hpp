// The launcher: runs one JobSpec in a confined child and calls back with its JobResult, entirely
// on the caller's Asio event loop (child exit, pipes and timers are asynchronous operations; the
// work-dir walks, output reads and removals run on one worker thread). Warm jobs come from a
// zygote per mode (zygote.hpp); cold jobs are forked and exec'd (spawn.hpp).
//
// Every method must be called on the io_context's thread. on_done runs there too, exactly once
// per run() (never inside run() itself).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "sandbox/config.hpp"
#include "sandbox/job.hpp"
#include "sandbox/layers.hpp"

namespace plotq::sandbox {

namespace detail {
struct Job;
struct LauncherState;
}  // namespace detail

class JobHandle {
 public:
  JobHandle() = default;
  // Kills the job (or drops it from the queue); its result has reason `cancelled`.
  void cancel();
  bool done() const;
  std::uint64_t id() const;
  // The job's first process as the host sees it (pid 1 of the job's pid namespace); empty before
  // it exists and after it is gone. For tests and logs.
  std::optional<pid_t> host_pid() const;

 private:
  friend class Launcher;
  std::weak_ptr<detail::Job> job_;
  std::uint64_t id_ = 0;
};

class Launcher {
 public:
  // Probes the layers, sets up cgroups and reserves a uid block. Throws std::runtime_error when
  // no uid block is free or the runs dir cannot be made. A missing required layer does not throw:
  // ready() is false and every job gets reason sandbox_unavailable.
  Launcher(boost::asio::io_context& io, Config config);
  // Kills every job (their on_done is not called), stops the zygotes, removes cgroups and work dirs.
  ~Launcher();
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;

  JobHandle run(JobSpec spec, std::function<void(JobResult)> on_done);

  const LayerReport& layers() const;
  bool ready() const;  // every required layer active
  // Starts the zygotes of Config::warm_modes now instead of on their first job.
  void prewarm();
  void prewarm(const std::string& mode);  // that mode's zygote only (when it is a warm mode)
  // A zygote's host pid (empty when not running). For tests.
  std::optional<pid_t> zygote_pid(const std::string& mode) const;
  bool zygote_ready(const std::string& mode) const;
  bool zygote_starting(const std::string& mode) const;  // started, its preload not done yet
  // The cold helper of a job slot (its host pid; empty when it is not running). For tests.
  std::optional<pid_t> cold_helper_pid(std::size_t slot) const;
  // Host pids of the armed spares waiting for a job (docs/sandbox.md "Armed spares"): processes
  // of a job uid that are no job's. For tests and /status.
  std::vector<pid_t> spare_pids() const;
  // Armed spares waiting per warm mode (forked or not yet).
  std::map<std::string, std::size_t> spares_waiting() const;
  // The uids this Launcher hands out: [uid_first, uid_first + uid_count); the first is the
  // zygotes' user-namespace root, the others one per job slot.
  std::uint32_t uid_first() const;
  std::uint32_t uid_count() const;
  std::size_t running() const;  // jobs with a process
  std::size_t queued() const;   // jobs waiting for a slot
  std::size_t stuck() const;    // jobs that did not die within kill_grace_s of SIGKILL
  const Config& config() const;

 private:
  std::shared_ptr<detail::LauncherState> state_;
};

}  // namespace plotq::sandbox
