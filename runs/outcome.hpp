// The one table of run outcomes. Every way a data run or a render theme can end is one `Outcome`
// with one row here, and every place that has to decide something about an outcome reads its row:
// the ledger (refused or failed), a chat turn (how it ends and with which code), /run-data and
// /render (kept as the answer, or an error answer that a retry runs again), the sweep (the file's
// outcome, or a stop of the sweep that --resume picks up) and the sentence a user reads when
// nothing more specific is known. Code compares enums; the wire name is read from the row
// (`to_string`) and a name from below is read in once (`parse_outcome`). Add an outcome here (enum
// and row, in the same place) and nowhere else.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "sandbox/job.hpp"

namespace plotq::runs {

// In the order of kOutcomes (a static_assert in outcome.cpp holds them together).
enum class Outcome : std::uint8_t {
  ok,
  // refused by a policy before or while the code ran
  validation, guard_refused, capacity, data_runs_exhausted, pipeline_runs_exhausted, runtime_unavailable,
  // the host's trouble or a stop from outside
  cancelled, sandbox_unavailable, exec_denied, low_memory, launcher, sandbox_lost, io, scratch_full, stuck,
  renderer_error,
  // the code ran and did not make what was asked
  timeout, cpu, memory, disk, files, crashed, nonzero_exit, output_too_large, output_rejected, invalid_job,
  harness_error, internal_error,
  // data mode
  snippet_error, snippet_exit, snippet_missing, no_df, not_dataframe, multiindex_columns, too_many_rows,
  too_many_columns, too_large, cell_too_long, cell_type, empty_table, duplicate_columns,
  // plot, figure and snippet modes
  plot_error, plot_exit, plot_missing, source_invalid, no_output, canvas_size, figure_invalid, draw_failed,
  no_webgl, blank, navigated, invalid_request, invalid_library,
  // anything else a layer below reports
  unknown,
};

// How a chat turn whose run ended so ends.
enum class TurnEnd {
  done,     // the action goes on (ok)
  refused,  // refusal{code, text}: plotq would not run this code, and says why
  failed,   // error{code}: the run was tried and did not make what was asked
};

struct OutcomeRow {
  Outcome outcome;
  std::string_view name;  // the wire name: the ledger's reason, the answer's outcome, the sweep's reason
  // The run says nothing about the code: the host's trouble (no sandbox, low memory, a failed fork,
  // a dead renderer) or a stop from outside (cancel). A turn does not blame the code; /run-data and
  // /render answer `job_error` and do not keep it as the job's answer, so a retry runs again; a
  // sweep stops (exit 1) instead of recording it as the file's outcome. Never set for an outcome
  // the code can bring about by itself, or a hostile file could stop every sweep it is in.
  bool host;
  bool refusal;                // the ledger books it refused (a policy said no), not failed
  TurnEnd turn_end;            // how a chat turn ends with it
  std::string_view turn_code;  // the code of that refusal or error ("" for ok)
  std::string_view job_error;  // host outcomes: the error code /run-data and /render answer with
  std::string_view sentence;   // what a user reads when the run has nothing more specific to say
};

// Every row, in the order docs/outcomes.md lists them (the enum's).
extern const OutcomeRow kOutcomes[];
extern const std::size_t kOutcomeCount;

const OutcomeRow& outcome_row(Outcome o);
std::string_view to_string(Outcome o);
// The outcome named `name`, if it has a row.
std::optional<Outcome> parse_outcome(std::string_view name);
// A name from a layer below: its outcome, or `unknown` (a failure of the code's run, never the
// host's, never a refusal), so a new reason from below is never taken for success.
Outcome outcome_named(std::string_view name);
// The sandbox's verdict on a job as a run outcome (every sandbox::Reason has a row of its name).
Outcome sandbox_outcome(sandbox::Reason reason);

// Write the wire name (test reports, log lines, JSON answers), never the enum's number.
std::ostream& operator<<(std::ostream& out, Outcome o);
void to_json(nlohmann::json& j, Outcome o);

// The outcomes table as Markdown (docs/outcomes.md is this, generated; a test compares them).
std::string outcomes_markdown();

}  // namespace plotq::runs
