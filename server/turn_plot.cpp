// A turn's plot action: daily pipeline run booked -> the turn's slot taken (status{queued} while it
// waits) -> status{rendering} -> runs::Renderer draws each theme -> the PNGs are stored with the
// turn (store/turn_plots.hpp) -> plot{themes:{light:{width,height,url}}} -> message -> done.
// A RunningAction runs it (server/turn_action.hpp), the same way as the data action.
#include "common/log.hpp"
#include "runs/outcome.hpp"
#include "runs/render_job.hpp"
#include "runs/runtime.hpp"
#include "server/errors.hpp"
#include "server/turn_service.hpp"
#include "store/exec.hpp"
#include "common/log.hpp"
#include "store/datasets.hpp"
#include "store/ledger.hpp"
#include "store/turn_plots.hpp"
#include "store/turns.hpp"

namespace plotq::server {

namespace {

std::string plot_url(const Turn& t, const std::string& theme) {
  return "/v1/sessions/" + t.session_id + "/turns/" + t.id + "/plots/" + theme + ".png";
}

void plots_stored(TurnService& s, const std::shared_ptr<Turn>& t, const std::vector<std::string>& themes,
                  const runs::RenderResult& result);

// The PNGs of the themes that drew are stored (one store call), then the turn's events go out.
void render_done(TurnService& s, const std::shared_ptr<Turn>& t, const std::vector<std::string>& themes,
                 const runs::RenderResult& result) {
  if (t->ending()) return;
  struct Png {
    std::string theme;
    std::string png;
    int width, height;
  };
  std::vector<Png> pngs;
  for (const auto& theme : themes) {
    auto it = result.outputs.find(theme);
    if (it != result.outputs.end() && it->second.outcome == runs::Outcome::ok && it->second.png)
      pngs.push_back({theme, *it->second.png, it->second.width, it->second.height});
  }
  TurnService* sp = &s;
  auto kept = std::make_shared<runs::RenderResult>(result);
  s.app.store.run(
      "store a turn's plots",
      [id = t->id, pngs = std::move(pngs), now = store::now_unix()](store::Db& db) {
        for (const auto& p : pngs) store::turn_plots::put(db, id, p.theme, p.png, p.width, p.height, now);
      },
      [sp, t, themes, kept](store::Stored<void> stored) {
        if (t->ending()) return;
        if (!stored.ok()) {
          log_event("turn_failed", {{"turn", t->id}, {"class", "StoreError"}, {"code", stored.code}});
          return sp->fail(t, std::string(store_failure_code(stored.code)));
        }
        plots_stored(*sp, t, themes, *kept);
      });
}

void plots_stored(TurnService& s, const std::shared_ptr<Turn>& t, const std::vector<std::string>& themes,
                  const runs::RenderResult& result) {
  nlohmann::json shown = nlohmann::json::object();
  const runs::ThemeRun* failed = nullptr;
  bool cancelled = false;
  for (const auto& theme : themes) {
    auto it = result.outputs.find(theme);
    if (it == result.outputs.end()) continue;
    const runs::ThemeRun& r = it->second;
    if (r.outcome == runs::Outcome::ok && r.png) {
      shown[theme] = {{"width", r.width}, {"height", r.height}, {"canvas", r.canvas}, {"url", plot_url(*t, theme)}};
    } else {
      cancelled = cancelled || r.outcome == runs::Outcome::cancelled;
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
  const runs::OutcomeRow& row = runs::outcome_row(failed ? failed->outcome : runs::Outcome::no_output);
  if (row.host) return s.fail(t, std::string(row.turn_code));
  std::string why = failed && !failed->message.empty() ? failed->message
                    : failed                            ? std::string(row.sentence)
                                                        : "The plot made no image.";
  if (row.turn_end == runs::TurnEnd::refused) return s.refuse(t, std::string(row.turn_code), why);
  s.emit(t, "message", {{"text", why}});
  s.fail(t, std::string(row.turn_code));
}

// The render as a RunningAction: each theme drawn by the service's Renderer.
class PlotAction final : public RunningAction {
 public:
  PlotAction(TurnService& s, const std::shared_ptr<Turn>& t, Plan plan, std::shared_ptr<const runs::RenderRequest> req)
      : RunningAction(s, t, std::move(plan)), req_(std::move(req)) {}

 private:
  void start_run(double slot_wait) override {
    auto self = std::static_pointer_cast<PlotAction>(shared_from_this());
    render_ = s.renderer->render(*req_, [self, slot_wait](runs::RenderResult result) {
      // Every theme's run gets its ledger row, whatever happens to the turn: the rows /render books
      // (a theme cancelled before it started is refused; a failed one keeps measured/limit).
      runs::book_render_rows(self->s.app.store, self->plan.who, result, slot_wait);
      self->result_ = std::move(result);
      self->finish();
    });
  }
  void cancel_run() override { render_.cancel(); }
  void end_turn(const std::shared_ptr<Turn>& t) override { render_done(s, t, req_->themes, result_); }

  const std::shared_ptr<const runs::RenderRequest> req_;
  runs::RenderHandle render_;
  runs::RenderResult result_;
};

// The plot action once its data.csv is known: its run's ledger identity, then its steps.
void start_plot(TurnService& s, const std::shared_ptr<Turn>& t, const std::shared_ptr<runs::RenderRequest>& req) {
  RunningAction::Plan plan{runs::RunWho{req->job_id, t->user, t->session_id, t->id,
                                        runs::runtime_id(s.app.runtime_for(req->library)), req->library},
                           store::RunKind::render, store::TurnAction::plot, "rendering"};
  std::make_shared<PlotAction>(s, t, std::move(plan), req)->book();
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
  if (runs::Outcome support = runs::render_support(action.library, s.app.runtime_for(action.library), s.app.figures);
      support != runs::Outcome::ok)
    return s.fail(t, std::string(runs::to_string(support)));
  auto req = std::make_shared<runs::RenderRequest>();
  req->job_id = plot_job_id(t->id);
  req->source = action.code;
  req->library = action.library;
  req->themes = action.themes;
  req->timeout_s = s.cfg.render_timeout_s;
  // Python plot code may read the session's latest dataset version as data.csv (a JavaScript
  // snippet's page has no files).
  if (runs::render_mode(req->library) == runs::RenderMode::snippet) return start_plot(s, t, req);
  TurnService* sp = &s;
  s.app.store.run(
      "read the latest dataset version",
      [id = t->session_id](store::Db& db) { return store::datasets::get(db, id, 0); },
      [sp, t, req](store::Stored<std::optional<store::DatasetVersion>> latest) {
        if (t->ending()) return;
        if (!latest.ok()) {
          log_event("turn_failed", {{"turn", t->id}, {"class", "StoreError"}, {"code", latest.code}});
          return sp->fail(t, std::string(store_failure_code(latest.code)));
        }
        if (*latest.value) req->data_csv = (*latest.value)->csv;
        start_plot(*sp, t, req);
      });
}

}  // namespace plotq::server
