// POST /render, POST /render/{job_id}/cancel and GET /status: the assistant service's renderer API.
// Same caller check, queue, idempotency and ledger as /run-data; one sandbox run per theme.
#include <chrono>

#include <boost/asio/post.hpp>

#include "common/base64.hpp"
#include "common/log.hpp"
#include "queue/render_queue.hpp"
#include "runs/outcome.hpp"
#include "runs/ledger_row.hpp"
#include "runs/libraries.hpp"
#include "runs/render_job.hpp"
#include "runs/runtime.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "sandbox/watchdog.hpp"
#include "server/app.hpp"
#include "server/cluster_node.hpp"
#include "server/job_claim.hpp"
#include "server/job_registry.hpp"
#include "server/route_bodies.hpp"
#include "server/wire.hpp"
#include "store/idempotency.hpp"
#include "store/time.hpp"

namespace plotq::server {
namespace {

using jobs::Clock;
using jobs::opt;
using jobs::round3;
using jobs::seconds_since;


nlohmann::json theme_json(const runs::ThemeRun& t) {
  return {
      {"exit_code", opt(t.exit_code)},
      {"timed_out", t.timed_out},
      {"png_base64", t.png ? nlohmann::json(base64_encode(*t.png)) : nlohmann::json(nullptr)},
      {"width", t.png ? nlohmann::json(t.width) : nlohmann::json(nullptr)},
      {"height", t.png ? nlohmann::json(t.height) : nlohmann::json(nullptr)},
      // "exact" (3200x1800 or 2400x2400 within 16 px) or "off": any PNG the plot drew is a render.
      {"canvas", t.png && !t.canvas.empty() ? nlohmann::json(t.canvas) : nlohmann::json(nullptr)},
      {"stderr_tail", t.message},
      {"wall_s", round3(t.wall_s)},
      {"attempts", std::max(1, t.attempts)},
      {"reason", t.outcome == runs::Outcome::ok ? nlohmann::json(nullptr) : nlohmann::json(runs::to_string(t.outcome))},
      {"measured", opt(t.measured)},
      {"limit", opt(t.limit)},
      {"error", t.error_class || t.error_line
                    ? nlohmann::json{{"class", opt(t.error_class)}, {"line", opt(t.error_line)}}
                    : nlohmann::json(nullptr)},
      {"max_rss_mb", t.max_rss_mb > 0 ? nlohmann::json(std::round(t.max_rss_mb * 10) / 10) : nlohmann::json(nullptr)},
      {"cpu_s", round3(t.cpu_s)},
  };
}

}  // namespace

namespace jobs {
void run_render_here(App& app, const std::shared_ptr<RunningJob>& job, const nlohmann::json& spec) {
  const std::string user = spec.at("user").get<std::string>();
  const std::string source = spec.at("source").get<std::string>();
  const std::string library = spec.at("library").get<std::string>();
  const std::vector<std::string> themes = spec.at("themes").get<std::vector<std::string>>();
  const double timeout = spec.at("timeout_s").get<double>();
  const std::string data_csv = spec.value("data_csv", "");
  runs::RunWho who{job->job_id, user, std::nullopt, std::nullopt, runs::runtime_id(app.runtime_for(library)), library};
  auto started = Clock::now();
  struct Run {
    queue::Ticket ticket;
    queue::SlotLease lease;
    runs::RenderHandle handle;
    std::unique_ptr<runs::Renderer> renderer;
    bool running = false;
  };
  auto run = std::make_shared<Run>();
  job->state = run;
  std::weak_ptr<RunningJob> weak_job = job;
  std::weak_ptr<Run> weak_run = run;

  auto fail_before_start = [&app, weak_job, who, themes, started](runs::Outcome outcome) {
    auto j = weak_job.lock();
    if (!j || j->finished) return;
    const std::string code(runs::to_string(outcome));  // cancelled, capacity: error codes of the same names
    runs::book_render_rows(app.store, who, runs::refused_render(themes, outcome), seconds_since(started), jobs::forget_in_tx(*j, code),
                           [&app, weak_job, code](bool) {
                             auto j2 = weak_job.lock();
                             if (j2 && !j2->finished) app.jobs.finish_error(j2, code);
                           });
  };
  job->cancel = [weak_run, fail_before_start] {
    auto r = weak_run.lock();
    if (!r) return;
    if (r->running) r->handle.cancel();
    else {
      r->ticket.cancel();
      fail_before_start(runs::Outcome::cancelled);
    }
  };
  runs::RenderRequest rr{job->job_id, source, library, themes, timeout, data_csv};
  queue::Callbacks cb;
  cb.on_position = [](queue::Position) {};
  cb.on_refused = [fail_before_start](std::string_view) { fail_before_start(runs::Outcome::capacity); };
  cb.on_expired = [fail_before_start] { fail_before_start(runs::Outcome::capacity); };
  cb.on_granted = [&app, weak_run, weak_job, who, started, rr = std::move(rr)](queue::SlotLease lease) mutable {
    auto r = weak_run.lock();
    if (!r) return;
    r->lease = std::move(lease);
    r->running = true;
    double slot_wait = seconds_since(started);
    r->renderer = std::make_unique<runs::Renderer>(app.ioc, app.launcher, app.figures, app.config.render,
                                                   app.runtime);
    r->handle = r->renderer->render(std::move(rr), [&app, weak_run, weak_job, who, slot_wait,
                                                    started](runs::RenderResult result) {
      if (auto rr2 = weak_run.lock()) {
        rr2->lease.release();
        // The Renderer's private dir and its descriptor go now, not when the job entry expires
        // (the entry outlives the render for joiners); posted: this runs inside the Renderer.
        boost::asio::post(app.ioc, [weak_run] {
          if (auto rr3 = weak_run.lock()) rr3->renderer.reset();
        });
      }
      auto j = weak_job.lock();
      if (!j || j->finished) {
        runs::book_render_rows(app.store, who, result, slot_wait);
        return;
      }
      // One theme's host outcome makes the whole answer a host error: not kept, a retry runs again.
      std::string_view code;
      for (const auto& [theme, t] : result.outputs)
        if (const runs::OutcomeRow& o = runs::outcome_row(t.outcome); o.host) code = o.job_error;
      nlohmann::json answer;
      if (code.empty()) {
        nlohmann::json outputs = nlohmann::json::object();
        for (const auto& [theme, t] : result.outputs) outputs[theme] = theme_json(t);
        answer = {
            {"job_id", j->job_id},
            {"outputs", outputs},
            {"timings", {{"slot_wait_s", round3(slot_wait)}, {"total_s", round3(seconds_since(started))}}},
            {"version", PLOTQ_VERSION},
            {"mem_available_mb", opt(sandbox::mem_available_mb())},
        };
        log_event("render", {{"job_id", j->job_id}, {"themes", result.outputs.size()}});
      }
      // The rows and the kept answer (or the forgotten claim) in one transaction.
      runs::book_render_rows(app.store, who, result, slot_wait,
                             code.empty() ? jobs::keep_in_tx(*j, answer) : jobs::forget_in_tx(*j, code),
                             [&app, j, answer, code = std::string(code)](bool booked) {
                               jobs::answer_booked(app, j, booked, answer, code);
                             });
    });
  };
  run->ticket = app.queue.submit(queue::Holder{queue::HolderKind::job, user, "/render"}, std::move(cb));
}
}  // namespace jobs

void register_render_routes(App& app) {
  RouteOptions opts;
  opts.body_limit = kRenderBodyLimit;
  app.router.post("/render", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res, Need::assistant);
    if (!caller || refuse_while_draining(app, *res)) return;
    ParsedRender parsed = parse_render_body(req.body);
    if (!parsed.body) return res->send_error(parsed.error);
    const RenderBody& body = *parsed.body;
    const std::vector<std::string>& themes = body.themes;

    const std::string kind = store::idempotency::kind_for_themes(themes);
    runs::RunWho who{body.job_id, caller->user, std::nullopt, std::nullopt, runs::runtime_id(app.runtime_for(body.library)),
                     body.library};
    // A library plotq does not render, or not in the language asked (invalid_library, 422), or one
    // this runtime lacks (runtime_unavailable, 503) answers before any sandbox starts, and is
    // still a ledger row.
    const runs::Library* lib = runs::find_library(body.library);
    runs::Outcome support = runs::render_support(body.library, app.runtime_for(body.library), app.figures);
    if (support == runs::Outcome::ok && body.language && lib && lib->language != *body.language)
      support = runs::Outcome::invalid_library;
    if (support != runs::Outcome::ok) {
      // Answered once its rows are booked, as every other answer here: a client that reads the
      // ledger after the answer finds them on either engine (PostgreSQL books off the loop).
      runs::book_render_rows(app.store, who, runs::refused_render(themes, support), 0, {},
                             [res, support](bool) { res->send_error(runs::to_string(support)); });
      return;
    }

    nlohmann::json spec = {{"user", caller->user},     {"source", body.source},       {"library", body.library},
                           {"themes", body.themes},     {"timeout_s", body.timeout_s}, {"data_csv", body.data_csv}};
    jobs::claim(app, res, body.job_id, kind, body.parsed, "render_joined",
                [&app, spec](std::shared_ptr<RunningJob> job) { jobs::run_job(app, job, "render", spec); });
  }, opts);

  app.router.post("/render/{job_id}/cancel", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res, Need::assistant);
    if (!caller) return;
    std::string job_id(req.param("job_id"));
    if (!wire::valid_job_id(job_id)) return res->send_error("invalid_job");
    int n = app.jobs.cancel_all(job_id);
    // In a cluster the job may wait or run on another node: the queue passes the cancel on.
    if (app.cluster && n == 0)
      return app.cluster->cancel_job(job_id, [res, job_id](int m) {
        log_event("render_cancel", {{"job_id", job_id}, {"cancelled", m}});
        res->send_json(200, {{"cancelled", m}});
      });
    log_event("render_cancel", {{"job_id", job_id}, {"cancelled", n}});
    res->send_json(200, {{"cancelled", n}});
  });

  app.router.get("/status", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res, Need::assistant);
    if (!caller) return;
    auto q = app.queue.status();
    nlohmann::json status = {
        {"name", "plotq-renderer"},
        {"version", PLOTQ_VERSION},
        {"in_flight", q.in_flight},
        {"waiting", q.waiting},
        {"stuck", app.launcher.stuck()},
        {"mem_available_mb", opt(sandbox::mem_available_mb())},
        {"sandbox", app.launcher.ready()},
        {"figures", app.figures != nullptr},
        // The runtime's id and each package's version (runtime/venv/plotq-runtime.json).
        {"runtime", runs::runtime_json(*app.runtime)},
        // The JavaScript snippets' libraries (runtime/js/plotq-js-runtime.json).
        {"js_runtime", runs::runtime_json(*app.js_runtime)},
        // R and its packages (runtime/r/plotq-r-runtime.json, checked against what is installed).
        {"r_runtime", runs::runtime_json(runs::r_runtime())},
    };
    // A cluster node names the live nodes and where they listen: `plotq sweep --server` spreads
    // its files over them.
    if (app.cluster) status["cluster"] = app.cluster->status_json();
    res->send_json(200, status);
  });
}

}  // namespace plotq::server
