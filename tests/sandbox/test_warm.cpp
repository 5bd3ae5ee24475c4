// Warm starts: a job forked from the zygote cannot signal, trace or read the zygote or another
// job, inherits none of its descriptors, leaves nothing behind for the next child; a zygote that
// dies is restarted. (Attacks on another job run cold too.)
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include "fixture.hpp"

using namespace sbt;

namespace {

std::string subst(std::string prog, const std::string& key, const std::string& val) {
  for (size_t p = prog.find(key); p != std::string::npos; p = prog.find(key, p + val.size())) prog.replace(p, key.size(), val);
  return prog;
}

}  // namespace

TEST_CASE("a warm job cannot signal, trace or read the zygote - the zygote serves the next job", "[warm][hostile]") {
  Sandbox box;
  box.wait_zygote("raw");
  pid_t zpid = *box.launcher->zygote_pid("raw");
  std::string prog = R"(
import os, signal, errno
)" + hostile("escape") + R"(
Z = ZPID
try:
    os.kill(Z, signal.SIGKILL)
    print("kill sent", flush=True)
except OSError as e:
    print("kill", errno.errorcode[e.errno], flush=True)
print("ptrace attach", escape.ptrace_attach(Z), flush=True)
print("ptrace seize", escape.ptrace_seize(Z), flush=True)
print("vm_readv", escape.vm_read(Z), flush=True)
print("vm_writev", escape.vm_write(Z), flush=True)
for path in ("/proc/%d/mem" % Z, "/proc/%d/environ" % Z, "/proc/1/mem"):
    try:
        open(path, "rb").read(16)
        print("read", path, "OK", flush=True)
    except OSError as e:
        print("read", path, errno.errorcode[e.errno], flush=True)
print("fds", sorted(int(f) for f in os.listdir("/proc/self/fd")), flush=True)
)";
  auto r = box.run(raw_job(subst(prog, "ZPID", std::to_string(zpid)), 10, false));
  REQUIRE(r.warm);
  CHECK(r.reason == sb::Reason::ok);
  INFO(r.stdout_head << r.stderr_tail);
  CHECK_THAT(r.stdout_head, Catch::Contains("kill ESRCH"));  // not even visible in its pid namespace
  CHECK_THAT(r.stdout_head, Catch::Contains("ptrace attach 1\n"));
  CHECK_THAT(r.stdout_head, Catch::Contains("ptrace seize 1\n"));
  CHECK_THAT(r.stdout_head, Catch::Contains("vm_readv 1\n"));
  CHECK_THAT(r.stdout_head, Catch::Contains("vm_writev 1\n"));
  CHECK_THAT(r.stdout_head, Catch::Contains("/mem ENOENT"));
  CHECK_THAT(r.stdout_head, Catch::Contains("/environ ENOENT"));
  CHECK_THAT(r.stdout_head, Catch::Contains("read /proc/1/mem EACCES"));  // its own, non-dumpable
  // No descriptor of the zygote (control socket, other jobs') reached the job: stdin/out/err only
  // (the listing itself holds one more).
  CHECK_THAT(r.stdout_head, Catch::Contains("fds [0, 1, 2, 3]"));
  CHECK(kill(zpid, 0) == 0);
  CHECK(box.launcher->zygote_pid("raw") == zpid);
  auto next = box.run(raw_job("print('next job')\n", 10, false));
  CHECK(next.reason == sb::Reason::ok);
  CHECK(next.warm);
  CHECK(box.launcher->zygote_pid("raw") == zpid);
}

TEST_CASE("cold job: ptrace and process_vm_readv of the host are refused", "[hostile]") {
  Sandbox box;
  std::string prog = hostile("escape") + R"(
print("ptrace attach", escape.ptrace_attach(HOST), flush=True)
print("vm_readv", escape.vm_read(HOST), flush=True)
)";
  auto r = box.run(raw_job(subst(prog, "HOST", std::to_string(getpid())), 10, true));
  CHECK(r.reason == sb::Reason::ok);
  CHECK_THAT(r.stdout_head, Catch::Contains("ptrace attach 1\n"));
  CHECK_THAT(r.stdout_head, Catch::Contains("vm_readv 1\n"));
}

