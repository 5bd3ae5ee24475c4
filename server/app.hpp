// What a module's route registration gets at startup. Each module that serves HTTP writes one
// server/routes_NAME.cpp with `void register_NAME_routes(App&)` and adds one call in server/routes.cpp.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <memory>
#include <vector>

#include "server/auth.hpp"
#include "server/health.hpp"
#include "server/plotqd_config.hpp"
#include "server/router.hpp"
#include "store/migrate.hpp"

namespace boost::asio {
class io_context;
}
namespace plotq::store {
class Db;
class Exec;
}
namespace plotq::queue {
class RenderQueue;
}
namespace plotq::sandbox {
class Launcher;
class FigureRenderer;
}
namespace plotq::runs {
struct Runtime;
}

namespace plotq::server {

struct App {
  boost::asio::io_context& ioc;  // the one event loop; handlers and timers run here
  const PlotqdConfig& config;
  Router& router;
  const CallerCheck& callers;  // check_caller(app.callers, req, *res)
  Health& health;              // app.health.add("part", ...) for /healthz
  // The store connection plotqd opened at start (migrations, start-up cleanup). While serving, go
  // through `store` instead: on PostgreSQL a call on this connection would hold the loop for a
  // network round trip.
  store::Db& db;
  store::Exec& store;      // store calls for the loop: store.run(what, work, done)
  queue::RenderQueue& queue;     // the render slot(s) and the pipeline-only queue
  sandbox::Launcher& launcher;   // runs sandbox jobs (call on the loop)
  sandbox::FigureRenderer* figures;  // warm Chromium for plotly figures; null when unavailable
  class JobRegistry& jobs;       // /run-data and /render jobs waiting or running, by (job_id, kind)

  // Called on the loop when SIGTERM/SIGINT arrives, before connections drain (PLOTQ_SHUTDOWN_GRACE_S):
  // stop admitting work, cancel or finish what runs.
  void on_shutdown(std::function<void()> hook) { shutdown_hooks.push_back(std::move(hook)); }
  std::vector<std::function<void()>> shutdown_hooks;

  // The sandbox runtime's identity (runs/runtime.hpp), read once at start from the manifest beside
  // the configured interpreter: GET /status shows it, every ledger row records its id, and a
  // library is served only when the runtime holds its packages. Never null.
  std::shared_ptr<const runs::Runtime> runtime;

  // The drain (SIGTERM): main sets draining, runs the drain hooks (the turns' open streams end
  // with a resumable close), and waits while a work counter is above zero, for at most
  // PLOTQ_SHUTDOWN_GRACE_S; then the shutdown hooks run. While draining, /readyz answers 503 and
  // a route that starts work answers 503 unavailable with Retry-After (refuse_while_draining).
  bool draining = false;
  void on_drain(std::function<void()> hook) { drain_hooks.push_back(std::move(hook)); }
  std::vector<std::function<void()>> drain_hooks;
  // Running work a module still owns (turns, jobs); the drain ends early once all are zero.
  void count_work(std::function<std::size_t()> counter) { work_counters.push_back(std::move(counter)); }
  std::vector<std::function<std::size_t()>> work_counters;
  // The last periodic WAL checkpoint's failure ("" when it succeeded or none ran): /readyz's
  // store_writable reads it instead of writing to the store per request.
  std::string checkpoint_error;
  // This node's part in a cluster (server/cluster_node.hpp); null on a single node.
  class ClusterNode* cluster = nullptr;
  // The store's health as /healthz and /readyz report it (store_health(app), server/routes.cpp): on
  // SQLite read per request (one indexed read of a local file); on PostgreSQL the last answer of a
  // probe the store pool runs every PLOTQ_DB_PROBE_MS, so a probe never holds the loop.
  store::Health probed_store;

  // The JavaScript runtime (runtime/js, runs::read_js_runtime of the figure renderer's modules
  // dir): a snippet render's ledger row records its id; /status shows it. Never null.
  std::shared_ptr<const runs::Runtime> js_runtime;
  // The runtime a library's renders run on: the JavaScript one for snippet libraries (app.cpp).
  const runs::Runtime& runtime_for(const std::string& library) const;
};

// The store's health now (see App::probed_store).
store::Health store_health(App& app);
// On PostgreSQL: the probe behind App::probed_store, from a periodic timer (server/routes.cpp).
void start_store_probe(App& app);

// While draining: answers 503 unavailable with Retry-After (the grace, in whole seconds) and
// returns true. Routes that start work (a turn, a resume, /run-data, /render) call it first.
bool refuse_while_draining(const App& app, Responder& res);
// GET /readyz (server/routes_ready.cpp).
void register_ready_routes(App& app);
// GET /openapi.json (server/routes_openapi.cpp).
void register_openapi_routes(App& app);
// All routes of plotqd (server/routes.cpp calls each module's register function).
void register_routes(App& app);
// GET /healthz and the store's health part.
void register_health_routes(App& app);
// POST /run-data (server/routes_run_data.cpp).
void register_run_data_routes(App& app);
// Chat sessions, messages (turns over SSE), resume, cancel, plot images (server/routes_turns.cpp).
void register_turn_routes(App& app);
// A session's dataset versions and the paste route (server/routes_datasets.cpp).
void register_dataset_routes(App& app);
// GET /v1/status (server/routes_status.cpp).
void register_status_routes(App& app);
// GET /, /static/app.js, /static/style.css (server/routes_web.cpp).
void register_web_routes(App& app);
// POST /render, POST /render/{job_id}/cancel, GET /status (server/routes_render.cpp).
void register_render_routes(App& app);
// GET /metrics, the Prometheus text format (server/routes_metrics.cpp, docs/metrics.md).
void register_metrics_routes(App& app);

}  // namespace plotq::server
