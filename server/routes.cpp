// The list of plotqd's route modules. Add one line per module.
#include "common/log.hpp"
#include "server/app.hpp"
#include "server/periodic.hpp"
#include "server/retention_job.hpp"
#include "store/exec.hpp"
#include "store/migrate.hpp"

namespace plotq::server {

store::Health store_health(App& app) {
  if (!app.store.remote()) return store::check_health(app.db);
  return app.probed_store;
}

void start_store_probe(App& app) {
  if (!app.store.remote()) return;
  app.probed_store = store::check_health(app.db);  // at start, before serving: may wait
  auto in_flight = std::make_shared<bool>(false);
  const std::chrono::milliseconds every(app.config.db.probe_ms);
  run_periodically(app, every, [&app, in_flight, every] {
    // A probe still out after a whole interval: the pool is stuck or the server gone.
    if (*in_flight) {
      app.probed_store = store::Health{false, app.probed_store.schema_version, "unreachable"};
      return every;
    }
    *in_flight = true;
    app.store.run(
        "probe the store", [](store::Db& db) { return store::check_health(db); },
        [&app, in_flight](store::Stored<store::Health> h) {
          *in_flight = false;
          app.probed_store = h.ok() ? *h.value : store::Health{false, app.probed_store.schema_version, h.code};
        });
    return every;
  });
}

void register_health_routes(App& app) {
  app.health.add("store", [&app] {
    store::Health h = store_health(app);
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
