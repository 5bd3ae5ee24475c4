// plotqd: read settings, open and migrate the store, register routes, serve until SIGTERM/SIGINT.
// Exit codes: 0 clean shutdown, 1 cannot listen or unexpected failure, 2 bad settings or arguments,
// 3 the store cannot be opened or migrated.
#include <sqlite3.h>
#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <unistd.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <typeinfo>

#include "common/log.hpp"
#include "queue/render_queue.hpp"
#include "runs/runtime.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "sandbox/layers.hpp"
#include "server/app.hpp"
#include "server/cluster_node.hpp"
#include "server/job_registry.hpp"
#include "server/server.hpp"
#include "store/exec.hpp"
#include "server/store_checkpoints.hpp"
#include "store/checkpoint.hpp"
#include "store/db.hpp"
#include "store/target.hpp"
#include "store/idempotency.hpp"
#include "store/integrity.hpp"
#include "store/migrate.hpp"
#include "store/quotas.hpp"
#include "store/turns.hpp"

extern char** environ;

namespace {

using namespace plotq;
using namespace plotq::server;

int usage(const Settings& settings, FILE* out) {
  std::fprintf(out,
               "usage: plotqd [--help] [--version] [--check-sandbox] [--routes]\n\n"
               "plotqd serves plotq's HTTP API. It is configured only by environment variables;\n"
               "an empty variable counts as unset. Settings:\n\n%s",
               settings.help_text().c_str());
  return out == stdout ? 0 : 2;
}

// Enough descriptors for the connection limit plus the store and sandboxes (soft limit only).
void raise_file_limit(std::size_t connections) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  rlim_t want = static_cast<rlim_t>(connections) + 256;
  if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) want = rl.rlim_max;
  if (want > rl.rlim_cur) {
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < static_cast<rlim_t>(connections) + 64)
    log_event("file_limit_low", {{"nofile", static_cast<std::uint64_t>(rl.rlim_cur)}, {"max_connections", connections}});
}

