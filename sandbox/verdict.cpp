#include "sandbox/verdict.hpp"

#include <signal.h>
#include <sys/wait.h>

namespace plotq::sandbox {

bool has_harness_start(const std::string& head) {
  static const std::string kLine = "HARNESS {\"event\": \"start\"}";
  size_t pos = 0;
  while (pos <= head.size()) {
    size_t nl = head.find('\n', pos);
    std::string line = head.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == kLine) return true;
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return false;
}

namespace {

void keep_read_outputs(JobResult& r, std::map<std::string, OutputRead>& reads) {
  for (auto& [name, rd] : reads)
    if (rd.status == OutputRead::ok) r.outputs[name] = std::move(rd.data);
}

}  // namespace

JobResult judge_attempt(const AttemptFacts& f, std::map<std::string, OutputRead> reads) {
  JobResult r;
  std::string first_line = f.report.substr(0, f.report.find('\n'));
  bool entry_started = first_line.rfind("armed ", 0) == 0 || first_line.rfind("refused ", 0) == 0;
  r.filter = entry_started ? first_line : "";
  if (f.exit) {
    r.cpu_s = f.exit->utime_s + f.exit->stime_s;
    r.max_rss_mb = f.exit->maxrss_mb;
    if (WIFEXITED(f.exit->status)) r.exit_code = WEXITSTATUS(f.exit->status);
    if (WIFSIGNALED(f.exit->status)) r.signal = WTERMSIG(f.exit->status);
  }
  if (f.oom) {
    if (f.memory_peak_bytes) r.measured = static_cast<double>(f.memory_peak_bytes) / 1048576.0;
    r.limit = static_cast<double>(f.cgroup_memory_mb);
  }

  auto stopped = [&](Reason reason, std::optional<double> measured, std::optional<double> limit, const std::string& msg) {
    r.reason = reason;
    r.measured = measured;
    r.limit = limit;
    r.message = msg;
    r.exit_code.reset();
    r.timed_out = reason == Reason::timeout;
  };
  if (f.stuck) r.message = "did not die within kill_grace_s of SIGKILL";
  if (f.stop) {
    stopped(f.stop->reason, f.stop->measured, f.stop->limit, f.stop->message);
    if (f.stop->reason == Reason::timeout) keep_read_outputs(r, reads);  // a timed-out run's outputs are still read
    return r;
  }
  if (f.tree_checked && !f.tree.measurable) {
    stopped(Reason::files, std::nullopt, static_cast<double>(f.limits.max_entries), "work dir unmeasurable after exit");
    return r;
  }
  if (f.tree_checked && f.tree.over_bytes(f.limits)) {
    stopped(Reason::disk, static_cast<double>(f.tree.bytes), static_cast<double>(f.limits.max_bytes),
            "work dir over its byte budget after exit");
    return r;
  }
  if (f.tree_checked && f.tree.over_entries(f.limits)) {
    stopped(Reason::files, static_cast<double>(f.tree.entries), static_cast<double>(f.limits.max_entries),
            "work dir over its entry budget after exit");
    return r;
  }
  if (f.oom) {
    r.reason = Reason::memory;
    r.exit_code.reset();
    r.message = "the job's cgroup ran out of memory (OOM kill)";
    return r;
  }
  if (!entry_started) {
    r.reason = Reason::launcher;
    std::string detail = !f.spawn_error.empty() ? f.spawn_error : first_line;
    r.message = detail.empty() ? "the sandbox never reached the job's entry" : "sandbox start failed: " + detail;
    r.exit_code.reset();
    return r;
  }
  if (!f.exit) {  // the zygote (or C) died under it
    r.reason = Reason::sandbox_lost;
    r.message = "lost the job's process (" + (f.spawn_error.empty() ? std::string("no exit status") : f.spawn_error) + ")";
    return r;
  }
  if (first_line.rfind("refused ", 0) == 0 && r.exit_code == 3) {
    r.reason = Reason::exec_denied;
    r.message = "the exec filter could not be armed: " + first_line.substr(8);
    return r;
  }
  // A failure while the scratch file system is (nearly) full: a write the job needed was refused,
  // which says nothing about its code (scipy even crashes when its temp file cannot be made).
  bool failed = (r.signal && *r.signal != SIGKILL && *r.signal != SIGXCPU) || (r.exit_code && *r.exit_code != 0);
  if (failed && f.scratch_free_bytes && *f.scratch_free_bytes < kScratchFullBytes) {
    r.reason = Reason::scratch_full;
    r.measured = static_cast<double>(*f.scratch_free_bytes);
    r.limit = static_cast<double>(kScratchFullBytes);
    r.message = "the scratch file system was full when the job failed";
    return r;
  }
  if (r.signal) {
    // RLIMIT_CPU's SIGXCPU is soft = hard here, so the kernel's SIGKILL follows at once.
    bool cpu_kill = (*r.signal == SIGKILL || *r.signal == SIGXCPU) &&
                    r.cpu_s + 0.25 >= static_cast<double>(f.cpu_limit_s);
    if (cpu_kill) {
      r.reason = Reason::cpu;
      r.measured = r.cpu_s;
      r.limit = static_cast<double>(f.cpu_limit_s);
      r.message = "CPU time limit reached";
    } else {
      r.reason = Reason::crashed;
      r.message = std::string("killed by signal ") + std::to_string(*r.signal);
    }
    return r;
  }
  if (r.exit_code != 0) {
    if (f.mode != "raw" && !has_harness_start(f.stdout_head)) {
      r.reason = Reason::harness_error;
      r.message = "the harness did not start";
    } else {
      r.reason = Reason::nonzero_exit;
      // The records of a failed job (result.json, validation.json) are read like any output;
      // one that cannot be read is simply absent.
      keep_read_outputs(r, reads);
    }
    return r;
  }
  r.reason = Reason::ok;
  for (auto& [name, rd] : reads) {
    if (rd.status == OutputRead::ok) {
      r.outputs[name] = std::move(rd.data);
    } else if (rd.status == OutputRead::too_large && r.reason == Reason::ok) {
      r.reason = Reason::output_too_large;
      r.measured = static_cast<double>(rd.measured);
      auto cap = f.output_caps.find(name);
      r.limit = cap == f.output_caps.end() ? 0.0 : static_cast<double>(cap->second);
      r.message = name + ": " + rd.why;
    } else if ((rd.status == OutputRead::rejected || rd.status == OutputRead::error) && r.reason == Reason::ok) {
      r.reason = Reason::output_rejected;
      r.message = name + ": " + rd.why;
    }
  }
  if (r.reason != Reason::ok) r.outputs.clear();
  return r;
}

}  // namespace plotq::sandbox
