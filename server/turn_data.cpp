// A turn's data action: daily data run booked -> the turn's slot taken (queued with status{queued}
// while it waits) -> status{running} -> the snippet in the sandbox's data mode -> its table parsed
// like a paste, a number or date column required -> the session's next dataset version ->
// dataset{...} -> message -> done. Every sentence is plotq's own, never the snippet's output.
#include "common/log.hpp"
#include "runs/data_runner.hpp"
#include "runs/dataset_version.hpp"
#include "runs/outcome.hpp"
#include "runs/runtime.hpp"
#include "server/dataset_json.hpp"
#include "server/errors.hpp"
#include "server/turn_service.hpp"
#include "store/datasets.hpp"
#include "store/ledger.hpp"
#include "store/turns.hpp"
#include "store/exec.hpp"

namespace plotq::server {
namespace {

void dataset_made(TurnService& s, const std::shared_ptr<Turn>& t, const std::variant<table::ParseError, runs::AddedVersion>& added,
                  const std::string& code);

void data_done(TurnService& s, const std::shared_ptr<Turn>& t, const runs::DataRunResult& r, const std::string& code) {
  if (t->ending()) return;
  const runs::Outcome o = r.outcome;
  const runs::OutcomeRow& row = runs::outcome_row(o);
  if (o == runs::Outcome::cancelled) return s.fail(t, t->stop_reason.empty() ? "cancelled" : t->stop_reason);
  if (row.host) return s.fail(t, std::string(row.turn_code));
  if (row.turn_end == runs::TurnEnd::refused) return s.refuse(t, std::string(row.turn_code), runs::describe(r));
  if (o != runs::Outcome::ok || !r.csv_text) {
    s.emit(t, "message", {{"text", runs::describe(r)}});
    return s.fail(t, o == runs::Outcome::ok ? "run_failed" : std::string(row.turn_code));
  }
  // The table is read like a paste: the same parser, caps and canonical CSV (runs/dataset_version).
  runs::DatasetOrigin origin{t->session_id, store::DatasetSource::code, code, t->id,
                             data_job_id(t->id, t->data_runs), true};
  using Added = std::variant<table::ParseError, runs::AddedVersion>;
  TurnService* sp = &s;
  s.app.store.run(
      "store a data run's dataset version",
      [csv = *r.csv_text, origin](store::Db& db) -> Added { return runs::add_table_version(db, csv, origin); },
      [sp, t, code](store::Stored<Added> added) {
        if (t->ending()) return;
        if (!added.ok()) {
          log_event("turn_failed", {{"turn", t->id}, {"class", "StoreError"}, {"code", added.code}});
          return sp->fail(t, std::string(store_failure_code(added.code)));
        }
        dataset_made(*sp, t, *added.value, code);
      });
}

// The new version's dataset and message events, or the reason the table could not be one.
void dataset_made(TurnService& s, const std::shared_ptr<Turn>& t, const std::variant<table::ParseError, runs::AddedVersion>& added,
                  const std::string& code) {
  if (const auto* err = std::get_if<table::ParseError>(&added)) {
    if (err->code == "no_number_column") return s.refuse(t, "no_number_column");
    s.emit(t, "message", {{"text", "The table the code made could not be read (" + err->code + ")."}});
    return s.fail(t, "run_failed");
  }
  const table::Table& tab = std::get<runs::AddedVersion>(added).table;
  const store::DatasetVersionInfo& info = std::get<runs::AddedVersion>(added).info;

  const auto& cfg = s.cfg;
  s.emit(t, "dataset",
         dataset_event(info.version, tab, code, static_cast<std::size_t>(cfg.preview_rows),
                       static_cast<std::size_t>(cfg.preview_cell_chars), s.app.config.http.stream_buffer_bytes / 2));
  s.emit(t, "message",
         {{"text", "Made dataset version " + std::to_string(info.version) + " from the code: " +
                       std::to_string(info.rows) + (info.rows == 1 ? " row" : " rows") + " and " +
                       std::to_string(info.cols) + (info.cols == 1 ? " column" : " columns") +
                       ". Check the table and confirm it in the data panel."}});
  s.complete(t);
}

// The data run as a RunningAction: the snippet in the sandbox's data mode; the data runner books
// the run's ledger row before it answers.
class DataAction final : public RunningAction {
 public:
  DataAction(TurnService& s, const std::shared_ptr<Turn>& t, Plan plan, std::string code)
      : RunningAction(s, t, std::move(plan)), code_(std::move(code)) {}

 private:
  void start_run(double slot_wait) override {
    auto self = std::static_pointer_cast<DataAction>(shared_from_this());
    job_ = runs::run_data_job(s.app.launcher, s.app.store, plan.who, code_, s.cfg.data_timeout_s, slot_wait,
                              [self](runs::DataRunDone done) {
                                self->result_ = std::move(done.result);
                                self->finish();
                              });
  }
  void cancel_run() override { job_.cancel(); }  // the result then says cancelled
  void end_turn(const std::shared_ptr<Turn>& t) override { data_done(s, t, result_, code_); }

  const std::string code_;
  sandbox::JobHandle job_;
  runs::DataRunResult result_;
};

}  // namespace

void run_data_action(TurnService& s, const std::shared_ptr<Turn>& t, const TurnAction& action) {
  if (t->data_runs >= s.cfg.data_runs_per_turn) return s.refuse(t, "turn_run_limit");
  RunningAction::Plan plan{runs::RunWho{data_job_id(t->id, t->data_runs + 1), t->user, t->session_id, t->id,
                                        runs::runtime_id(*s.app.runtime), {}},
                           store::RunKind::data, store::TurnAction::data, "running"};
  ++t->data_runs;  // a refused booking ends the turn, so counting it first changes nothing
  std::make_shared<DataAction>(s, t, std::move(plan), action.code)->book();
}

}  // namespace plotq::server