int run(int argc, char** argv) {
  PlotqdConfig cfg;
  Settings settings;
  register_settings(settings, cfg);

  bool check_sandbox = false;
  bool print_routes = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(settings, stdout);
    if (a == "--routes") {  // the router's routes as JSON, after a full start; then exit (tests/contract)
      print_routes = true;
      continue;
    }
    if (a == "--check-sandbox") {
      check_sandbox = true;
      continue;
    }
    if (a == "--version") {
      std::printf("plotqd %s\n", PLOTQ_VERSION);
      return 0;
    }
    std::fprintf(stderr, "plotqd: unknown argument '%s'\n", a.c_str());
    return usage(settings, stderr);
  }

  std::vector<std::string> errors = settings.load_from_environment();
  if (errors.empty()) errors = check_config(cfg);
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "plotqd: configuration error: %s\n", e.c_str());
    log_event("config_invalid", {{"errors", errors}});
    return 2;
  }
  log_event("config", {{"settings", settings.to_json()}, {"version", PLOTQ_VERSION}});
  if (auto unknown = settings.unknown_names(environ); !unknown.empty())
    log_event("config_unknown_names", {{"names", unknown}});
  ::setenv("PLOTQ_HOME", cfg.home.c_str(), 1);  // project_home() reads it
  cfg.sandbox = sandbox::resolved(cfg.sandbox);  // empty paths -> their defaults under PLOTQ_HOME
  std::signal(SIGPIPE, SIG_IGN);
  raise_file_limit(cfg.http.max_connections);

  if (check_sandbox) {
    // The same probe the Launcher makes at start; exit 1 when a required layer is missing.
    boost::asio::io_context probe_io{1};
    sandbox::Launcher probe(probe_io, cfg.sandbox);
    std::printf("%s\n", sandbox::to_json(probe.layers()).dump(2).c_str());
    return probe.ready() ? 0 : 1;
  }

  // A damaged file is never served, and never opened for writing: closing a read-write
  // connection would checkpoint a foreign -wal into it. (PostgreSQL checks its own pages.)
  if (store::engine_of(cfg.db_path) == store::Engine::sqlite) {
    auto report = store::check_store_file(cfg.db_path, cfg.db.start_check ? store::CheckDepth::quick
                                                                          : store::CheckDepth::header);
    if (!report.ok()) {
      std::fprintf(stderr, "plotqd: store %s is damaged or not a plotq store; not serving it (see `plotq check`):\n%s",
                   cfg.db_path.c_str(), store::describe(report).c_str());
      nlohmann::json codes = nlohmann::json::array();
      for (const auto& p : report.problems) codes.push_back(p.code);
      log_event("store_damaged", {{"path", cfg.db_path}, {"problems", codes}});
      return 3;
    }
  }
  if (cfg.cluster.on) {
    if (cfg.cluster.node_id.empty()) {
      char host[256] = {0};
      ::gethostname(host, sizeof host - 1);
      cfg.cluster.node_id = std::string(host) + "-" + std::to_string(::getpid());
    }
    // Every write transaction of this node's store connections is fenced by its lease.
    cfg.db.fence = std::make_shared<store::WriteFence>();
    cfg.db.fence->node = cfg.cluster.node_id;
    // A transaction the node left open (cut off, paused) ends within its lease, and with it the
    // fence's hold on its row: the rescue of its work is not held up past the lease.
    cfg.db.idle_in_transaction_ms = std::min(static_cast<int>(cfg.cluster.lease_s * 1000),
                                             std::max(cfg.db.statement_timeout_ms, 1000) * 6);
  }
  std::unique_ptr<store::Db> db;
  try {
    db = store::Db::open(cfg.db_path, cfg.db);
    int version = store::migrate(*db);
    // A previous process's unfinished turns and jobs can never finish: close them.
    auto now = store::now_unix();
    // In a cluster the other nodes' turns and jobs are alive: this node's own earlier ones are
    // ended node_lost when it joins (ClusterNode::join).
    std::int64_t abandoned = cfg.cluster.on ? 0 : store::turns::finish_abandoned(*db, now);
    std::int64_t forgotten = cfg.cluster.on ? 0 : store::idempotency::forget_running(*db);
    // The limits this process enforces, for `plotq quotas` and the v_quota_* views.
    store::quotas::write_limits(*db, limits_table(cfg.turns), now);
    // SQLite's WAL-reset race needs two connections writing and checkpointing (store/checkpoint.hpp):
    // plotqd has one, but on an affected SQLite other writers of this file reopen it.
    log_event("store_ready", {{"path", store::redacted(cfg.db_path)}, {"engine", std::string(store::to_string(db->engine()))},
                              {"schema_version", version},
                              {"abandoned_turns", abandoned}, {"forgotten_jobs", forgotten},
                              {"sqlite", sqlite3_libversion()},
                              {"sqlite_wal_reset_bug", store::has_wal_reset_bug(sqlite3_libversion_number())}});
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotqd: store: %s\n", e.what());
    log_event("store_failed", {{"code", e.code()}});
    return 3;
  }

  boost::asio::io_context ioc{1};
  Router router;
  Health health;
  CallerCheck callers(cfg.auth);
  queue::RenderQueue render_queue(ioc, cfg.queue);
  std::unique_ptr<sandbox::Launcher> launcher;
  try {
    launcher = std::make_unique<sandbox::Launcher>(ioc, cfg.sandbox);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plotqd: sandbox: %s\n", e.what());
    log_event("sandbox_failed", {{"class", typeid(e).name()}});
    return 1;
  }
  log_event("sandbox", {{"ready", launcher->ready()}, {"layers", sandbox::to_json(launcher->layers())}});
  std::unique_ptr<sandbox::FigureRenderer> figures = std::make_unique<sandbox::FigureRenderer>(ioc, cfg.figure);
  if (!figures->available("*")) {
    log_event("figures_unavailable", {{"reason", figures->unavailable_reason("*")}});
    figures.reset();
  }
  // What the sandbox's interpreter holds: a runtime without its manifest serves no library
  // (runtime_unavailable) but plotqd still starts, so /status can say why.
  auto runtime = std::make_shared<const runs::Runtime>(runs::read_runtime(cfg.sandbox.python));
  if (runtime->known())
    log_event("runtime", {{"id", runtime->id}, {"python", runtime->python}, {"packages", runtime->packages.size()}});
  else
    log_event("runtime_unknown", {{"error", runtime->error}, {"manifest", runtime->manifest}});
  JobRegistry jobs;
  store::Exec store_exec(ioc, *db, cfg.db_path, cfg.db, cfg.db.pool_size);
  App app{ioc, cfg, router, callers, health, *db, store_exec, render_queue, *launcher, figures.get(), jobs, {}, runtime};
  app.js_runtime = std::make_shared<const runs::Runtime>(runs::read_js_runtime(cfg.figure.js_modules));
  if (app.js_runtime->known())
    log_event("js_runtime", {{"id", app.js_runtime->id}, {"node", app.js_runtime->node},
                             {"packages", app.js_runtime->packages.size()}});
  // R and its packages (runtime/r): read and checked against what is installed, once, at start.
  if (const runs::Runtime& r = runs::r_runtime(); r.known())
    log_event("r_runtime", {{"id", r.id}, {"r", r.r}, {"packages", r.packages.size()}});
  else
    log_event("r_runtime_unknown", {{"error", r.error}, {"manifest", r.manifest}});
  register_routes(app);
  start_store_checkpoints(app);  // after routes: its shutdown hook runs after theirs
  start_store_probe(app);
  health.add("sandbox", [&l = *launcher] {
    return HealthPart{l.ready(), {{"layers", sandbox::to_json(l.layers())}}};
  });
  app.on_shutdown([&] {
    jobs.cancel_all_jobs();
    if (figures) figures->stop();
  });
  app.count_work([&jobs] { return jobs.size(); });
  // Store calls still out on PostgreSQL's pool (a turn's end, a job's rows): the drain lets them land.
  app.count_work([&store_exec] { return store_exec.pending(); });
  if (print_routes) {
    nlohmann::json routes = nlohmann::json::array();
    for (const Route& r : router.routes()) routes.push_back({{"method", r.method}, {"pattern", r.pattern}});
    std::printf("%s\n", routes.dump().c_str());
    return 0;
  }

  {
    // Installed before listening: a signal that comes right after the "listening" line is queued
    // for the handler below instead of killing the process with the default action.
    boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
    Server server(ioc, cfg.http, router);
    std::string bound;
    try {
      bound = server.listen();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "plotqd: %s\n", e.what());
      log_event("listen_failed", {{"address", cfg.http.listen}});
      return 1;
    }
    // A node joins once it is bound (its row names where it listens, even on port 0) and before
    // the loop runs: nothing is served before the node holds its lease.
    if (app.cluster) {
      try {
        app.cluster->join(bound);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "plotqd: cluster: %s\n", e.what());
        log_event("cluster_join_failed", {{"code", store::code_of(e)}});
        return 3;
      }
      app.cluster->start();
      app.on_shutdown([&app] { app.cluster->stop(); });  // after the turns' own shutdown
    }
    log_event("listening", {{"address", bound}, {"development", callers.development()},
                            {"tokens", callers.token_count()}});

    // The drain: SIGTERM/SIGINT stops new work (503 + Retry-After, /readyz 503) while the listener
    // stays open; open streams end resumably; running work gets up to the grace. Then the shutdown
    // hooks cancel what is left and the connections close (in-flight answers get what is left of
    // the grace, at least 1 s). A second signal skips what is left of the drain.
    using SteadyClock = std::chrono::steady_clock;
    const auto drain_deadline = std::make_shared<SteadyClock::time_point>();
    boost::asio::steady_timer drain_timer(ioc);
    bool stopping = false;
    auto work_left = [&app] {
      std::size_t n = 0;
      for (auto& c : app.work_counters) n += c();
      return n;
    };
    std::function<void()> stop_now = [&] {
      if (stopping) return;
      stopping = true;
      drain_timer.cancel();
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*drain_deadline - SteadyClock::now());
      log_event("shutdown", {{"connections", server.connections()}, {"work_left", work_left()},
                             {"grace_s", cfg.shutdown_grace.count() / 1000.0}});
      for (auto& hook : app.shutdown_hooks) hook();
      server.shutdown(std::max(left, std::chrono::milliseconds(1000)), [&] {
        signals.cancel();
        ioc.stop();
      });
    };
    std::function<void()> drain_poll = [&] {
      if (stopping) return;
      if (work_left() == 0 || SteadyClock::now() >= *drain_deadline) return stop_now();
      drain_timer.expires_after(std::chrono::milliseconds(100));
      drain_timer.async_wait([&](const boost::system::error_code& e) {
        if (!e) drain_poll();
      });
    };
    std::function<void(const boost::system::error_code&, int)> on_signal;
    on_signal = [&](const boost::system::error_code& ec, int sig) {
      if (ec) return;
      if (app.draining) {
        log_event("shutdown_forced", {{"signal", sig}});
        if (!stopping) stop_now();
        server.shutdown(cfg.shutdown_grace, nullptr);  // second call: closes every connection now
        signals.async_wait(on_signal);
        return;
      }
      app.draining = true;
      *drain_deadline = SteadyClock::now() + cfg.shutdown_grace;
      log_event("drain", {{"signal", sig}, {"connections", server.connections()}, {"work_left", work_left()},
                          {"grace_s", cfg.shutdown_grace.count() / 1000.0}});
      for (auto& hook : app.drain_hooks) hook();
      drain_poll();
      signals.async_wait(on_signal);
    };
    signals.async_wait(on_signal);
    ioc.run();
  }
  db.reset();  // closes the store (WAL checkpoint on last close)
  log_event("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    log_event("fatal", {{"class", typeid(e).name()}});
    std::fprintf(stderr, "plotqd: fatal: %s\n", e.what());
    return 1;
  }
}
