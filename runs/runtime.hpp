// The runtime's identity: runtime/venv/plotq-runtime.json, written by runtime/manifest.py when the
// venv is built from its lock (runtime/README.md). Read next to the configured interpreter
// (<dirname(dirname(python))>/plotq-runtime.json), once per process, and recorded with every ledger
// row and every sweep, so that two runs can tell "the runtime changed" from "the code changed".
#pragma once
#include "common/limits.hpp"
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace plotq::runs {

// The manifest is a few KiB; anything larger is not one.
using ::plotq::limits::kMaxRuntimeManifestBytes;  // common/limits.hpp

struct Runtime {
  std::string id;           // first 12 hex of the lock's sha256; "" when unknown
  std::string lock_sha256;  // 64 hex
  std::string python;       // the interpreter's version, e.g. 3.11.2 (the Python runtime)
  std::string node;         // Node's version (the JavaScript runtime, runtime/js)
  std::string r;            // R's version (the R runtime, runtime/r); exactly one of the three is set
  std::map<std::string, std::string> packages;  // canonical package name -> version
  std::string manifest;     // the path it was read from
  // "" when read; else manifest_missing | manifest_rejected (a link, not a regular file, too
  // large, unreadable) | manifest_invalid (not the manifest's shape)
  std::string error;
  bool known() const { return error.empty(); }
};

// <dirname(dirname(python))>/plotq-runtime.json: the venv's root for <venv>/bin/python.
std::string runtime_manifest_path(const std::string& python);

// The manifest's text -> a Runtime (error manifest_invalid when it is not the manifest's shape:
// id 12 lower-case hex and the prefix of lock_sha256, python a short version, packages an object
// of names [a-z0-9._-] to versions). Pure.
Runtime parse_runtime(const std::string& text);

// Reads the manifest beside `python` (O_NOFOLLOW, a regular file, under the cap: the venv is on
// the host, but a job's interpreter prefix is what jobs see; never trust it blindly).
Runtime read_runtime(const std::string& python);

// The JavaScript runtime (runtime/js): its manifest plotq-js-runtime.json beside the modules dir
// (<dirname(js_modules)>/plotq-js-runtime.json), written by runtime/js/manifest.mjs after npm ci.
// A JavaScript render's ledger row and a sweep of snippets record its id.
std::string js_runtime_manifest_path(const std::string& js_modules);
Runtime read_js_runtime(const std::string& js_modules);

// The R runtime (runtime/r): its manifest plotq-r-runtime.json, written by runtime/r/manifest.R
// after tools/setup.sh installed Debian's R packages at their pinned versions (runtime/r/r-packages.lock).
// Read at start and checked against what is installed: every package's DESCRIPTION under R_HOME's
// libraries must still say the manifest's version (else error "manifest_stale": an R package
// changed since setup, and R renders are runtime_unavailable until setup runs again).
// PLOTQ_R_RUNTIME names the manifest (default <PLOTQ_HOME>/runtime/r/plotq-r-runtime.json).
std::string r_runtime_manifest_path();
Runtime read_r_runtime(const std::string& manifest, const std::string& r_home);
// read_r_runtime(r_runtime_manifest_path(), PLOTQ_R_HOME or /usr/lib/R), read once per process.
const Runtime& r_runtime();

// The id a ledger row or a sweep records: nullopt when the runtime is unknown.
inline std::optional<std::string> runtime_id(const Runtime& r) {
  return r.known() ? std::optional<std::string>(r.id) : std::nullopt;
}

// {"id", "python"|"node"|"r", "packages": {...}} for /status and `plotq sandbox check`; an unknown runtime is
// {"id": null, "error": "..."}.
nlohmann::json runtime_json(const Runtime& runtime);

}  // namespace plotq::runs
