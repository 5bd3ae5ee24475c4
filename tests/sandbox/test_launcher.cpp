// The launcher's behaviour, cold and warm: results, reasons, outputs, limits, retry, cancel, layers.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "fixture.hpp"

using namespace sbt;

TEST_CASE("a job runs confined: own uid, pid 1, empty net, read-only world, one writable dir", "[launcher]") {
  Sandbox box;
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    auto r = box.run(raw_job(R"(
import os
print("uid", os.getuid(), os.getgid(), os.getgroups())
print("pid", os.getpid())
print("cwd", os.getcwd(), os.environ["HOME"])
print("procs", [p for p in os.listdir("/proc") if p.isdigit()])
print("ifaces", [l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]])
status = open("/proc/self/status").read()
print("nnp", [l.split()[1] for l in status.splitlines() if l.startswith("NoNewPrivs")][0])
print("seccomp", [l.split()[1] for l in status.splitlines() if l.startswith("Seccomp:")][0])
print("capeff", [l.split()[1] for l in status.splitlines() if l.startswith("CapEff")][0])
print("capbnd", [l.split()[1] for l in status.splitlines() if l.startswith("CapBnd")][0])
import resource
print("as", resource.getrlimit(resource.RLIMIT_AS))
print("nproc", resource.getrlimit(resource.RLIMIT_NPROC))
print("core", resource.getrlimit(resource.RLIMIT_CORE))
print("tmp", os.listdir("/tmp"))
print("oom_score_adj", open("/proc/self/oom_score_adj").read().strip())
print("nice", os.getpriority(os.PRIO_PROCESS, 0), resource.getrlimit(resource.RLIMIT_NICE))
try:
    os.setpriority(os.PRIO_PROCESS, 0, 0)  # back to the service's priority: refused
    print("renice done")
except PermissionError:
    print("renice refused")
print("nice after", os.getpriority(os.PRIO_PROCESS, 0))
if os.path.exists("/proc/self/autogroup"):  # the job's session is its own scheduler group, niced too
    import time  # a warm job's group is niced by the host when it learns the pid: wait for it
    deadline = time.monotonic() + 5
    while open("/proc/self/autogroup").read().split()[-1] != "10" and time.monotonic() < deadline:
        time.sleep(0.005)
    print("autogroup", open("/proc/self/autogroup").read().split()[1:])
else:
    print("autogroup absent")
open("written.txt", "w").write("mine")
)", 20, cold));
    REQUIRE(r.reason == sb::Reason::ok);
    CHECK(r.exit_code == 0);
    CHECK(r.warm == !cold);
    CHECK(r.filter == "armed tsync");
    CHECK(r.attempts == 1);
    const std::string& out = r.stdout_head;
    unsigned uid = cold ? box.uid_first() + 1 : 1;  // warm: the uid inside the zygote's user namespace
    CHECK_THAT(out, Catch::Contains("uid " + std::to_string(uid) + " " + std::to_string(uid) + " []"));
    CHECK_THAT(out, Catch::Contains("pid 1\n"));
    CHECK_THAT(out, Catch::Contains("cwd /tmp/job /tmp/job"));
    CHECK_THAT(out, Catch::Contains("procs ['1']"));
    CHECK_THAT(out, Catch::Contains("ifaces ['lo']"));
    CHECK_THAT(out, Catch::Contains("nnp 1"));
    CHECK_THAT(out, Catch::Contains("seccomp 2"));
    CHECK_THAT(out, Catch::Contains("capeff 0000000000000000"));
    CHECK_THAT(out, Catch::Contains("capbnd 0000000000000000"));
    CHECK_THAT(out, Catch::Contains("as (1073741824, 1073741824)"));
    CHECK_THAT(out, Catch::Contains("nproc (64, 64)"));
    CHECK_THAT(out, Catch::Contains("core (0, 0)"));
    CHECK_THAT(out, Catch::Contains("tmp ['job']"));
    CHECK_THAT(out, Catch::Contains("oom_score_adj 1000"));
    // sandbox_nice's default, and no way back; only raised, so a test run under nice 19 sees 19
    const std::string nice = std::to_string(std::max(10, ::getpriority(PRIO_PROCESS, 0)));
    CHECK_THAT(out, Catch::Contains("nice " + nice + " (0, 0)"));
    CHECK_THAT(out, Catch::Contains("renice refused"));
    CHECK_THAT(out, Catch::Contains("nice after " + nice));
    // A kernel without autogroups has none to check (this one has: kernel.sched_autogroup_enabled).
    if (std::filesystem::exists("/proc/self/autogroup")) CHECK_THAT(out, Catch::Contains("autogroup ['nice', '10']"));
    else CHECK_THAT(out, Catch::Contains("autogroup absent"));
    CHECK(r.cpu_s > 0);
    CHECK(r.max_rss_mb > 1);
    CHECK(r.wall_s > 0);
  }
}

