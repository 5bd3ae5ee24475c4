// GET /openapi.json: docs/openapi.json under PLOTQ_HOME, read once at start by a fixed name, with
// the error vocabulary and the configured caps written in (server/openapi.hpp). No caller check:
// the contract is no secret. A file that is missing or not JSON is logged and answered 404.
#include "common/log.hpp"
#include "sandbox/output.hpp"
#include "server/app.hpp"
#include "server/openapi.hpp"

namespace plotq::server {

void register_openapi_routes(App& app) {
  std::string path = app.config.home + "/docs/openapi.json";
  auto served = std::make_shared<std::optional<std::string>>();
  sandbox::OutputRead r = sandbox::read_file(path, 4 * 1024 * 1024);
  if (r.status == sandbox::OutputRead::ok) {
    auto doc = nlohmann::json::parse(r.data, nullptr, false);
    if (doc.is_object()) *served = served_openapi(std::move(doc), app.config.turns).dump();
  }
  if (!*served) log_event("openapi_missing", {{"file", "docs/openapi.json"}});
  app.router.get("/openapi.json", [served](Request, std::shared_ptr<Responder> res) {
    if (!*served) return res->send_error("not_found");
    res->send_body(200, "application/json", **served, {{"X-Content-Type-Options", "nosniff"}});
  });
}

}  // namespace plotq::server
