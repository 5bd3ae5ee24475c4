// The list of plotqd's route modules. Add one line per module.
#include "common/log.hpp"
#include "server/app.hpp"
#include "server/retention_job.hpp"
#include "store/migrate.hpp"

namespace plotq::server {

void register_health_routes(App& app) {
  app.health.add("store", [&db = app.db] {
    store::Health h = store::check_health(db);
    HealthPart p{h.ok, {{"schema_version", h.schema_version}}};
    if (!h.ok) p.fields["error"] = h.detail;  // a store code (schema_newer, corrupt, ...), never a message
    return p;
  });
  app.router.get("/healthz", [&health = app.health](Request, std::shared_ptr<Responder> res) {
    bool ok = false;
    nlohmann::json body = health.report(&ok);
    if (!ok) log_event("health_failed", {{"report", body}});
    res->send_json(ok ? 200 : 503, std::move(body));
  });
}

void register_routes(App& app) {
  register_health_routes(app);
  register_ready_routes(app);
  register_openapi_routes(app);
  register_run_data_routes(app);
  register_turn_routes(app);
  register_dataset_routes(app);
  register_status_routes(app);
  register_web_routes(app);
  register_render_routes(app);
  register_metrics_routes(app);
  // Not a route: ledger rows, ended turns' events, closed sessions' datasets, expired retry answers
  // and old sweeps are pruned on the loop's timer (store/retention.hpp).
  start_retention_job(app);
}

}  // namespace plotq::server
