#include "sandbox/job.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

namespace plotq::sandbox {

const char* to_string(Reason r) {
  switch (r) {
    case Reason::ok: return "ok";
    case Reason::nonzero_exit: return "nonzero_exit";
    case Reason::crashed: return "crashed";
    case Reason::timeout: return "timeout";
    case Reason::cancelled: return "cancelled";
    case Reason::cpu: return "cpu";
    case Reason::memory: return "memory";
    case Reason::disk: return "disk";
    case Reason::files: return "files";
    case Reason::output_too_large: return "output_too_large";
    case Reason::output_rejected: return "output_rejected";
    case Reason::exec_denied: return "exec_denied";
    case Reason::harness_error: return "harness_error";
    case Reason::launcher: return "launcher";
    case Reason::sandbox_lost: return "sandbox_lost";
    case Reason::low_memory: return "low_memory";
    case Reason::sandbox_unavailable: return "sandbox_unavailable";
    case Reason::io: return "io";
    case Reason::scratch_full: return "scratch_full";
    case Reason::invalid_job: return "invalid_job";
  }
  return "io";
}

bool succeeded(const JobResult& r) { return r.reason == Reason::ok; }

namespace {

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// Job output may hold any bytes; JSON strings must be UTF-8. Invalid bytes become U+FFFD.
std::string utf8_safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const JobResult& r) {
  nlohmann::json j;
  j["reason"] = to_string(r.reason);
  j["exit_code"] = r.exit_code ? nlohmann::json(*r.exit_code) : nlohmann::json(nullptr);
  j["signal"] = r.signal ? nlohmann::json(*r.signal) : nlohmann::json(nullptr);
  j["timed_out"] = r.timed_out;
  j["measured"] = r.measured ? nlohmann::json(*r.measured) : nlohmann::json(nullptr);
  j["limit"] = r.limit ? nlohmann::json(*r.limit) : nlohmann::json(nullptr);
  j["message"] = r.message;
  j["wall_s"] = round3(r.wall_s);
  j["cpu_s"] = round3(r.cpu_s);
  j["max_rss_mb"] = std::round(r.max_rss_mb * 10.0) / 10.0;
  j["filter"] = r.filter;
  j["warm"] = r.warm;
  j["spare"] = r.spare;
  j["attempts"] = r.attempts;
  j["stdout_head"] = utf8_safe(r.stdout_head);
  j["stdout_tail"] = utf8_safe(r.stdout_tail);
  j["stdout_bytes"] = r.stdout_bytes;
  j["stderr_tail"] = utf8_safe(r.stderr_tail);
  nlohmann::json outs = nlohmann::json::object();
  for (const auto& [name, bytes] : r.outputs) outs[name] = bytes.size();
  j["outputs"] = outs;
  j["timings"] = {{"queue_s", round3(r.timings.queue_s)},
                  {"spawn_s", round3(r.timings.spawn_s)},
                  {"run_s", round3(r.timings.run_s)},
                  {"collect_s", round3(r.timings.collect_s)}};
  return j;
}

nlohmann::json to_json(const JobSpec& s) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [name, bytes] : s.files) files[name] = bytes.size();
  nlohmann::json outputs = nlohmann::json::object();
  for (const auto& [name, cap] : s.outputs) outputs[name] = cap;
  return {{"mode", s.mode}, {"files", files}, {"argv", s.argv}, {"env", s.env}, {"timeout_s", s.timeout_s},
          {"outputs", outputs}, {"cold", s.cold ? nlohmann::json(*s.cold) : nlohmann::json(nullptr)}, {"label", s.label}};
}

}  // namespace plotq::sandbox