TEST_CASE("a job cannot signal another job running next to it", "[warm][hostile]") {
  Sandbox box([](sb::Config& c) { c.sandbox_max_jobs = 2; });
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    std::optional<sb::JobResult> a, b;
    auto ha = box.launcher->run(raw_job("import time\nprint('A started', flush=True)\ntime.sleep(1.5)\nprint('A survived')\n", 20, cold),
                                [&](sb::JobResult r) { a = r; });
    box.drive([&] { return ha.host_pid().has_value(); }, 20000);
    REQUIRE(ha.host_pid().has_value());
    std::string prog = R"(
import os, signal, errno
for target in (A, -A):
    try:
        os.kill(target, signal.SIGKILL)
        print("kill", target, "sent", flush=True)
    except OSError as e:
        print("kill", target, errno.errorcode[e.errno], flush=True)
try:
    os.kill(-1, signal.SIGKILL)           # everything it may signal: nothing but itself here
except OSError as e:
    print("kill -1", errno.errorcode[e.errno], flush=True)
print("B done", flush=True)
)";
    box.launcher->run(raw_job(subst(prog, "A", std::to_string(*ha.host_pid())), 20, cold), [&](sb::JobResult r) { b = r; });
    box.drive([&] { return a && b; }, 30000);
    REQUIRE(a);
    REQUIRE(b);
    INFO(b->stdout_head << b->stderr_tail);
    CHECK_THAT(b->stdout_head, Catch::Contains("ESRCH"));
    CHECK_THAT(b->stdout_head, !Catch::Contains("sent"));
    CHECK_THAT(b->stdout_head, Catch::Contains("B done"));
    CHECK(a->reason == sb::Reason::ok);
    CHECK_THAT(a->stdout_head, Catch::Contains("A survived"));
    box.check_no_job_process();
  }
}

TEST_CASE("nothing a job leaves behind is visible to the next one (same slot, warm and cold)", "[warm][hostile]") {
  Sandbox box([](sb::Config& c) { c.sandbox_max_jobs = 1; });
  const std::string leave = R"(
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
shm = libc.shmget(0x51AB, 4096, 0o1666)   # IPC_CREAT | 0666, never removed
msq = libc.msgget(0x51AC, 0o1666)
print("created", shm >= 0, msq >= 0, flush=True)
open("left-behind.txt", "w").write("secret of job A")
for d in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        open(d + "/left-behind.txt", "w").write("x")
        print("wrote", d, flush=True)
    except OSError:
        pass
if os.fork() == 0:
    import time
    time.sleep(3600)                      # a straggler that would outlive the job
)";
  const std::string look = R"(
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("shm", libc.shmget(0x51AB, 0, 0), ctypes.get_errno(), flush=True)
print("msq", libc.msgget(0x51AC, 0), ctypes.get_errno(), flush=True)
print("cwd", sorted(os.listdir(".")), flush=True)
print("tmp", sorted(os.listdir("/tmp")), flush=True)
print("procs", sorted(p for p in os.listdir("/proc") if p.isdigit()), flush=True)
)";
  for (bool cold : {true, false}) {
    INFO(path_name(cold));
    auto a = box.run(raw_job(leave, 10, cold));
    REQUIRE(a.reason == sb::Reason::ok);
    CHECK_THAT(a.stdout_head, Catch::Contains("created True True"));  // the attempt really ran
    CHECK_THAT(a.stdout_head, !Catch::Contains("wrote"));
    auto b = box.run(raw_job(look, 10, cold));
    REQUIRE(b.reason == sb::Reason::ok);
    INFO(b.stdout_head);
    CHECK_THAT(b.stdout_head, Catch::Contains("shm -1 2\n"));  // ENOENT: A's segment died with its namespace
    CHECK_THAT(b.stdout_head, Catch::Contains("msq -1 2\n"));
    CHECK_THAT(b.stdout_head, Catch::Contains("cwd ['job.py']"));
    CHECK_THAT(b.stdout_head, Catch::Contains("tmp ['job']"));
    CHECK_THAT(b.stdout_head, Catch::Contains("procs ['1']"));
  }
}

TEST_CASE("a zygote that dies is restarted - the next job still runs warm", "[warm]") {
  Sandbox box;
  box.wait_zygote("raw");
  pid_t first = *box.launcher->zygote_pid("raw");
  REQUIRE(kill(first, SIGKILL) == 0);
  box.drive([&] { return !box.launcher->zygote_ready("raw"); }, 5000);
  auto r = box.run(raw_job("print('after restart')\n", 20, false));
  CHECK(r.reason == sb::Reason::ok);
  CHECK(r.warm);
  CHECK_THAT(r.stdout_head, Catch::Contains("after restart"));
  REQUIRE(box.launcher->zygote_pid("raw").has_value());
  CHECK(*box.launcher->zygote_pid("raw") != first);
}