TEST_CASE("outputs are read back - a missing one is just absent", "[launcher]") {
  Sandbox box;
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    auto spec = raw_job("open('out.csv','w').write('x,y\\n1,2\\n')\n", 10, cold);
    spec.outputs["out.csv"] = 1000;
    spec.outputs["absent.png"] = 1000;
    auto r = box.run(spec);
    REQUIRE(r.reason == sb::Reason::ok);
    CHECK(r.outputs.at("out.csv") == "x,y\n1,2\n");
    CHECK(r.outputs.count("absent.png") == 0);
  }
}

TEST_CASE("a hidden path that holds the job's own dir - /tmp or / - is not mounted over it", "[launcher]") {
  // A sweep hides its database's dir, and an operator may keep the database in /tmp: every job
  // then failed to enter its work dir (launcher, confine:chdir).
  Sandbox box([](sb::Config& c) {
    c.hidden_paths.push_back("/tmp");
    c.hidden_paths.push_back("/tmp/");
    c.hidden_paths.push_back("/");
  });
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    auto spec = raw_job("import os\nopen('out.csv','w').write(os.getcwd())\nprint(sorted(os.listdir('/var/tmp')))\n", 10, cold);
    spec.outputs["out.csv"] = 1000;
    auto r = box.run(spec);
    INFO(r.message << r.stderr_tail);
    REQUIRE(r.reason == sb::Reason::ok);
    CHECK(r.outputs.at("out.csv") == "/tmp/job");
    CHECK_THAT(r.stdout_head, Catch::Contains("[]"));  // the other hidden paths still are
  }
}

TEST_CASE("input files, argv and env reach the job", "[launcher]") {
  Sandbox box;
  auto spec = raw_job("import sys, os\nprint(sys.argv[1:], os.environ['ANYPLOT_THEME'], open('data.csv').read())\n", 10);
  spec.argv = {"job.py", "--flag", "two words"};
  spec.files["data.csv"] = "a,b\n";
  spec.env["ANYPLOT_THEME"] = "dark";
  auto r = box.run(spec);
  REQUIRE(r.reason == sb::Reason::ok);
  CHECK_THAT(r.stdout_head, Catch::Contains("['--flag', 'two words'] dark a,b"));
}

TEST_CASE("exit codes, exceptions and crashes get their reasons", "[launcher]") {
  Sandbox box;
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    auto r = box.run(raw_job("import sys\nsys.exit(7)\n", 10, cold));
    CHECK(r.reason == sb::Reason::nonzero_exit);
    CHECK(r.exit_code == 7);
    r = box.run(raw_job("raise ValueError('boom')\n", 10, cold));
    CHECK(r.reason == sb::Reason::nonzero_exit);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.stderr_tail, Catch::Contains("ValueError: boom"));
    r = box.run(raw_job("import ctypes\nctypes.string_at(0)\n", 10, cold));
    CHECK(r.reason == sb::Reason::crashed);
    CHECK(r.signal == SIGSEGV);
    CHECK_FALSE(r.exit_code.has_value());
  }
}

TEST_CASE("stderr keeps its last 2,000 characters", "[launcher]") {
  Sandbox box;
  auto r = box.run(raw_job("import sys\nfor i in range(5000): sys.stderr.write('line %d\\n' % i)\n", 10));
  REQUIRE(r.reason == sb::Reason::ok);
  CHECK(r.stderr_tail.size() == 2000);
  CHECK_THAT(r.stderr_tail, Catch::EndsWith("line 4999\n"));
}

