// plotq smoke [--server URL] [--timeout S]: the deploy smoke. Posts a 2-row snippet to /run-data
// and exits 0 only when the table comes back (2 rows, the expected CSV); 1 otherwise.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "tools/commands.hpp"
#include "tools/http_client.hpp"

namespace plotq::cli {

int cmd_smoke(Args args) {
  take_db_path(args);  // accepted for symmetry, not used
  std::string server = take_option(args, "--server");
  if (server.empty()) server = "http://" + env_string("PLOTQ_LISTEN", "127.0.0.1:8080");
  std::string timeout_text = take_option(args, "--timeout");
  double timeout = timeout_text.empty() ? 60 : std::stod(timeout_text);
  if (!args.empty()) {
    std::fprintf(stderr, "plotq smoke: unexpected argument '%s'\n", args[0].c_str());
    return 2;
  }
  nlohmann::json req = {
      {"job_id", "smoke"},
      {"source", "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n"},
      {"timeout_s", 20},
  };
  HttpResult r = http_call(server, "POST", "/run-data", req.dump(), timeout);
  if (!r.error.empty()) {
    std::printf("smoke: FAIL (%s)\n", r.error.c_str());
    return 1;
  }
  auto body = nlohmann::json::parse(r.body, nullptr, false);
  if (r.status != 200 || !body.is_object()) {
    std::string detail = body.is_object() && body.contains("detail") ? body["detail"].dump() : "";
    std::printf("smoke: FAIL (HTTP %d %s)\n", r.status, detail.c_str());
    return 1;
  }
  const std::string expected = "x,y\n1,3.5\n2,4.5\n";
  bool ok = body.value("exit_code", nlohmann::json()) == 0 && body["csv_text"].is_string() &&
            body["csv_text"].get<std::string>() == expected;
  std::printf("smoke: %s (reason %s, wall %.3f s, slot wait %.3f s)\n", ok ? "OK" : "FAIL",
              body["reason"].is_null() ? "none" : body["reason"].dump().c_str(),
              body.value("wall_s", 0.0),
              body.contains("timings") ? body["timings"].value("slot_wait_s", 0.0) : 0.0);
  return ok ? 0 : 1;
}

}  // namespace plotq::cli