TEST_CASE("a job whose zygote dies under it is retried and completes", "[warm]") {
  Sandbox box;
  box.wait_zygote("raw");
  pid_t z = *box.launcher->zygote_pid("raw");
  std::optional<sb::JobResult> res;
  auto h = box.launcher->run(raw_job("import time, os\nprint('start', flush=True)\ntime.sleep(1)\nprint('done')\n", 20, false),
                             [&](sb::JobResult r) { res = r; });
  box.drive([&] { return h.host_pid().has_value(); }, 10000);
  REQUIRE(h.host_pid().has_value());
  kill(z, SIGKILL);  // the job dies with it (pid namespace), before its entry or during its run
  box.drive([&] { return res.has_value(); }, 30000);
  REQUIRE(res);
  // Killed before its entry reported: retried (cold) and ok. Killed after: the
  // sandbox lost it (reason sandbox_lost), not retried: the job itself may have had side effects.
  INFO(sb::to_string(res->reason) << " " << res->message);
  if (res->filter.empty() || res->attempts == 2) {
    CHECK(res->reason == sb::Reason::ok);
  } else {
    CHECK(res->reason == sb::Reason::sandbox_lost);
    CHECK(res->attempts == 1);
  }
  box.check_no_job_process();
  CHECK(box.run(raw_job("print('ok again')\n", 20, false)).reason == sb::Reason::ok);
}

TEST_CASE("warm jobs do not repeat the zygote's random state", "[warm]") {
  Sandbox box([](sb::Config& c) { c.raw_preload = {"numpy"}; });
  box.wait_zygote("raw");
  const std::string prog = "import numpy, random\nprint(numpy.random.rand(), random.random())\n";
  auto a = box.run(raw_job(prog, 20, false));
  auto b = box.run(raw_job(prog, 20, false));
  REQUIRE(a.reason == sb::Reason::ok);
  REQUIRE(b.reason == sb::Reason::ok);
  CHECK(a.warm);
  CHECK(a.stdout_head != b.stdout_head);
}

TEST_CASE("warm jobs get net ipc and uts namespaces of their own - not the zygote's nor another job's", "[warm]") {
  // A spare makes these while it waits for its job (zygote.py SPARE_NAMESPACES): each spare
  // makes fresh ones, so two jobs never share them, and the zygote's stay its own.
  Sandbox box;
  box.wait_zygote("raw");
  pid_t z = *box.launcher->zygote_pid("raw");
  auto ns_of = [](const std::string& proc, const char* kind) {
    char buf[128] = {0};
    ssize_t n = ::readlink((proc + "/ns/" + kind).c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
  };
  // Both jobs alive at once (two slots): a namespace's inode number is reused once it is freed,
  // so only namespaces that exist at the same time can be told apart by it.
  const std::string prog = R"(
import os, time
for kind in ("net", "ipc", "uts"):
    print(kind, os.readlink("/proc/self/ns/" + kind), flush=True)
print("ifaces", sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]), flush=True)
time.sleep(SLEEP)
)";
  std::optional<sb::JobResult> first, second;
  box.launcher->run(raw_job(subst(prog, "SLEEP", "3"), 20, false), [&](sb::JobResult r) { first = r; });
  box.launcher->run(raw_job(subst(prog, "SLEEP", "0"), 20, false), [&](sb::JobResult r) { second = r; });
  box.drive([&] { return second.has_value(); }, 30000);
  REQUIRE(second);
  CHECK_FALSE(first.has_value());  // the second ran while the first was still running
  box.drive([&] { return first.has_value(); }, 30000);
  REQUIRE(first);
  box.check_no_job_process();
  const sb::JobResult& a = *first;
  const sb::JobResult& b = *second;
  REQUIRE(a.reason == sb::Reason::ok);
  REQUIRE(b.reason == sb::Reason::ok);
  REQUIRE(a.warm);
  REQUIRE(b.warm);
  INFO(a.stdout_head << "\n" << b.stdout_head);
  CHECK_THAT(a.stdout_head, Catch::Contains("ifaces ['lo']"));  // an empty network namespace
  for (const char* kind : {"net", "ipc", "uts"}) {
    std::string zygote = ns_of("/proc/" + std::to_string(z), kind);
    REQUIRE(zygote != "?");
    std::string line = std::string(kind) + " " + kind + ":[";
    REQUIRE_THAT(a.stdout_head, Catch::Contains(line));
    auto value = [&](const std::string& out) {
      auto p = out.find(line);
      return out.substr(p + std::strlen(kind) + 1, out.find('\n', p) - p - std::strlen(kind) - 1);
    };
    CHECK(value(a.stdout_head) != zygote);
    CHECK(value(b.stdout_head) != zygote);
    CHECK(value(a.stdout_head) != value(b.stdout_head));
    CHECK(ns_of("/proc/self", kind) != value(a.stdout_head));  // nor the host's
  }
}
