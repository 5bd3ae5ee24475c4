// GET /healthz: one report built from named parts. The store part is built in; other modules add
// theirs at startup (extension point), e.g. the sandbox layers:
//
//   app.health.add("sandbox", [&] { return HealthPart{ok, {{"seccomp", true}, {"cgroup", "v1"}}}; });
//
// A part's check runs on the event loop for every /healthz request: keep it to a cheap read.
// The answer is 200 {"status":"ok", "version":..., "<part>":{"ok":true,...}, ...} when every part is
// ok, else 503 with "status":"unavailable" and "detail":"unavailable" (the error vocabulary code).
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace plotq::server {

struct HealthPart {
  bool ok = false;
  nlohmann::json fields = nlohmann::json::object();  // merged into the part's object next to "ok"
};

class Health {
 public:
  // Throws std::logic_error on a duplicate or reserved name ("status", "version", "detail").
  void add(std::string name, std::function<HealthPart()> check);
  // The report body; *ok is false when any part is not ok (or a check threw).
  nlohmann::json report(bool* ok) const;

 private:
  std::vector<std::pair<std::string, std::function<HealthPart()>>> parts_;
};

}  // namespace plotq::server
