#include "server/job_claim.hpp"

#include "common/log.hpp"
#include "server/errors.hpp"
#include "store/error.hpp"
#include "store/idempotency.hpp"
#include "store/time.hpp"

namespace plotq::server::jobs {

std::shared_ptr<RunningJob> claim(App& app, const std::shared_ptr<Responder>& res, const std::string& job_id,
                                  const std::string& kind, const nlohmann::json& body, const char* joined_event) {
  std::string fp = store::idempotency::fingerprint(body.dump());
  store::Claim claim;
  try {
    claim = store::idempotency::begin(app.db, job_id, kind, fp, store::now_unix());
    if (claim.state == store::ClaimState::running_same && !app.jobs.find(job_id, kind)) {
      // A running record without a job in this process can never finish: take it over.
      store::idempotency::forget(app.db, job_id, kind);
      claim = store::idempotency::begin(app.db, job_id, kind, fp, store::now_unix());
    }
  } catch (const std::exception& e) {
    res->send_error(store_failure_code(e));
    return nullptr;
  }
  switch (claim.state) {
    case store::ClaimState::conflict:
      res->send_error("job_conflict");
      return nullptr;
    case store::ClaimState::done_same: {
      auto stored = nlohmann::json::parse(claim.response, nullptr, false);
      if (stored.is_discarded()) res->send_error("internal");
      else res->send_json(200, stored);
      return nullptr;
    }
    case store::ClaimState::running_same:
      JobRegistry::add_waiter(app.jobs.find(job_id, kind), res);
      log_event(joined_event, {{"job_id", job_id}});
      return nullptr;
    case store::ClaimState::started:
      break;
  }
  auto job = app.jobs.add(job_id, kind);
  JobRegistry::add_waiter(job, res);
  return job;
}

void keep_in_tx(App& app, const RunningJob& j, const nlohmann::json& answer) {
  store::idempotency::complete(app.db, j.job_id, j.kind, answer.dump(), store::now_unix());
}

void forget_in_tx(App& app, const RunningJob& j) { store::idempotency::forget(app.db, j.job_id, j.kind); }

void answer_booked(App& app, const std::shared_ptr<RunningJob>& j, bool booked, const nlohmann::json& answer,
                   std::string_view error_code) {
  if (!booked) {
    log_event("idempotency_complete_failed", {{"job_id", j->job_id}, {"kind", j->kind}});
    try {
      store::idempotency::forget(app.db, j->job_id, j->kind);
    } catch (const store::StoreError&) {
      // Still running in the store: a retry in this process takes it over (claim), the next
      // start-up forgets it (idempotency::forget_running).
    }
  }
  if (!error_code.empty()) return app.jobs.finish_error(j, error_code);
  app.jobs.finish(j, 200, answer);
}

}  // namespace plotq::server::jobs
