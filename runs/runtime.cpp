#include "runs/runtime.hpp"

#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "common/settings.hpp"
#include "runs/render_job.hpp"
#include "sandbox/config.hpp"
#include "common/text.hpp"
#include "sandbox/output.hpp"

namespace plotq::runs {
namespace {

bool hex(const std::string& s, std::size_t len) {
  if (s.size() != len) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Package names as the manifest writes them (canonical: lower case, '-' for runs of [-_.]), and
// versions as PEP 440 spells them; both short, no spaces.
bool token(const std::string& s, bool version, bool upper_names = false) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
              ((version || upper_names) && (c >= 'A' && c <= 'Z')) ||  // R's names (MASS) keep their case
              (version && (c == '+' || c == '!')) ||
              (!version && (c == '@' || c == '/'));  // npm's scoped names (@mui/x-charts)
    if (!ok) return false;
  }
  return true;
}

Runtime invalid(Runtime r) {
  Runtime out;
  out.manifest = std::move(r.manifest);
  out.error = "manifest_invalid";
  return out;
}

}  // namespace

std::string runtime_manifest_path(const std::string& python) {
  std::string dir = python;
  for (int i = 0; i < 2; ++i) {
    auto slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? std::string() : dir.substr(0, slash);
  }
  return (dir.empty() ? std::string(".") : dir) + "/plotq-runtime.json";
}

Runtime parse_runtime(const std::string& text) {
  Runtime r;
  // The manifest is flat but for its packages object; a deeper text is not one (and nlohmann
  // would recurse through it).
  if (json_depth(text) > 2) return invalid(r);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return invalid(r);
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  r.id = str("id");
  r.lock_sha256 = str("lock_sha256");
  r.python = str("python");
  r.node = str("node");
  r.r = str("r");
  // A Python runtime names its interpreter, the JavaScript one (runtime/js) its Node, the R one
  // (runtime/r) its R; exactly one of them.
  int named = !r.python.empty() + !r.node.empty() + !r.r.empty();
  const std::string& version = !r.python.empty() ? r.python : !r.node.empty() ? r.node : r.r;
  if (!hex(r.id, 12) || !hex(r.lock_sha256, 64) || r.lock_sha256.compare(0, 12, r.id) != 0 || named != 1 ||
      !token(version, true))
    return invalid(r);
  auto pk = j.find("packages");
  if (pk == j.end() || !pk->is_object() || pk->empty()) return invalid(r);
  for (auto& [name, version] : pk->items()) {
    if (!version.is_string() || !token(name, false, !r.r.empty()) || !token(version.get<std::string>(), true))
      return invalid(r);
    r.packages[name] = version.get<std::string>();
  }
  return r;
}

namespace {
enum class Kind { python, javascript, r };
Runtime read_manifest(const std::string& path, Kind kind) {
  sandbox::OutputRead rd = sandbox::read_file(path, kMaxRuntimeManifestBytes);
  Runtime r;
  if (rd.status == sandbox::OutputRead::ok) r = parse_runtime(rd.data);
  else r.error = rd.status == sandbox::OutputRead::missing ? "manifest_missing" : "manifest_rejected";
  bool right = kind == Kind::python ? !r.python.empty() : kind == Kind::javascript ? !r.node.empty() : !r.r.empty();
  if (r.known() && !right) r = invalid(r);  // another runtime's manifest
  r.manifest = path;
  return r;
}
}  // namespace

Runtime read_runtime(const std::string& python) { return read_manifest(runtime_manifest_path(python), Kind::python); }

std::string js_runtime_manifest_path(const std::string& js_modules) {
  std::string dir = js_modules;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  auto slash = dir.find_last_of('/');
  dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
  return (dir.empty() ? std::string("/") : dir) + "/plotq-js-runtime.json";
}

Runtime read_js_runtime(const std::string& js_modules) {
  return read_manifest(js_runtime_manifest_path(js_modules), Kind::javascript);
}

std::string r_runtime_manifest_path() {
  std::string p = render_config_from_env().r_runtime_manifest;
  return p.empty() ? project_home() + "/runtime/r/plotq-r-runtime.json" : p;
}

namespace {
// The Version field of an installed R package's DESCRIPTION ("" when absent or unreadable).
std::string installed_version(const std::string& r_home, const std::string& package) {
  // R's own search order on Debian (.libPaths()): the local site library, the site library, R's.
  for (const std::string& lib : {std::string("/usr/local/lib/R/site-library/"), r_home + "/site-library/", r_home + "/library/"}) {
    sandbox::OutputRead rd = sandbox::read_file(lib + package + "/DESCRIPTION", 256 * 1024);
    if (rd.status != sandbox::OutputRead::ok) continue;
    std::size_t at = rd.data.rfind("\nVersion:", std::string::npos);
    if (rd.data.compare(0, 8, "Version:") == 0) at = 0;
    else if (at != std::string::npos) ++at;
    if (at == std::string::npos) return "";
    std::size_t end = rd.data.find('\n', at);
    std::string v = rd.data.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(0, 1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r' || v.back() == '\t')) v.pop_back();
    return v;
  }
  return "";
}
}  // namespace

Runtime read_r_runtime(const std::string& manifest, const std::string& r_home) {
  Runtime r = read_manifest(manifest, Kind::r);
  if (!r.known()) return r;
  // "R" is R itself (base's DESCRIPTION carries R's version); every other name an R package.
  for (const auto& [name, version] : r.packages) {
    std::string installed = installed_version(r_home, name == "R" ? "base" : name);
    if (installed != version) {
      Runtime stale;
      stale.manifest = r.manifest;
      stale.error = "manifest_stale";
      return stale;
    }
  }
  return r;
}

const Runtime& r_runtime() {
  static const Runtime r = [] {
    // R_HOME is the sandbox's setting (the R jobs run under it), read through its registry.
    std::string home = load_from_env<sandbox::Config>(sandbox::register_settings).r_home;
    return read_r_runtime(r_runtime_manifest_path(), home.empty() ? std::string("/usr/lib/R") : home);
  }();
  return r;
}

nlohmann::json runtime_json(const Runtime& r) {
  nlohmann::json j;
  if (!r.known()) {
    j = {{"id", nullptr}, {"error", r.error}, {"manifest", r.manifest}};
  } else {
    j = {{"id", r.id}, {"lock_sha256", r.lock_sha256}, {"packages", r.packages}, {"manifest", r.manifest}};
    if (!r.python.empty()) j["python"] = r.python;
    else if (!r.node.empty()) j["node"] = r.node;
    else j["r"] = r.r;
  }
  return j;
}

}  // namespace plotq::runs
