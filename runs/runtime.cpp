#include "runs/runtime.hpp"

#include <nlohmann/json.hpp>

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
bool token(const std::string& s, bool version) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' ||
              (version && (c == '+' || c == '!' || (c >= 'A' && c <= 'Z'))) ||
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
  // A Python runtime names its interpreter, the JavaScript one (runtime/js) its Node; never both.
  if (!hex(r.id, 12) || !hex(r.lock_sha256, 64) || r.lock_sha256.compare(0, 12, r.id) != 0 ||
      r.python.empty() == r.node.empty() || !token(r.python.empty() ? r.node : r.python, true))
    return invalid(r);
  auto pk = j.find("packages");
  if (pk == j.end() || !pk->is_object() || pk->empty()) return invalid(r);
  for (auto& [name, version] : pk->items()) {
    if (!version.is_string() || !token(name, false) || !token(version.get<std::string>(), true)) return invalid(r);
    r.packages[name] = version.get<std::string>();
  }
  return r;
}

namespace {
Runtime read_manifest(const std::string& path, bool javascript) {
  sandbox::OutputRead rd = sandbox::read_file(path, kMaxRuntimeManifestBytes);
  Runtime r;
  if (rd.status == sandbox::OutputRead::ok) r = parse_runtime(rd.data);
  else r.error = rd.status == sandbox::OutputRead::missing ? "manifest_missing" : "manifest_rejected";
  if (r.known() && r.node.empty() == javascript) r = invalid(r);  // the other runtime's manifest
  r.manifest = path;
  return r;
}
}  // namespace

Runtime read_runtime(const std::string& python) { return read_manifest(runtime_manifest_path(python), false); }

std::string js_runtime_manifest_path(const std::string& js_modules) {
  std::string dir = js_modules;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  auto slash = dir.find_last_of('/');
  dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
  return (dir.empty() ? std::string("/") : dir) + "/plotq-js-runtime.json";
}

Runtime read_js_runtime(const std::string& js_modules) {
  return read_manifest(js_runtime_manifest_path(js_modules), true);
}

nlohmann::json runtime_json(const Runtime& r) {
  nlohmann::json j;
  if (!r.known()) {
    j = {{"id", nullptr}, {"error", r.error}, {"manifest", r.manifest}};
  } else {
    j = {{"id", r.id}, {"lock_sha256", r.lock_sha256}, {"packages", r.packages}, {"manifest", r.manifest}};
    if (r.node.empty()) j["python"] = r.python;
    else j["node"] = r.node;
  }
  return j;
}

}  // namespace plotq::runs
