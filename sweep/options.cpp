#include "sweep/options.hpp"
#include "common/theme.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runs/render_interpret.hpp"
#include "sweep/files.hpp"

namespace plotq::runs {
namespace {

std::string default_label(std::time_t now) {
  char buf[32];
  std::strftime(buf, sizeof buf, "sweep-%Y%m%d-%H%M%S", std::gmtime(&now));
  return buf;
}

std::string themes_error(const std::vector<std::string>& themes) {
  const std::string_view problem = themes_problem(themes);
  if (problem == "count") return "--themes is one or two of light,dark";
  if (problem == "unknown")
    for (const auto& t : themes)
      if (!known_theme(t)) return "unknown theme '" + t + "'";
  if (problem == "repeated") return "--themes must be distinct";
  return "";
}

}  // namespace

NewSweepSettings new_sweep_settings(const SweepRunArgs& args, std::time_t now) {
  NewSweepSettings out;
  auto refuse = [&](std::string why) {
    out = NewSweepSettings{};
    out.error = std::move(why);
    return out;
  };
  store::Sweep& s = out.sweep;
  s.mode = args.mode.empty() ? "sandbox" : args.mode;
  if (s.mode != "sandbox" && s.mode != "bare") return refuse("--mode is sandbox or bare");
  if (!args.server.empty() && s.mode != "sandbox") return refuse("--server goes with --mode sandbox");
  if (!args.server.empty() && args.server.rfind("http://", 0) != 0) return refuse("--server must be an http:// URL");
  std::vector<std::string> themes = split_list(args.themes.empty() ? "light,dark" : args.themes);
  if (std::string why = themes_error(themes); !why.empty()) return refuse(why);
  s.timeout_s = 60;
  if (!args.timeout.empty()) {
    char* end = nullptr;
    s.timeout_s = std::strtod(args.timeout.c_str(), &end);
    if (*end != '\0' || !(s.timeout_s > 0) || s.timeout_s > kMaxRenderTimeoutS)
      return refuse("--timeout must be a number of seconds in (0, 120]");
  }
  s.label = args.label.empty() ? default_label(now) : args.label;
  if (!store::sweeps::valid_label(s.label)) return refuse("--label must be 1..64 of [A-Za-z0-9._-]");
  if (!args.server.empty()) s.server_url = args.server;
  s.glob = args.glob.empty() ? kDefaultSweepGlob : args.glob;
  if (!args.library.empty()) s.libraries = join(split_list(args.library));
  s.themes = join(themes);
  s.jobs = args.jobs.value_or(1);
  return out;
}

std::optional<ResumeDifference> resume_difference(const store::Sweep& stored, const SweepRunArgs& given,
                                                  const std::string& root_given) {
  const std::pair<const char*, std::pair<std::string, std::string>> plain[] = {
      {"DIR", {root_given, stored.root}},
      {"--glob", {given.glob, stored.glob}},
      {"--library", {given.library, stored.libraries.value_or("")}},
      {"--themes", {given.themes, stored.themes}},
      {"--mode", {given.mode, stored.mode}},
      {"--server", {given.server, stored.server_url.value_or("")}},
      {"--label", {given.label, stored.label}},
  };
  for (const auto& [option, values] : plain)
    if (!values.first.empty() && values.first != values.second)
      return ResumeDifference{option, values.first, values.second};
  if (!given.timeout.empty() && std::abs(std::stod(given.timeout) - stored.timeout_s) > 1e-9) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3f", stored.timeout_s);
    return ResumeDifference{"--timeout", given.timeout, buf};
  }
  return std::nullopt;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace plotq::runs
