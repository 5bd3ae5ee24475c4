#include "runs/ledger_row.hpp"

#include "common/log.hpp"
#include "runs/outcome.hpp"
#include "runs/render_job.hpp"
#include "runs/run_metrics.hpp"
#include "store/error.hpp"
#include "store/time.hpp"
#include "store/write_tx.hpp"

namespace plotq::runs {

store::LedgerEntry ledger_row(const RunWho& who, store::RunKind kind, const sandbox::JobResult& job,
                              Outcome outcome, double slot_wait_s, std::optional<std::string> theme) {
  store::LedgerEntry e;
  e.job_id = who.job_id;
  e.kind = kind;
  e.user_id = who.user_id;
  e.session_id = who.session_id;
  e.turn_id = who.turn_id;
  e.runtime_id = who.runtime_id;
  e.theme = std::move(theme);
  e.created_at = store::now_unix();
  e.slot_wait_s = slot_wait_s;
  e.wall_s = job.wall_s;
  e.cpu_s = job.cpu_s;
  e.exit_code = job.exit_code;
  e.signal = job.signal;
  e.timed_out = job.timed_out;
  e.measured = job.measured;
  e.limit = job.limit;
  if (job.max_rss_mb > 0) e.max_rss_mb = job.max_rss_mb;
  e.attempts = job.attempts > 0 ? job.attempts : 1;
  const std::string name(to_string(outcome));
  if (outcome == Outcome::ok) {
    e.outcome = store::RunOutcome::ok;
  } else if (outcome_row(outcome).refusal) {
    e.outcome = store::RunOutcome::refused;
    e.refusal_code = name;
    e.reason = name;
  } else {
    e.outcome = store::RunOutcome::failed;
    e.reason = name;
  }
  return e;
}

store::LedgerEntry refused_row(const RunWho& who, store::RunKind kind, Outcome code, double slot_wait_s,
                               std::optional<std::string> theme) {
  sandbox::JobResult none;
  none.attempts = 0;
  store::LedgerEntry e = ledger_row(who, kind, none, code, slot_wait_s, std::move(theme));
  e.outcome = store::RunOutcome::refused;
  e.refusal_code = std::string(to_string(code));
  e.reason = e.refusal_code;
  e.attempts = 1;
  return e;
}

void book_render_rows(store::Exec& store, const RunWho& who, const RenderResult& result, double slot_wait_s,
                      std::function<void(store::Db&)> keep, std::function<void(bool)> then) {
  auto rows = std::make_shared<std::vector<store::LedgerEntry>>();
  for (const auto& [theme, run] : result.outputs) {
    store::LedgerEntry e = run.job.attempts == 0 && run.outcome != Outcome::ok
                               ? refused_row(who, store::RunKind::render, run.outcome, slot_wait_s, theme)
                               : ledger_row(who, store::RunKind::render, run.job, run.outcome, slot_wait_s, theme);
    if (run.outcome != Outcome::ok && !outcome_row(run.outcome).refusal) {
      e.measured = run.measured ? run.measured : e.measured;
      e.limit = run.limit ? run.limit : e.limit;
    }
    rows->push_back(std::move(e));
  }
  store.run(
      "book render rows",
      [rows, keep = std::move(keep)](store::Db& db) {
        store::WriteTx tx(db, "render_rows");
        for (const auto& e : *rows) store::ledger::insert(db, e);
        if (keep) keep(db);
        tx.commit();
      },
      [rows, who, then = std::move(then)](store::Stored<void> booked) {
        if (booked.ok()) {
          for (const auto& e : *rows) count_run(e, who.library);
        } else {
          log_event("ledger_write_failed", {{"job_id", who.job_id}, {"code", booked.code}});
        }
        if (then) then(booked.ok());
      },
        store::Lane::any, store.outage_wait());
}

}  // namespace plotq::runs
