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
              (version && (c == '+' || c == '!' || (c >= 'A' && c <= 'Z')));
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
  if (!hex(r.id, 12) || !hex(r.lock_sha256, 64) || r.lock_sha256.compare(0, 12, r.id) != 0 ||
      !token(r.python, true))
    return invalid(r);
  auto pk = j.find("packages");
  if (pk == j.end() || !pk->is_object() || pk->empty()) return invalid(r);
  for (auto& [name, version] : pk->items()) {
    if (!version.is_string() || !token(name, false) || !token(version.get<std::string>(), true)) return invalid(r);
    r.packages[name] = version.get<std::string>();
  }
  return r;
}

Runtime read_runtime(const std::string& python) {
  const std::string path = runtime_manifest_path(python);
  sandbox::OutputRead rd = sandbox::read_file(path, kMaxRuntimeManifestBytes);
  Runtime r;
  if (rd.status == sandbox::OutputRead::ok) r = parse_runtime(rd.data);
  else r.error = rd.status == sandbox::OutputRead::missing ? "manifest_missing" : "manifest_rejected";
  r.manifest = path;
  return r;
}

nlohmann::json runtime_json(const Runtime& r) {
  nlohmann::json j;
  if (!r.known()) {
    j = {{"id", nullptr}, {"error", r.error}, {"manifest", r.manifest}};
  } else {
    j = {{"id", r.id}, {"lock_sha256", r.lock_sha256}, {"python", r.python}, {"packages", r.packages},
         {"manifest", r.manifest}};
  }
  return j;
}

}  // namespace plotq::runs