TEST_CASE("a wall-clock timeout kills the job: exit code null, timed_out", "[launcher]") {
  Sandbox box;
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    auto t0 = Clock::now();
    auto r = box.run(raw_job("import time\nprint('started', flush=True)\ntime.sleep(60)\n", 0.8, cold));
    double took = std::chrono::duration<double>(Clock::now() - t0).count();
    CHECK(r.reason == sb::Reason::timeout);
    CHECK(r.timed_out);
    CHECK_FALSE(r.exit_code.has_value());
    CHECK(r.limit == Approx(0.8));
    CHECK_THAT(r.stdout_head, Catch::Contains("started"));
    CHECK(took < 5);
  }
}

TEST_CASE("cancel stops a running job and drops a queued one", "[launcher]") {
  Sandbox box([](sb::Config& c) { c.sandbox_max_jobs = 1; });
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    std::optional<sb::JobResult> first, second;
    auto h1 = box.launcher->run(raw_job("import time\nprint('running', flush=True)\ntime.sleep(60)\n", 30, cold),
                                [&](sb::JobResult r) { first = r; });
    auto h2 = box.launcher->run(raw_job("print('never')\n", 30, cold), [&](sb::JobResult r) { second = r; });
    box.drive([&] { return h1.host_pid().has_value(); }, 20000);
    REQUIRE(h1.host_pid().has_value());
    CHECK(box.launcher->queued() == 1);
    h2.cancel();
    h1.cancel();
    box.drive([&] { return first && second; }, 20000);
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->reason == sb::Reason::cancelled);
    CHECK_FALSE(first->exit_code.has_value());
    CHECK(second->reason == sb::Reason::cancelled);
    CHECK(second->stdout_head.empty());
    CHECK(h1.done());
    box.check_no_job_process();
  }
}

TEST_CASE("invalid jobs are refused before anything runs", "[launcher]") {
  Sandbox box;
  auto bad_mode = raw_job("pass\n");
  bad_mode.mode = "shell";
  CHECK(box.run(bad_mode).reason == sb::Reason::invalid_job);
  auto bad_name = raw_job("pass\n");
  bad_name.files["../escape.py"] = "x";
  CHECK(box.run(bad_name).reason == sb::Reason::invalid_job);
  auto bad_out = raw_job("pass\n");
  bad_out.outputs["/etc/passwd"] = 10;
  CHECK(box.run(bad_out).reason == sb::Reason::invalid_job);
  auto bad_timeout = raw_job("pass\n");
  bad_timeout.timeout_s = 0;
  CHECK(box.run(bad_timeout).reason == sb::Reason::invalid_job);
  auto no_program = raw_job("pass\n");
  no_program.argv.clear();
  CHECK(box.run(no_program).reason == sb::Reason::invalid_job);
}

TEST_CASE("a missing required layer refuses every job (sandbox_unavailable)", "[launcher][layers]") {
  Sandbox box([](sb::Config& c) { c.required_layers.push_back("no_such_layer"); });
  CHECK_FALSE(box.launcher->ready());
  CHECK(box.launcher->layers().missing == std::vector<std::string>{"no_such_layer"});
  auto r = box.run(raw_job("print('ran')\n"));
  CHECK(r.reason == sb::Reason::sandbox_unavailable);
  CHECK(r.stdout_head.empty());
}

TEST_CASE("the layer report names every layer and says what is active", "[layers]") {
  Sandbox box;
  const auto& rep = box.launcher->layers();
  CHECK(rep.ok());
  for (const char* name : {"uid", "seccomp", "exec_filter", "rlimits", "pid_ns", "net_ns", "mount_ns", "ipc_ns",
                           "uts_ns", "user_ns", "no_new_privs", "pidfd", "cgroup_memory", "cgroup_pids", "warm"})
    CHECK(rep.find(name) != nullptr);
  for (const char* name : {"uid", "seccomp", "exec_filter", "rlimits", "pid_ns", "net_ns", "mount_ns"})
    CHECK(rep.active(name));
  auto j = sb::to_json(rep);
  CHECK(j["ok"] == true);
  CHECK(j["layers"]["seccomp"]["active"] == true);
}

TEST_CASE("starting is refused under the memory floor (low_memory)", "[launcher]") {
  Sandbox box([](sb::Config& c) { c.min_mem_available_mb = 1u << 30; });
  auto r = box.run(raw_job("print('ran')\n"));
  CHECK(r.reason == sb::Reason::low_memory);
  CHECK(r.measured.has_value());
  CHECK(r.limit == Approx(static_cast<double>(1u << 30)));
}

