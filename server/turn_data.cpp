// A turn's data action: daily data run booked -> the turn's slot taken (queued with status{queued}
// while it waits) -> status{running} -> the snippet in the sandbox's data mode -> its table parsed
// like a paste, a number or date column required -> the session's next dataset version ->
// dataset{...} -> message -> done. Every sentence is plotq's own, never the snippet's output.
#include "common/log.hpp"
#include "runs/data_runner.hpp"
#include "runs/runtime.hpp"
#include "server/dataset_json.hpp"
#include "server/turn_service.hpp"
#include "store/datasets.hpp"
#include "store/ledger.hpp"
#include "store/turns.hpp"
#include "table/csv.hpp"
#include "table/parse.hpp"

namespace plotq::server {
namespace {

// Outcomes that are the host's trouble, not the snippet's.
bool host_failure(const std::string& o) {
  return o == "sandbox_unavailable" || o == "low_memory" || o == "launcher" || o == "io" || o == "stuck" ||
         o == "exec_denied" || o == "harness_error" || o == "internal_error";
}

void data_done(TurnService& s, const std::shared_ptr<Turn>& t, const runs::DataRunResult& r, const std::string& code) {
  t->stop_work = nullptr;
  if (t->ending()) return;
  const std::string& o = r.outcome;
  if (o == "cancelled") return s.fail(t, t->stop_reason.empty() ? "cancelled" : t->stop_reason);
  if (o == "validation" || o == "guard_refused") return s.refuse(t, "invalid_code", runs::describe(r));
  if (host_failure(o)) return s.fail(t, "unavailable");
  if (o != "ok" || !r.csv_text) {
    s.emit(t, "message", {{"text", runs::describe(r)}});
    return s.fail(t, "run_failed");
  }
  // The table is read like a paste: the same parser, caps and canonical CSV.
  table::ParseResult parsed = table::parse_table(*r.csv_text);
  if (const auto* err = std::get_if<table::ParseError>(&parsed)) {
    s.emit(t, "message", {{"text", "The table the code made could not be read (" + err->code + ")."}});
    return s.fail(t, "run_failed");
  }
  const table::Table& tab = std::get<table::Table>(parsed);
  if (!tab.has_number_or_date_column()) return s.refuse(t, "no_number_column");

  store::NewDatasetVersion v;
  v.session_id = t->session_id;
  v.source = store::DatasetSource::code;
  v.csv = table::write_csv(tab);
  v.code = code;
  v.rows = static_cast<std::int64_t>(tab.row_count());
  v.cols = static_cast<std::int64_t>(tab.column_count());
  v.turn_id = t->id;
  v.job_id = t->id + "-data-" + std::to_string(t->data_runs);
  store::DatasetVersionInfo info = store::datasets::add_next_version(s.app.db, v, store::now_unix());

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

}  // namespace

void run_data_action(TurnService& s, const std::shared_ptr<Turn>& t, const TurnAction& action) {
  if (t->data_runs >= s.cfg.data_runs_per_turn) return s.refuse(t, "turn_run_limit");
  runs::RunWho who{t->id + "-data-" + std::to_string(t->data_runs + 1), t->user, t->session_id, t->id,
                   runs::runtime_id(*s.app.runtime)};
  if (auto code = book_run(s.app.db, s.cfg, t->user, store::TurnAction::data, store::now_unix())) {
    s.ledger_refused(who, store::RunKind::data, *code);
    return s.refuse(t, *code);
  }
  ++t->data_runs;
  auto code = std::make_shared<const std::string>(action.code);
  TurnService* sp = &s;
  s.take_slot(t, who, store::RunKind::data, [sp, who, code](const std::shared_ptr<Turn>& turn) {
    sp->emit(turn, "status", {{"step", "running"}, {"attempt", 1}});
    std::weak_ptr<Turn> weak = turn;
    sandbox::JobHandle handle = runs::run_data_job(
        sp->app.launcher, sp->app.db, who, *code, sp->cfg.data_timeout_s, TurnService::waited(*turn),
        [sp, weak, code](runs::DataRunDone done) {
          auto t2 = weak.lock();
          if (!t2) return;
          try {
            data_done(*sp, t2, done.result, *code);
          } catch (const std::exception& e) {
            log_event("turn_failed", {{"turn", t2->id}, {"class", typeid(e).name()}});
            sp->fail(t2, "internal");
          }
        });
    turn->stop_work = [handle]() mutable { handle.cancel(); };  // the result then says cancelled
  });
}

}  // namespace plotq::server
