// A launcher's start removes the cgroups of launchers that are gone, and kills what a dead one left
// in them (a job forked in the moment plotqd was SIGKILLed): crash.under_load once found such a
// group still there after the restart.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "sandbox/cgroup.hpp"
#include "tests/support/skip.hpp"

namespace sb = plotq::sandbox;

namespace {

// A pid that no process has now: a child that has exited and been reaped.
pid_t dead_pid() {
  pid_t p = fork();
  if (p == 0) _exit(0);
  waitpid(p, nullptr, 0);
  return p;
}

std::string parent_of(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

}  // namespace

TEST_CASE("cgroups: a dead launcher's group is removed at the next start, and what was left in it is killed",
          "[cgroup]") {
  sb::CgroupSupport own = sb::setup_cgroups("");
  if (own.version != 1 || !own.pids()) {
    skip_test("no writable v1 pids cgroup here");
    return;
  }
  const std::string stale = parent_of(own.pids_dir) + "/plotq-" + std::to_string(dead_pid());
  const std::string slot = stale + "/slot-0";
  REQUIRE(mkdir(stale.c_str(), 0755) == 0);
  REQUIRE(mkdir(slot.c_str(), 0755) == 0);
  // The dead launcher's job: still in its slot's group.
  pid_t orphan = fork();
  if (orphan == 0) {
    pause();
    _exit(0);
  }
  { std::ofstream(slot + "/cgroup.procs") << orphan << "\n"; }
  struct stat st {};
  REQUIRE(stat(slot.c_str(), &st) == 0);

  sb::CgroupSupport again = sb::setup_cgroups("");  // what the next plotqd does at its start
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 100 && reaped == 0; ++i) {
    reaped = waitpid(orphan, &status, WNOHANG);
    if (reaped == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (reaped == 0) kill(orphan, SIGKILL), waitpid(orphan, &status, 0);
  CHECK(reaped == orphan);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(stat(stale.c_str(), &st) != 0);  // the group is gone
  CHECK(stat(own.pids_dir.c_str(), &st) == 0);  // this launcher's own group stays
  sb::teardown_cgroups(again);
}