TEST_CASE("a launcher failure (entry never reached) is retried once, then reported", "[launcher]") {
  // An interpreter that does not exist: exec fails in the confined child, before any entry.
  Sandbox box([](sb::Config& c) { c.python = "/nonexistent/python3"; c.sandbox_cold = true; });
  auto r = box.run(raw_job("print('ran')\n", 10, true));
  CHECK(r.reason == sb::Reason::launcher);
  CHECK(r.attempts == 2);
  CHECK_THAT(r.message, Catch::Contains("exec"));
  CHECK_FALSE(r.exit_code.has_value());
}

TEST_CASE("no time left for the retry: one attempt only", "[launcher]") {
  Sandbox box([](sb::Config& c) { c.python = "/nonexistent/python3"; c.sandbox_cold = true; c.min_retry_s = 5; });
  auto r = box.run(raw_job("print('ran')\n", 2, true));
  CHECK(r.reason == sb::Reason::launcher);
  CHECK(r.attempts == 1);
}

TEST_CASE("an exec filter that cannot be armed: refused, exit 3, exec_denied - no user code", "[launcher]") {
  // The library that arms the filter is missing: the entry reports `refused library` and exits 3.
  // Cold only (a zygote cannot start without the library).
  Sandbox box([](sb::Config& c) {
    c.confine_lib = "/nonexistent/libplotq_confine.so";
    c.sandbox_cold = true;
  });
  auto r = box.run(raw_job("open('ran.txt','w').write('x')\nprint('user code ran')\n", 10, true));
  CHECK(r.reason == sb::Reason::exec_denied);
  CHECK(r.filter == "refused library");
  CHECK(r.exit_code == 3);
  CHECK(r.stdout_head.empty());
}

TEST_CASE("a job exiting 3 by itself is not exec_denied", "[launcher]") {
  Sandbox box;
  auto r = box.run(raw_job("import sys\nsys.exit(3)\n"));
  CHECK(r.reason == sb::Reason::nonzero_exit);
  CHECK(r.filter == "armed tsync");
}

TEST_CASE("harness modes: no start line and a failure is harness_error", "[launcher]") {
  // A stand-in harness directory: the real entry.py and zygote.py with a harness.py of our own.
  // It must be visible inside jobs: not under /tmp (an empty tmpfs there).
  std::string fake = std::string(PLOTQ_BINARY_DIR) + "/tests/sandbox/fake-harness-" + std::to_string(getpid());
  std::filesystem::remove_all(fake);
  Sandbox box([&fake](sb::Config& c) {
    std::filesystem::create_directories(fake);
    std::string real = plotq::sandbox::resolved(sb::Config{}).harness_dir;
    std::filesystem::copy_file(real + "/entry.py", fake + "/entry.py");
    std::filesystem::copy_file(real + "/zygote.py", fake + "/zygote.py");
    std::ofstream(fake + "/harness.py") << "import sys\n"
                                           "def preload(mode):\n    pass\n"
                                           "def main(argv):\n"
                                           "    if argv[0] == '--quiet-fail':\n        return 4\n"
                                           "    print('HARNESS {\"event\": \"start\"}', flush=True)\n"
                                           "    if argv[0] == '--fail':\n        return 5\n"
                                           "    open('out.csv','w').write('a\\n1\\n')\n"
                                           "    print('HARNESS {\"event\": \"end\"}')\n    return 0\n";
    chmod(fake.c_str(), 0755);
    c.harness_dir = fake;
  });
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    sb::JobSpec s;
    s.mode = "data";
    s.timeout_s = 20;
    s.cold = cold;
    s.files["snippet.py"] = "df = None\n";
    s.outputs["out.csv"] = 100;
    s.argv = {"--data", "snippet.py"};
    auto r = box.run(s);
    CHECK(r.reason == sb::Reason::ok);
    CHECK(r.outputs["out.csv"] == "a\n1\n");
    s.argv = {"--fail"};
    r = box.run(s);
    CHECK(r.reason == sb::Reason::nonzero_exit);
    CHECK(r.exit_code == 5);
    s.argv = {"--quiet-fail"};
    r = box.run(s);
    CHECK(r.reason == sb::Reason::harness_error);
    CHECK(r.exit_code == 4);
  }
  box.shutdown();
  box.launcher.reset();
  std::filesystem::remove_all(fake);
}

