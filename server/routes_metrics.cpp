// GET /metrics: every module's metrics in the Prometheus text format (docs/metrics.md). The
// counters are atomics bumped where the work happens; the gauges below are read from their owners
// here, at scrape time, on the loop (the queue is the loop's). Nothing is computed per request.
#include <sys/stat.h>

#include <string>

#include "common/metrics.hpp"
#include "queue/queue_metrics.hpp"
#include "runs/run_metrics.hpp"
#include "server/app.hpp"
#include "store/exec.hpp"
#include "server/server_metrics.hpp"

namespace plotq::server {

void register_metrics_routes(App& app) {
  register_server_metrics();
  runs::register_run_metrics();
  queue::register_queue_metrics(app.queue);
  auto& reg = metrics::registry();
  reg.collect("plotq_store_wal_bytes", metrics::Type::gauge, "size of the store's -wal file now, bytes", {},
              // A PostgreSQL store has no -wal file of ours: 0.
              [wal = app.store.remote() ? std::string() : app.config.db_path + "-wal"] {
                struct stat st {};
                double size = ::stat(wal.c_str(), &st) == 0 ? double(st.st_size) : 0;  // no WAL yet: 0
                return std::vector<metrics::Sample>{{{}, size}};
              });

  app.router.get("/metrics", [&app](Request req, std::shared_ptr<Responder> res) {
    if (std::string_view code = check_metrics_caller(req, app.config.auth.metrics_token); !code.empty())
      return res->send_error(code);
    res->send_body(200, "text/plain; version=0.0.4; charset=utf-8", metrics::registry().render());
  });
}

}  // namespace plotq::server
