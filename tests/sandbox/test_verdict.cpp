// judge_attempt on synthetic facts: the order in which the host's own stops, the work-dir check, the
// cgroup's OOM count, the entry marker, signals and exit codes name an attempt, read like the
// reason table of sandbox/README.md.
#include <signal.h>

#include <catch2/catch.hpp>

#include "sandbox/verdict.hpp"

using namespace plotq::sandbox;

namespace {

int exit_status(int code) { return (code & 0xff) << 8; }  // what wait(2) reports for exit(code)
int signal_status(int sig) { return sig & 0x7f; }

AttemptFacts started(int code) {
  AttemptFacts f;
  f.mode = "data";
  f.report = "armed tsync\n";
  f.exit = ExitRecord{exit_status(code), 0.5, 0.25, 80.0};
  f.stdout_head = "HARNESS {\"event\": \"start\"}\n";
  f.cpu_limit_s = 10;
  f.output_caps = {{"out.csv", 100}, {"result.json", 64}};
  return f;
}

OutputRead read_ok(const std::string& data) {
  OutputRead r;
  r.status = OutputRead::ok;
  r.data = data;
  return r;
}

}  // namespace

TEST_CASE("verdict: exit 0 with its outputs read is ok, with usage and the filter line") {
  auto r = judge_attempt(started(0), {{"out.csv", read_ok("a\n1\n")}});
  CHECK(r.reason == Reason::ok);
  CHECK(r.exit_code == 0);
  CHECK(r.outputs.at("out.csv") == "a\n1\n");
  CHECK(r.filter == "armed tsync");
  CHECK(r.cpu_s == Approx(0.75));
  CHECK(r.max_rss_mb == Approx(80.0));
}

TEST_CASE("verdict: an output over its cap is output_too_large with its size and cap, and nothing is kept") {
  OutputRead big;
  big.status = OutputRead::too_large;
  big.measured = 500;
  big.why = "over the cap";
  auto r = judge_attempt(started(0), {{"out.csv", big}, {"result.json", read_ok("{}")}});
  CHECK(r.reason == Reason::output_too_large);
  CHECK(r.measured == Approx(500));
  CHECK(r.limit == Approx(100));
  CHECK(r.outputs.empty());
  CHECK(r.message == "out.csv: over the cap");
}

TEST_CASE("verdict: a link planted as an output is output_rejected") {
  OutputRead link;
  link.status = OutputRead::rejected;
  link.why = "symlink";
  auto r = judge_attempt(started(0), {{"out.csv", link}});
  CHECK(r.reason == Reason::output_rejected);
  CHECK(r.outputs.empty());
}

TEST_CASE("verdict: the host's own stop names the attempt first; a timeout keeps what it read") {
  auto f = started(0);
  f.exit = ExitRecord{signal_status(SIGKILL), 0, 0, 0};
  f.stop = HostStop{Reason::timeout, 2.0, 2.0, "wall-clock timeout"};
  auto r = judge_attempt(f, {{"out.csv", read_ok("partial")}});
  CHECK(r.reason == Reason::timeout);
  CHECK(r.timed_out);
  CHECK_FALSE(r.exit_code);
  CHECK(r.outputs.at("out.csv") == "partial");

  f.stop = HostStop{Reason::cancelled, std::nullopt, std::nullopt, "cancelled"};
  auto c = judge_attempt(f, {{"out.csv", read_ok("partial")}});
  CHECK(c.reason == Reason::cancelled);
  CHECK(c.outputs.empty());
}

TEST_CASE("verdict: the work dir checked after exit: over bytes is disk, over entries or unmeasurable is files") {
  auto f = started(0);
  f.tree_checked = true;
  f.limits = TreeLimits{1000, 10, 32};
  f.tree.bytes = 1001;
  CHECK(judge_attempt(f, {}).reason == Reason::disk);
  f.tree.bytes = 10;
  f.tree.entries = 11;
  auto files = judge_attempt(f, {});
  CHECK(files.reason == Reason::files);
  CHECK(files.measured == Approx(11));
  f.tree.entries = 1;
  f.tree.measurable = false;
  auto deep = judge_attempt(f, {});
  CHECK(deep.reason == Reason::files);
  CHECK_FALSE(deep.measured);
}

TEST_CASE("verdict: an OOM kill in the slot's cgroup is memory with the peak in MiB") {
  auto f = started(0);
  f.exit = ExitRecord{signal_status(SIGKILL), 0.1, 0, 0};
  f.oom = true;
  f.memory_peak_bytes = 64ull << 20;
  f.cgroup_memory_mb = 64;
  auto r = judge_attempt(f, {});
  CHECK(r.reason == Reason::memory);
  CHECK(r.measured == Approx(64));
  CHECK(r.limit == Approx(64));
}

TEST_CASE("verdict: no start marker is a launcher failure - no exit record after the marker is a lost job (sandbox_lost)") {
  auto f = started(0);
  f.report = "";
  f.spawn_error = "fork: Resource temporarily unavailable";
  auto never = judge_attempt(f, {});
  CHECK(never.reason == Reason::launcher);
  CHECK(never.filter.empty());
  CHECK(never.message == "sandbox start failed: fork: Resource temporarily unavailable");

  auto lost = started(0);
  lost.exit.reset();
  auto r = judge_attempt(lost, {});
  CHECK(r.reason == Reason::sandbox_lost);
  CHECK(r.message == "lost the job's process (no exit status)");
}

TEST_CASE("verdict: a refused filter with exit 3 is exec_denied; exit 3 after arming is the job's own") {
  auto f = started(3);
  f.report = "refused unavailable\n";
  CHECK(judge_attempt(f, {}).reason == Reason::exec_denied);
  CHECK(judge_attempt(started(3), {}).reason == Reason::nonzero_exit);
}

TEST_CASE("verdict: a signal at the CPU limit is cpu; any other signal is crashed") {
  auto f = started(0);
  f.exit = ExitRecord{signal_status(SIGKILL), 9.5, 0.4, 0};
  auto cpu = judge_attempt(f, {});
  CHECK(cpu.reason == Reason::cpu);
  CHECK(cpu.limit == Approx(10));
  f.exit = ExitRecord{signal_status(SIGSEGV), 0.2, 0, 0};
  auto crash = judge_attempt(f, {});
  CHECK(crash.reason == Reason::crashed);
  CHECK(crash.signal == SIGSEGV);
}

TEST_CASE("verdict: a non-zero exit keeps its records; without the harness start line it is harness_error") {
  auto r = judge_attempt(started(11), {{"result.json", read_ok("{\"reason\":\"x\"}")}});
  CHECK(r.reason == Reason::nonzero_exit);
  CHECK(r.exit_code == 11);
  CHECK(r.outputs.count("result.json") == 1);

  auto f = started(11);
  f.stdout_head = "something else\nHARNESS {\"event\": \"start\"} trailing\n";
  CHECK(judge_attempt(f, {}).reason == Reason::harness_error);
  f.mode = "raw";
  CHECK(judge_attempt(f, {}).reason == Reason::nonzero_exit);
}
