// One ledger row per sandbox run, refused or not (store/ledger.hpp holds the table).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "runs/outcome.hpp"
#include "sandbox/job.hpp"
#include "store/exec.hpp"
#include "store/ledger.hpp"

namespace plotq::runs {

struct RunWho {
  std::string job_id;
  std::string user_id;
  std::optional<std::string> session_id;
  std::optional<std::string> turn_id;
  // The runtime the run used (runs/runtime.hpp: its id), recorded with the row; nullopt when the
  // runtime's manifest could not be read.
  std::optional<std::string> runtime_id;
  // A render's plotting library, for the runs metric's label (runs/run_metrics.hpp); empty for data.
  std::string library;
};

// outcome: ok -> ok; a refusal before or instead of running (validation, guard_refused,
// exec_denied, sandbox_unavailable, low_memory) -> refused with that code; anything else -> failed.
store::LedgerEntry ledger_row(const RunWho& who, store::RunKind kind, const sandbox::JobResult& job,
                              Outcome outcome, double slot_wait_s, std::optional<std::string> theme = std::nullopt);

// A run refused before any sandbox started (quota, capacity, runtime missing): still a ledger row.
store::LedgerEntry refused_row(const RunWho& who, store::RunKind kind, Outcome code, double slot_wait_s = 0,
                               std::optional<std::string> theme = std::nullopt);

}  // namespace plotq::runs

namespace plotq::runs {
struct RenderResult;
// One ledger row per theme of a render (kind render), each with its own outcome, booked in one
// transaction together with what `keep` stores on that transaction's connection (POST /render's
// answer for its retries): all of it or none. then(booked) runs on the loop (through `store`: at
// once on SQLite); booked false, logged as ledger_write_failed, when the store refused it.
void book_render_rows(store::Exec& store, const RunWho& who, const RenderResult& result, double slot_wait_s,
                      std::function<void(store::Db&)> keep = {}, std::function<void(bool booked)> then = {});
}  // namespace plotq::runs
