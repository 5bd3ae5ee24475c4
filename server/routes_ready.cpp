// GET /readyz (readiness; /healthz stays the liveness check) and the drain's refusal. A warm
// zygote or the Chromium renderer that is not running is started by the probe that finds it so
// (they otherwise start on their first job): an orchestrator's probes warm plotqd before it gets
// traffic, and a test or a bench that never asks pays nothing.
#include <sys/statvfs.h>

#include <cmath>

#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "server/app.hpp"
#include "server/cluster_node.hpp"
#include "store/exec.hpp"
#include "server/readiness.hpp"
#include "store/migrate.hpp"

namespace plotq::server {

namespace {

// Below this the store's next commits may fail: not ready (SQLite needs room for the WAL).
constexpr long long kMinFreeBytes = 1 << 20;

ReadyCheck store_writable(const App& app) {
  if (!app.checkpoint_error.empty()) return {"store_writable", false, app.checkpoint_error};
  // PostgreSQL's disk is the server's, not ours to stat: the probe (migrations) says whether it answers.
  if (app.store.remote()) return {"store_writable", true, "ok"};
  long long free = free_bytes_at(app.config.db_path);
  if (free >= 0 && free < kMinFreeBytes) return {"store_writable", false, "disk_full"};
  return {"store_writable", true, "ok"};
}

ReadyCheck zygotes(App& app) {
  sandbox::Launcher& l = app.launcher;
  if (l.config().sandbox_cold || !l.layers().active("warm")) return {"zygotes", true, "cold"};
  std::string detail = "ready";
  bool ok = true;
  for (const auto& mode : l.config().warm_modes) {
    if (l.zygote_ready(mode)) continue;
    ok = false;
    if (!l.zygote_pid(mode) && !app.draining) {
      l.prewarm(mode);  // forks the zygote; its preload runs in the child
      detail = "starting";
    } else if (detail == "ready") {
      detail = "starting";
    }
  }
  return {"zygotes", ok, detail};
}

ReadyCheck chromium(App& app) {
  if (!app.figures) return {"chromium", true, "disabled"};  // figure libraries answer runtime_unavailable
  if (app.figures->ready()) return {"chromium", true, "ready"};
  if (app.figures->renderer_pid() == 0 && !app.draining) app.figures->start();
  return {"chromium", false, "starting"};
}

}  // namespace

long long free_bytes_at(const std::string& path) {
  std::string dir = path;
  auto slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return -1;
  return static_cast<long long>(st.f_bavail) * static_cast<long long>(st.f_frsize);
}

nlohmann::json ready_report(const std::vector<ReadyCheck>& checks, bool* ok) {
  *ok = true;
  bool draining = false;
  nlohmann::json failing = nlohmann::json::array(), all = nlohmann::json::object();
  for (const ReadyCheck& c : checks) {
    all[c.name] = {{"ok", c.ok}, {"detail", c.detail}};
    if (c.name == "draining") draining = !c.ok;
    if (!c.ok) failing.push_back(c.name);
    *ok = *ok && c.ok;
  }
  nlohmann::json body = {{"status", *ok ? "ready" : "not_ready"}, {"draining", draining}, {"failing", failing},
                         {"checks", all}};
  if (!*ok) body["detail"] = "unavailable";
  return body;
}

bool refuse_while_draining(const App& app, Responder& res) {
  if (!app.draining) return false;
  auto s = static_cast<long long>(std::ceil(app.config.shutdown_grace.count() / 1000.0));
  res.send_json(503, {{"detail", "unavailable"}}, {{"Retry-After", std::to_string(std::max(1LL, s))}});
  return true;
}

void register_ready_routes(App& app) {
  app.router.get("/readyz", [&app](Request, std::shared_ptr<Responder> res) {
    store::Health h = store_health(app);  // one indexed read, or the store probe's last answer
    std::vector<ReadyCheck> checks = {
        {"draining", !app.draining, app.draining ? "draining" : "no"},
        store_writable(app),
        {"migrations", h.ok, h.detail},
        {"sandbox", app.launcher.ready(), app.launcher.ready() ? "ok" : "layers_missing"},
        zygotes(app),
        chromium(app),
    };
    if (app.cluster)  // a fenced node holds no lease: it claims and writes nothing until it rejoins
      checks.push_back({"cluster", !app.cluster->fenced(), app.cluster->fenced() ? "fenced" : "ok"});
    bool ok = false;
    nlohmann::json body = ready_report(checks, &ok);
    res->send_json(ok ? 200 : 503, std::move(body));
  });
}

}  // namespace plotq::server
