// Test fixture of the sandbox tests: a Launcher on its own io_context, a private runs dir, and the
// invariants checked after every job and at the end: no process of the Launcher's sandbox uids is
// left (scan of /proc), no zombie child of the test process.
#pragma once
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "common/log.hpp"
#include "sandbox/launcher.hpp"

namespace sbt {

namespace sb = plotq::sandbox;
using Clock = std::chrono::steady_clock;

struct ProcInfo {
  int pid = 0, ppid = 0;
  unsigned uid = 0;
  char state = '?';
};

inline std::vector<ProcInfo> all_processes() {
  std::vector<ProcInfo> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream f(std::string("/proc/") + e->d_name + "/status");
    std::string key;
    ProcInfo p;
    p.pid = std::atoi(e->d_name);
    bool got = false;
    std::string line;
    while (std::getline(f, line)) {
      std::istringstream is(line);
      is >> key;
      if (key == "State:") is >> p.state;
      else if (key == "PPid:") is >> p.ppid;
      else if (key == "Uid:") {
        is >> p.uid;
        got = true;
      }
    }
    if (got) out.push_back(p);
  }
  closedir(d);
  return out;
}

// Processes whose real uid is in [first, first+count).
inline std::vector<ProcInfo> processes_of(unsigned first, unsigned count) {
  std::vector<ProcInfo> out;
  for (const auto& p : all_processes())
    if (p.uid >= first && p.uid < first + count) out.push_back(p);
  return out;
}

inline std::vector<ProcInfo> zombie_children() {
  std::vector<ProcInfo> out;
  int self = getpid();
  for (const auto& p : all_processes())
    if (p.ppid == self && p.state == 'Z') out.push_back(p);
  return out;
}