TEST_CASE("paths that jobs cannot see are reported as missing layers", "[layers]") {
  Sandbox box([](sb::Config& c) { c.harness_dir = "/tmp/somewhere/harness"; });
  const auto* l = box.launcher->layers().find("harness");
  REQUIRE(l != nullptr);
  CHECK_FALSE(l->active);
  CHECK_THAT(l->detail, Catch::Contains("hidden"));
}

// The cold helper's cgroup lines (memory, pids) as /proc/<pid>/cgroup lists them.
static std::vector<std::string> cgroup_lines(pid_t pid) {
  std::vector<std::string> out;
  std::istringstream is(read_file("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(is, line);)
    if (line.find(":memory:") != std::string::npos || line.find(":pids:") != std::string::npos) out.push_back(line);
  return out;
}

TEST_CASE("cold jobs are born in the slot's cgroups from its cold helper - a job's kill spares the helper",
          "[launcher][cold]") {
  Sandbox box([](sb::Config& c) { c.sandbox_max_jobs = 1; });
  auto helper = box.launcher->cold_helper_pid(0);
  REQUIRE(helper);
  unsigned helper_uid = 1;
  for (const auto& p : all_processes())
    if (p.pid == *helper) helper_uid = p.uid;
  CHECK(helper_uid == 0);  // not a job uid: the cgroup kill (by uid) passes it by
  bool cgroups = box.launcher->layers().active("cgroup_memory") || box.launcher->layers().active("cgroup_pids");
  // It joins them right after its fork (before it reads its first job).
  auto in_slot = [&] {
    auto lines = cgroup_lines(*helper);
    for (const auto& l : lines)
      if (l.find("/slot-0") == std::string::npos) return false;
    return !lines.empty();
  };
  if (cgroups) CHECK(eventually(in_slot));
  auto lines = cgroup_lines(*helper);
  // Killed by its timeout with children of its own: the slot's cgroup is swept.
  auto r = box.run(raw_job(R"(
import os, time
print(open("/proc/self/cgroup").read(), flush=True)
for i in range(3):
    if os.fork() == 0:
        time.sleep(60)
time.sleep(60)
)",
                           1.0, true));
  INFO(r.stdout_head << r.stderr_tail << r.message);
  CHECK(r.reason == sb::Reason::timeout);
  CHECK_FALSE(r.warm);
  for (const auto& l : lines) CHECK_THAT(r.stdout_head, Catch::Contains(l));  // the job sat in them
  CHECK(box.launcher->cold_helper_pid(0) == helper);
  CHECK(kill(*helper, 0) == 0);
  auto next = box.run(raw_job("print('next')\n", 10, true));
  CHECK(next.reason == sb::Reason::ok);
  CHECK_THAT(next.stdout_head, Catch::Contains("next"));
  CHECK(box.launcher->cold_helper_pid(0) == helper);
}

TEST_CASE("a cold helper that dies is reaped at once and replaced - cold jobs still run", "[launcher][cold]") {
  Sandbox box([](sb::Config& c) { c.sandbox_max_jobs = 1; });
  auto helper = box.launcher->cold_helper_pid(0);
  REQUIRE(helper);
  REQUIRE(kill(*helper, SIGKILL) == 0);
  box.drive([&] { return !box.launcher->cold_helper_pid(0) && zombie_children().empty(); }, 5000);
  CHECK_FALSE(box.launcher->cold_helper_pid(0));
  CHECK(zombie_children().empty());  // reaped without waiting for a job
  auto r = box.run(raw_job("print('still cold')\n", 10, true));
  INFO(r.stderr_tail << r.message);
  CHECK(r.reason == sb::Reason::ok);
  CHECK_FALSE(r.warm);
  CHECK(r.attempts == 1);
  CHECK_THAT(r.stdout_head, Catch::Contains("still cold"));
  auto again = box.launcher->cold_helper_pid(0);
  REQUIRE(again);
  CHECK(*again != *helper);
  auto r2 = box.run(raw_job("print('from the new helper')\n", 10, true));
  CHECK(r2.reason == sb::Reason::ok);
  CHECK_THAT(r2.stdout_head, Catch::Contains("from the new helper"));
}
