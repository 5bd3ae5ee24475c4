// What /run-data and /render share before and after their job runs: the idempotency claim (answer
// a conflict, a stored answer or a join, else hand back a new RunningJob to run), and the helpers
// their answers are built with.
#pragma once
#include <chrono>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "server/app.hpp"
#include "server/job_registry.hpp"

namespace plotq::server::jobs {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
inline double round3(double v) { return std::round(v * 1000.0) / 1000.0; }
template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Claims (job_id, kind) for this request's payload. Returns nullptr after answering the request
// itself: 409 job_conflict, the stored answer, a join of the running job (log event `joined_event`),
// or 503 store_unavailable. Otherwise returns the new job (res already waits on it); the caller runs
// it and ends with app.jobs.finish / finish_error (and idempotency complete / forget).
std::shared_ptr<RunningJob> claim(App& app, const std::shared_ptr<Responder>& res, const std::string& job_id,
                                  const std::string& kind, const nlohmann::json& body, const char* joined_event);

// What a finished job stores, inside the transaction that books its ledger rows (runs::KeepWithRow,
// runs::book_render_rows): the answer kept for its retries, or, for a host outcome (a code from
// the outcome table's job_error), the claim forgotten so a retry runs the code again. Throws what
// the store throws, which refuses the rows too.
void keep_in_tx(App& app, const RunningJob& j, const nlohmann::json& answer);
void forget_in_tx(App& app, const RunningJob& j);

// Answers every waiter of the job once its rows are booked: `error_code` set, that job error;
// else 200 `answer`. When the store refused the rows and the answer (`booked` false: disk full,
// I/O), the answer still goes out, the failure is logged (`idempotency_complete_failed`) and the
// claim is forgotten, so a retry runs again instead of finding the key running for ever.
void answer_booked(App& app, const std::shared_ptr<RunningJob>& j, bool booked, const nlohmann::json& answer,
                   std::string_view error_code = {});

}  // namespace plotq::server::jobs