// Waits (up to `ms`) until `pred` holds; returns whether it did.
inline bool eventually(const std::function<bool()>& pred, int ms = 2000) {
  auto until = Clock::now() + std::chrono::milliseconds(ms);
  while (!pred()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A job's "key value" lines (what it printed of itself) as a map.
inline std::map<std::string, std::string> lines_of(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream is(out);
  std::string line;
  while (std::getline(is, line)) {
    auto sp = line.find(' ');
    if (sp != std::string::npos) m[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return m;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Sandbox {
  std::string dir;
  sb::Config config;
  boost::asio::io_context io;
  std::unique_ptr<sb::Launcher> launcher;

  explicit Sandbox(const std::function<void(sb::Config&)>& customize = {}) {
    plotq::set_log_enabled(std::getenv("PLOTQ_TEST_LOG") != nullptr);
    // On tmpfs: the jobs' file storms (10,000 entries, 64 MiB) cost milliseconds instead of seconds
    // of journaled disk; hidden inside jobs like every runs dir.
    char tmpl[] = "/dev/shm/plotq-sbtest-XXXXXX";
    dir = mkdtemp(tmpl);
    chmod(dir.c_str(), 0711);
    config.runs_dir = dir + "/runs";
    config.min_mem_available_mb = 0;  // the tests must not depend on the machine's load
    config.kill_mem_available_mb = 0;
    config.sandbox_max_jobs = 2;
    config.reader_grace_ms = 1000;
    if (customize) customize(config);
    launcher = std::make_unique<sb::Launcher>(io, config);
  }

  ~Sandbox() {
    if (launcher) shutdown();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  unsigned uid_first() const { return launcher->uid_first(); }
  unsigned uid_count() const { return launcher->uid_count(); }

  // Runs the loop until `done` or the deadline.
  void drive(const std::function<bool()>& done, int ms = 60000) {
    auto until = Clock::now() + std::chrono::milliseconds(ms);
    while (!done() && Clock::now() < until) {
      if (io.stopped()) io.restart();  // it stops whenever it runs out of work
      io.run_for(std::chrono::milliseconds(5));
    }
  }

  sb::JobResult run(const sb::JobSpec& spec) {
    bool done = false;
    sb::JobResult result;
    launcher->run(spec, [&](sb::JobResult r) {
      result = std::move(r);
      done = true;
    });
    drive([&] { return done; }, static_cast<int>(spec.timeout_s * 1000) + 30000);
    REQUIRE(done);
    check_no_job_process();
    return result;
  }

  // Every job process is gone once its result is out (the kernel empties a pid namespace before
  // its first process can be reaped); C (cold) is reaped before the result goes out.
  // Armed spares (processes of a job uid waiting for their job) are not leftovers: the launcher
  // names them once their zygote said it forked them. A zygote's child it has not named yet (a
  // spare forked this instant: nothing of a finished job is a zygote's child) gets a moment.
  void check_no_job_process() {
    std::vector<ProcInfo> left;
    auto until = Clock::now() + std::chrono::seconds(2);
    for (;;) {
      left.clear();
      bool only_unnamed_spares = true;
      auto spares = launcher->spare_pids();
      std::vector<int> zygotes;
      for (const char* m : {"raw", "data", "plot", "figure"})
        if (auto z = launcher->zygote_pid(m)) zygotes.push_back(*z);
      for (const auto& p : processes_of(uid_first() + 1, uid_count() - 1)) {
        if (std::find(spares.begin(), spares.end(), p.pid) != spares.end()) continue;
        left.push_back(p);
        only_unnamed_spares = only_unnamed_spares && std::find(zygotes.begin(), zygotes.end(), p.ppid) != zygotes.end();
      }
      if (left.empty() || !only_unnamed_spares || Clock::now() >= until) break;
      drive([] { return false; }, 20);
    }
    for (const auto& p : left) UNSCOPED_INFO("left: pid " << p.pid << " uid " << p.uid << " state " << p.state);
    CHECK(left.empty());
    // A zygote's keeper that exited (a test killed the zygote) is reaped by the loop: drive it.
    drive([] { return zombie_children().empty(); }, 2000);
    auto z = zombie_children();
    for (const auto& p : z) UNSCOPED_INFO("zombie: pid " << p.pid);
    CHECK(z.empty());
  }

  void wait_zygote(const std::string& mode) {
    launcher->prewarm(mode);  // not every warm mode: their preloads would load the machine for nothing
    drive([&] { return launcher->zygote_ready(mode); }, 60000);
    REQUIRE(launcher->zygote_ready(mode));
  }

  // Destroys the launcher: afterwards no process of its whole uid block (zygotes included).
  void shutdown() {
    unsigned first = uid_first(), count = uid_count();
    launcher.reset();
    io.restart();
    io.run_for(std::chrono::milliseconds(1));
    bool gone = eventually([&] { return processes_of(first, count).empty(); }, 3000);
    for (const auto& p : processes_of(first, count)) UNSCOPED_INFO("left after shutdown: pid " << p.pid << " uid " << p.uid);
    CHECK(gone);
    CHECK(zombie_children().empty());
  }
};

// A raw-mode job running `program` (Python source).
inline sb::JobSpec raw_job(const std::string& program, double timeout_s = 10, bool cold = false) {
  sb::JobSpec s;
  s.mode = "raw";
  s.files["job.py"] = program;
  s.argv = {"job.py"};
  s.timeout_s = timeout_s;
  s.cold = cold;
  return s;
}

// Where jobs can load the hostile C modules from: the build dir itself when jobs see it, else (a
// checkout under /tmp, which jobs never see) read-only copies staged under /var/lib/plotq.
inline std::string hostile_dir() {
  static const std::string dir = [] {
    std::string built = PLOTQ_HOSTILE_DIR;
    if (!plotq::sandbox::hidden_in_jobs(plotq::sandbox::Config{}, built)) return built;
    std::string staged = "/var/lib/plotq/stage/hostile-tests";
    std::filesystem::create_directories(staged);
    std::filesystem::permissions("/var/lib/plotq", std::filesystem::perms(0755));
    std::filesystem::permissions("/var/lib/plotq/stage", std::filesystem::perms(0755));
    std::filesystem::permissions(staged, std::filesystem::perms(0755));
    // Copy, then rename over: test processes run in parallel and their jobs may have a module
    // mapped right now (an in-place overwrite truncates it under them: "file too short", SIGBUS).
    for (const auto& e : std::filesystem::directory_iterator(built)) {
      if (e.path().extension() != ".so") continue;
      auto dst = std::filesystem::path(staged) / e.path().filename();
      auto tmp = dst;
      tmp += ".tmp-" + std::to_string(getpid());
      std::filesystem::copy_file(e.path(), tmp, std::filesystem::copy_options::overwrite_existing);
      std::filesystem::permissions(tmp, std::filesystem::perms(0755));
      std::filesystem::rename(tmp, dst);
    }
    return staged;
  }();
  return dir;
}

// Python prelude giving a job the hostile C modules.
inline std::string hostile(const std::string& module) {
  return "import ctypes\n" + module + " = ctypes.CDLL('" + hostile_dir() + "/" + module + ".so', use_errno=True)\n";
}

inline const char* path_name(bool cold) { return cold ? "cold" : "warm"; }

}  // namespace sbt
