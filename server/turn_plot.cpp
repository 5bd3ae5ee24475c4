// A turn's plot action: daily pipeline run booked -> the turn's slot taken (status{queued} while it
// waits) -> status{rendering} -> runs::Renderer draws each theme -> the PNGs are stored with the
// turn (server/turn_plots.hpp) -> plot{themes:{light:{width,height,url}}} -> message -> done.
// Built only when runs/render_job.cpp is in the tree (PLOTQ_HAVE_RENDERER); otherwise a plot action
// answers error{unsupported}.
#include "common/log.hpp"
#include "runs/render_job.hpp"
#include "runs/runtime.hpp"
#include "server/turn_plots.hpp"
#include "server/turn_service.hpp"
#include "store/datasets.hpp"
#include "store/ledger.hpp"
#include "store/turns.hpp"

namespace plotq::server {

#ifndef PLOTQ_HAVE_RENDERER

std::unique_ptr<runs::Renderer> make_renderer(App&) { return nullptr; }

void run_plot_action(TurnService& s, const std::shared_ptr<Turn>& t, const TurnAction&) { s.fail(t, "unsupported"); }

#else

namespace {

std::string plot_url(const Turn& t, const std::string& theme) {
  return "/v1/sessions/" + t.session_id + "/turns/" + t.id + "/plots/" + theme + ".png";
}

bool host_failure(const std::string& o) {
  return o == "sandbox_unavailable" || o == "low_memory" || o == "launcher" || o == "io" || o == "stuck" ||
         o == "exec_denied" || o == "runtime_unavailable" || o == "harness_error";
}

void render_done(TurnService& s, const std::shared_ptr<Turn>& t, const runs::RunWho& who,
                 const std::vector<std::string>& themes, double slot_wait, const runs::RenderResult& result) {
  t->stop_work = nullptr;
  // Every theme's run gets its ledger row, whatever happens to the turn.
  for (const auto& theme : themes) {
    auto it = result.outputs.find(theme);
    if (it != result.outputs.end())
      s.ledger(runs::ledger_row(who, store::RunKind::render, it->second.job, it->second.outcome, slot_wait, theme));
  }
  if (t->ending()) return;
  nlohmann::json shown = nlohmann::json::object();
  const runs::ThemeRun* failed = nullptr;
  bool cancelled = false;
  auto now = store::now_unix();
  for (const auto& theme : themes) {
    auto it = result.outputs.find(theme);
    if (it == result.outputs.end()) continue;
    const runs::ThemeRun& r = it->second;
    if (r.outcome == "ok" && r.png) {
      plots::put(s.app.db, t->id, theme, *r.png, r.width, r.height, now);
      shown[theme] = {{"width", r.width}, {"height", r.height}, {"canvas", r.canvas}, {"url", plot_url(*t, theme)}};
    } else {
      cancelled = cancelled || r.outcome == "cancelled";
      if (!failed) failed = &r;
    }
  }
  if (cancelled) return s.fail(t, t->stop_reason.empty() ? "cancelled" : t->stop_reason);
  if (!shown.empty()) s.emit(t, "plot", {{"themes", shown}});
  if (!failed && !shown.empty()) {
    std::string text = "Rendered the plot:";
    bool first = true;
    for (auto& [theme, v] : shown.items()) {
      text += std::string(first ? " " : ", ") + theme + " " + std::to_string(v["width"].get<int>()) + "\u00d7" +
              std::to_string(v["height"].get<int>());
      first = false;
    }
    s.emit(t, "message", {{"text", text + "."}});
    return s.complete(t);
  }
  if (failed && host_failure(failed->outcome)) return s.fail(t, "unavailable");
  std::string why = failed && !failed->message.empty() ? failed->message
                    : failed                            ? "The plot failed (" + failed->outcome + ")."
                                                        : "The plot made no image.";
  s.emit(t, "message", {{"text", why}});
  s.fail(t, "run_failed");
}

}  // namespace

std::unique_ptr<runs::Renderer> make_renderer(App& app) {
  return std::make_unique<runs::Renderer>(app.ioc, app.launcher, app.figures, app.config.render,
                                          app.runtime);
}

void run_plot_action(TurnService& s, const std::shared_ptr<Turn>& t, const TurnAction& action) {
  if (!s.renderer) return s.fail(t, "unsupported");
  // The wire model took only names of the library table; a library this runtime lacks (or a
  // figure library without Chromium) ends the turn with error{runtime_unavailable}.
  if (std::string support = runs::render_support(action.library, *s.app.runtime, s.app.figures); support != "ok")
    return s.fail(t, support);
  runs::RunWho who{t->id + "-plot", t->user, t->session_id, t->id, runs::runtime_id(*s.app.runtime)};
  if (auto code = book_run(s.app.db, s.cfg, t->user, store::TurnAction::plot, store::now_unix())) {
    s.ledger_refused(who, store::RunKind::render, *code);
    return s.refuse(t, *code);
  }
  auto req = std::make_shared<runs::RenderRequest>();
  req->job_id = who.job_id;
  req->source = action.code;
  req->library = action.library;
  req->themes = action.themes;
  req->timeout_s = s.cfg.render_timeout_s;
  // The plot code may read the session's latest dataset version as data.csv.
  if (auto latest = store::datasets::get(s.app.db, t->session_id, 0)) req->data_csv = latest->csv;

  TurnService* sp = &s;
  s.take_slot(t, who, store::RunKind::render, [sp, who, req](const std::shared_ptr<Turn>& turn) {
    sp->emit(turn, "status", {{"step", "rendering"}, {"attempt", 1}});
    double slot_wait = TurnService::waited(*turn);
    std::weak_ptr<Turn> weak = turn;
    runs::RenderHandle handle = sp->renderer->render(*req, [sp, weak, who, req, slot_wait](runs::RenderResult result) {
      auto t2 = weak.lock();
      if (!t2) return;
      try {
        render_done(*sp, t2, who, req->themes, slot_wait, result);
      } catch (const std::exception& e) {
        log_event("turn_failed", {{"turn", t2->id}, {"class", typeid(e).name()}});
        sp->fail(t2, "internal");
      }
    });
    turn->stop_work = [handle]() mutable { handle.cancel(); };
  });
}

#endif

}  // namespace plotq::server
