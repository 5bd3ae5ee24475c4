// The Launcher's inner state (launcher.hpp's detail::LauncherState) and one job's bookkeeping,
// shared by the files that run it: launcher.cpp (public API, queue, completion), launcher_pool.cpp
// (zygotes and cold helpers), attempt.cpp (prepare and launch one attempt), attempt_io.cpp (its
// pipes and status records), attempt_end.cpp (watchdog, stop/kill, collection, verdict).
// Internal to plotq_sandbox: nothing outside sandbox/ includes it.
#pragma once
#include <sys/stat.h>

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <memory>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "sandbox/cgroup.hpp"
#include "sandbox/confine.hpp"
#include "sandbox/credentials.hpp"
#include "sandbox/launcher.hpp"
#include "sandbox/output.hpp"
#include "sandbox/seccomp_filter.hpp"
#include "sandbox/spawn.hpp"
#include "sandbox/verdict.hpp"
#include "sandbox/watchdog.hpp"
#include "sandbox/zygote.hpp"

namespace plotq::sandbox {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using Descriptor = asio::posix::stream_descriptor;

inline double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

namespace detail {

struct Slot {
  bool busy = false;
  JobCgroup cgroup;
};

// A zygote's child confined in a work dir the host made, waiting for one job (spares.cpp).
struct ArmedSpare {
  std::string name;  // its work dir under runs_dir, and its name in the zygote
  int slot = 0;
  std::uint64_t generation = 0;  // of the zygote that got the arm request
  Clock::time_point armed_at;
  int dirfd = -1;
  pid_t pid = -1;  // on the host, once the zygote said it forked it
  std::string warm_for;  // the library it was warmed for (spare_warm_ups), "" none
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
  std::string spare;  // the armed spare this attempt adopted (its dir is dir_name), "" for none
  std::string spare_warm_for;  // ... and the library it was warmed for
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
  bool scratch_full = false;  // preparing the attempt failed for want of space (ENOSPC)
  bool measuring = false;
  std::uint64_t oom_base = 0;
  std::uint64_t cpu_limit_s = 0;
  asio::steady_timer timeout_timer, watch_timer, grace_timer, kill_timer;
  std::array<char, 65536> out_chunk{}, err_chunk{}, rep_chunk{};
};

struct LauncherState : std::enable_shared_from_this<LauncherState> {
  LauncherState(asio::io_context& io_, Config c) : io(io_), config(std::move(c)), pool(1), spare_timer(io_) {}

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
  std::map<std::string, std::deque<ArmedSpare>> spares;  // mode -> armed spares, oldest first
  std::uint64_t next_spare = 1;
  std::map<std::string, int> spares_lost;  // per mode, see spares.cpp kMaxSparesLost
  std::map<std::string, std::uint64_t> armed_generation;  // per mode: the zygote start last armed for
  asio::steady_timer spare_timer;  // retires spares that waited too long
  bool spare_timer_armed = false;
  std::uint64_t next_id = 1;
  std::size_t stuck_count = 0;
  bool shutting_down = false;

  void start_queue();
  void cancel(const std::shared_ptr<Job>& job);
  void finish_now(const std::shared_ptr<Job>& job, Reason reason, const std::string& message);
  void start_attempt(const std::shared_ptr<Job>& job);
  bool prepare_attempt(const std::shared_ptr<Job>& job, std::string* why);
  // A fresh work dir under runs_dir owned by `uid`: its fd, or -1 with errno and *step set.
  int make_work_dir(const std::string& name, std::uint32_t uid, const char** step);
  // Removes it (on the worker, at once while shutting down) and closes dirfd (-1: none).
  void remove_work_dir(const std::string& name, int dirfd);
  // spares.cpp
  bool arm_spare(const std::string& mode, int slot, Zygote& z, const std::string& warm_for = "");
  void arm_spares(const std::string& mode);  // tops each kind up (spares_for, spare_warm_ups), spread over the slots
  // A free slot: the one whose spare suits the job best (spare_rank), longest waiting first; -1.
  int pick_slot(const std::string& mode, const std::string& warm_for) const;
  bool take_spare(const std::shared_ptr<Job>& job, Zygote& z);  // adopts one as the job's dir
  void retire_spare(const std::string& mode, ArmedSpare& s);
  void remove_spare_dir(ArmedSpare& s);
  void drop_spares(const std::string& mode, int slot);  // slot -1: all
  void spare_event(const std::string& mode, const std::string& event, const std::string& name, pid_t pid);
  void after_slot_kill(int slot);
  void rearm_after_kill();
  std::vector<pid_t> spare_pids() const;
  void watch_spare_ages();
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
              std::optional<std::uint64_t> scratch_free,
              std::map<std::string, OutputRead>& reads);
  void cleanup_attempt(const std::shared_ptr<Job>& job);
  void complete(const std::shared_ptr<Job>& job);
  void reap_c(const std::shared_ptr<Job>& job);
  std::string build_warm_message(const std::shared_ptr<Job>& job, const ConfineSpec& spec);
  ConfineSpec confine_spec(const std::shared_ptr<Job>& job, bool warm_path, struct stat& st);
  ConfineSpec confine_spec_for(const std::string& mode, int slot, const std::string& dir_name, std::uint64_t cpu_s,
                               bool warm_path, struct stat& st);
  std::vector<std::string> job_env(const std::shared_ptr<Job>& job);
  std::map<std::string, std::string> base_env() const;  // the part of every job's env no job decides
  std::shared_ptr<Zygote> zygote_for(const std::string& mode);
  void start_helper(std::size_t slot);
  void shutdown();
};

}  // namespace detail

}  // namespace plotq::sandbox
