// What /run-data and /render share before and after their job runs: the idempotency claim (answer
// a conflict, a stored answer or a join, else hand back a new RunningJob to run), and the helpers
// their answers are built with.
#pragma once
#include <chrono>
#include <functional>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "server/app.hpp"
#include "server/job_registry.hpp"
#include "store/exec.hpp"

namespace plotq::server::jobs {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
inline double round3(double v) { return std::round(v * 1000.0) / 1000.0; }
template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// Claims (job_id, kind) for this request's payload, through the store. Answers the request itself
// (409 job_conflict, the stored answer, a join of the running job (log event `joined_event`), or
// 503 store_unavailable), or calls run(job) on the loop with the new job (res already waits on it);
// the caller runs it and ends with app.jobs.finish / finish_error (and idempotency complete /
// forget). While one claim of a key is with the store, later requests for the key wait for it and
// then claim in turn, so two requests never both take over the same key.
void claim(App& app, const std::shared_ptr<Responder>& res, const std::string& job_id, const std::string& kind,
           const nlohmann::json& body, const char* joined_event,
           std::function<void(std::shared_ptr<RunningJob>)> run);

// What a finished job stores, inside the transaction that books its ledger rows (runs::KeepWithRow,
// runs::book_render_rows): the answer kept for its retries, or, for a host outcome (a code from
// the outcome table's job_error), the claim forgotten so a retry runs the code again. Made on the
// loop, run on the store's connection; throws what the store throws, which refuses the rows too.
// A job this node claimed from the cluster's queue ends its entry in the same transaction (fenced:
// a node that lost its lease changes nothing); a forgotten one leaves `code` for the node that took
// the request.
std::function<void(store::Db&)> keep_in_tx(const RunningJob& j, const nlohmann::json& answer);
std::function<void(store::Db&)> forget_in_tx(const RunningJob& j, std::string_view code);
// A kept answer that is an error ({"detail": code}: node_lost, kept so its code never runs again).
std::optional<std::string> kept_error(const nlohmann::json& answer);

// Where a newly claimed job runs: on one node, here; in a cluster, through the cluster's queue
// (ClusterNode::enqueue_job), on whichever node claims it. kind: data | render; spec: the request
// as the runner reads it (what a queue entry carries to another node).
void run_job(App& app, const std::shared_ptr<RunningJob>& job, const std::string& kind, nlohmann::json spec);
void run_here(App& app, const std::shared_ptr<RunningJob>& job, const std::string& kind, const nlohmann::json& spec);
// The runners (routes_run_data.cpp, routes_render.cpp): the job on this node's slot, its rows and
// kept answer, its waiters answered.
void run_data_here(App& app, const std::shared_ptr<RunningJob>& job, const nlohmann::json& spec);
void run_render_here(App& app, const std::shared_ptr<RunningJob>& job, const nlohmann::json& spec);

// Answers every waiter of the job once its rows are booked: `error_code` set, that job error;
// else 200 `answer`. When the store refused the rows and the answer (`booked` false: disk full,
// I/O), the answer still goes out, the failure is logged (`idempotency_complete_failed`) and the
// claim is forgotten, so a retry runs again instead of finding the key running for ever.
void answer_booked(App& app, const std::shared_ptr<RunningJob>& j, bool booked, const nlohmann::json& answer,
                   std::string_view error_code = {});

}  // namespace plotq::server::jobs
