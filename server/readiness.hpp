// GET /readyz: can plotqd do its work now? Each check is a cheap read on the loop (no store write,
// no blocking wait): the drain, the store's last checkpoint and free space, the schema, the
// sandbox layers, the warm zygotes, Chromium. The decision and the body are pure (ready_report).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace plotq::server {

struct ReadyCheck {
  std::string name;    // draining | store_writable | migrations | sandbox | zygotes | chromium
  bool ok = false;
  std::string detail;  // a short word or code, never a message with paths
};

// {"status":"ready"|"not_ready", "draining":bool, "failing":[names], "checks":{name:{ok, detail}}},
// plus "detail":"unavailable" when not ready. *ok is true when every check is ok.
nlohmann::json ready_report(const std::vector<ReadyCheck>& checks, bool* ok);

struct App;
// Each sandbox mode's state: {"raw","data","plot","figure","r","snippet"} -> "warm" | "warming" | "off"
// (not started yet) | "cold" (no zygote: a fresh interpreter per job) | "disabled" (no Chromium).
nlohmann::json mode_states(const App& app);

// Free bytes under the file system holding `path` (statvfs of its directory); -1 when unknown.
long long free_bytes_at(const std::string& path);

}  // namespace plotq::server
