// GET /readyz (readiness; /healthz stays the liveness check) and the drain's refusal. A warm
// zygote or the Chromium renderer that is not running is started by the probe that finds it so
// (they otherwise start on their first job): an orchestrator's probes warm plotqd before it gets
// traffic, and a test or a bench that never asks pays nothing. Ready once data runs are warm
// (the first mode warmed); "modes" says which others are warm yet. A job of a mode still warming
// waits for its zygote (or runs cold, PLOTQ_ZYGOTE_FALLBACK_COLD): never refused.
#include <sys/statvfs.h>

#include <algorithm>
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

// The mode a node is ready for first: data runs warm quickest and are the commonest sandbox work.
constexpr const char* kFirstMode = "data";

bool has_warm_mode(const sandbox::Launcher& l, const std::string& m) {
  const auto& w = l.config().warm_modes;
  return std::find(w.begin(), w.end(), m) != w.end();
}

bool all_cold(const sandbox::Launcher& l) { return l.config().sandbox_cold || !l.layers().active("warm"); }

// Warms the zygotes in order: the first mode alone, then every other mode and Chromium together,
// so that the first is not slowed by the others' preloads.
void start_warming(App& app) {
  sandbox::Launcher& l = app.launcher;
  if (app.draining || all_cold(l)) return;
  if (has_warm_mode(l, kFirstMode) && !l.zygote_ready(kFirstMode)) {
    l.prewarm(kFirstMode);  // once: a zygote starting or failed for good is left as it is
    return;
  }
  for (const auto& m : l.config().warm_modes) l.prewarm(m);  // forks the zygote; its preload runs in the child
  if (app.figures && !app.figures->ready() && app.figures->renderer_pid() == 0) app.figures->start();
}

ReadyCheck zygotes(App& app) {
  sandbox::Launcher& l = app.launcher;
  if (all_cold(l)) return {"zygotes", true, "cold"};
  start_warming(app);
  const bool first_warm = !has_warm_mode(l, kFirstMode) || l.zygote_ready(kFirstMode);
  bool all = true;
  const nlohmann::json modes = mode_states(app);
  for (const auto& [mode, state] : modes.items())
    all = all && (state == "warm" || state == "cold" || state == "disabled");
  return {"zygotes", first_warm, all ? "ready" : first_warm ? "warming" : "starting"};
}

}  // namespace

nlohmann::json mode_states(const App& app) {
  const sandbox::Launcher& l = app.launcher;
  auto state = [&](const std::string& m) -> std::string {
    if (all_cold(l) || !has_warm_mode(l, m)) return "cold";
    if (l.zygote_ready(m)) return "warm";
    return l.zygote_starting(m) ? "warming" : "off";
  };
  std::string chromium = !app.figures ? "disabled" : app.figures->ready() ? "warm"
                                                   : app.figures->renderer_pid() ? "warming" : "off";
  nlohmann::json modes = nlohmann::json::object();
  for (const char* m : {"raw", "data", "plot", "figure", "r"}) modes[m] = state(m);
  // A figure is its plot step (the figure zygote) and its draw (Chromium).
  if (modes["figure"] == "warm" && chromium != "warm") modes["figure"] = chromium == "disabled" ? "disabled" : "warming";
  modes["snippet"] = chromium;  // JavaScript snippets need Chromium only
  return modes;
}

namespace {

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
    };
    if (app.cluster)  // a fenced node holds no lease: it claims and writes nothing until it rejoins
      checks.push_back({"cluster", !app.cluster->fenced(), app.cluster->fenced() ? "fenced" : "ok"});
    bool ok = false;
    nlohmann::json body = ready_report(checks, &ok);
    body["modes"] = mode_states(app);
    res->send_json(ok ? 200 : 503, std::move(body));
  });
}

}  // namespace plotq::server
