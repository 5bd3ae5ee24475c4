// POST /run-data: the assistant service's data run. Closed wire model, caller check, idempotency by
// (job_id, "data"), the shared render queue, the sandbox's data mode, one ledger row per run.
#include <chrono>

#include "common/log.hpp"
#include "queue/render_queue.hpp"
#include "runs/outcome.hpp"
#include "runs/data_runner.hpp"
#include "runs/run_metrics.hpp"
#include "runs/runtime.hpp"
#include "sandbox/watchdog.hpp"
#include "server/app.hpp"
#include "server/job_claim.hpp"
#include "server/job_registry.hpp"
#include "server/route_bodies.hpp"
#include "store/idempotency.hpp"
#include "store/ledger.hpp"
#include "store/time.hpp"

namespace plotq::server {
namespace {

using jobs::Clock;
using jobs::opt;
using jobs::round3;
using jobs::seconds_since;

// The DataRunResponse (docs/api.md). stderr_tail is plotq's own sentence: nothing the snippet
// printed reaches the caller.
nlohmann::json data_run_response(const runs::DataRunResult& r, double slot_wait_s, double total_s) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : r.findings) findings.push_back({{"code", f.code}, {"line", f.line}, {"message", f.message}});
  nlohmann::json error = nullptr;
  if (r.error_class || r.error_line) error = {{"class", opt(r.error_class)}, {"line", opt(r.error_line)}};
  return {
      {"exit_code", opt(r.job.exit_code)},
      {"timed_out", r.job.timed_out},
      {"reason", r.outcome == runs::Outcome::ok ? nlohmann::json(nullptr) : nlohmann::json(runs::to_string(r.outcome))},
      {"measured", opt(r.measured)},
      {"limit", opt(r.limit)},
      {"csv_text", opt(r.csv_text)},
      {"rows", opt(r.rows)},
      {"columns", opt(r.columns)},
      {"error", error},
      {"findings", findings},
      {"stderr_tail", runs::describe(r)},
      {"wall_s", round3(r.job.wall_s)},
      {"attempts", std::max(1, r.job.attempts)},
      {"timings", {{"slot_wait_s", round3(slot_wait_s)}, {"total_s", round3(total_s)}}},
      {"version", PLOTQ_VERSION},
      {"mem_available_mb", opt(sandbox::mem_available_mb())},
  };
}

}  // namespace

namespace jobs {
void run_data_here(App& app, const std::shared_ptr<RunningJob>& job, const nlohmann::json& spec) {
  const std::string user = spec.at("user").get<std::string>();
  const std::string source = spec.at("source").get<std::string>();
  const double timeout = spec.at("timeout_s").get<double>();
  runs::RunWho who{job->job_id, user, std::nullopt, std::nullopt, runs::runtime_id(*app.runtime), {}};
  auto started = Clock::now();

  // Per-run state, owned by the registry entry; callbacks hold weak references only.
  struct Run {
    queue::Ticket ticket;
    queue::SlotLease lease;
    sandbox::JobHandle handle;
    bool running = false;
  };
  auto run = std::make_shared<Run>();
  job->state = run;
  std::weak_ptr<RunningJob> weak_job = job;
  std::weak_ptr<Run> weak_run = run;

  auto fail_before_start = [&app, weak_job, who, started](runs::Outcome outcome) {
    auto j = weak_job.lock();
    if (!j || j->finished) return;
    const std::string code(runs::to_string(outcome));  // cancelled, capacity: error codes of the same names
    store::LedgerEntry row = runs::refused_row(who, store::RunKind::data, outcome, seconds_since(started));
    app.store.run(
        "refuse a data run",
        [forget = jobs::forget_in_tx(*j, code), row](store::Db& db) {
          forget(db);
          try {
            store::ledger::insert(db, row);
            return true;
          } catch (const std::exception&) {
            return false;
          }
        },
        [&app, weak_job, row, code](store::Stored<bool> booked) {
          if (booked.ok() && *booked.value) runs::count_run(row, {});
          auto j2 = weak_job.lock();
          if (j2 && !j2->finished) app.jobs.finish_error(j2, code);
        });
  };
  job->cancel = [weak_run, fail_before_start] {
    auto r = weak_run.lock();
    if (!r) return;
    if (r->running) {
      r->handle.cancel();  // the result (reason cancelled) answers the waiters
    } else {
      r->ticket.cancel();
      fail_before_start(runs::Outcome::cancelled);
    }
  };

  queue::Callbacks cb;
  cb.on_position = [](queue::Position) {};
  cb.on_refused = [fail_before_start](std::string_view) { fail_before_start(runs::Outcome::capacity); };
  cb.on_expired = [fail_before_start] { fail_before_start(runs::Outcome::capacity); };
  cb.on_granted = [&app, weak_run, weak_job, who, started, source, timeout](queue::SlotLease lease) {
    auto r = weak_run.lock();
    if (!r) return;  // the run is gone: the lease's destructor returns the slot
    r->lease = std::move(lease);
    r->running = true;
    double slot_wait = seconds_since(started);
    // The answer is built and kept in the ledger row's transaction: a retry finds the answer of
    // every run the ledger counts, and a run without a kept answer is not counted.
    auto answer = std::make_shared<nlohmann::json>();
    r->handle = runs::run_data_job(
        app.launcher, app.store, who, source, timeout, slot_wait,
        [&app, weak_run, weak_job, answer](runs::DataRunDone done) {
          if (auto rr = weak_run.lock()) rr->lease.release();
          auto j = weak_job.lock();
          if (!j || j->finished) return;
          // A host outcome is not the job's answer: forgotten, so a retry runs the code again.
          const runs::OutcomeRow& o = runs::outcome_row(done.result.outcome);
          jobs::answer_booked(app, j, done.booked, *answer, o.host ? o.job_error : std::string_view{});
        },
        [weak_job, answer, slot_wait, started](const runs::DataRunDone& done) -> runs::StoreWork {
          auto j = weak_job.lock();
          if (!j || j->finished) return {};
          if (const runs::OutcomeRow& o = runs::outcome_row(done.result.outcome); o.host) return jobs::forget_in_tx(*j, o.job_error);
          *answer = data_run_response(done.result, slot_wait, seconds_since(started));
          return jobs::keep_in_tx(*j, *answer);
        });
  };
  run->ticket = app.queue.submit(queue::Holder{queue::HolderKind::job, user, "/run-data"}, std::move(cb));
}

}  // namespace jobs

void register_run_data_routes(App& app) {
  RouteOptions opts;
  opts.body_limit = kRunDataBodyLimit;
  app.router.post("/run-data", [&app](Request req, std::shared_ptr<Responder> res) {
    auto caller = check_caller(app.callers, req, *res, Need::assistant);
    if (!caller || refuse_while_draining(app, *res)) return;
    ParsedRunData parsed = parse_run_data_body(req.body);
    if (!parsed.body) return res->send_error(parsed.error);
    const RunDataBody& body = *parsed.body;
    nlohmann::json spec = {{"user", caller->user}, {"source", body.source}, {"timeout_s", body.timeout_s}};
    jobs::claim(app, res, body.job_id, "data", body.parsed, "run_data_joined",
                [&app, spec](std::shared_ptr<RunningJob> job) { jobs::run_job(app, job, "data", spec); });
  }, opts);
}

}  // namespace plotq::server
