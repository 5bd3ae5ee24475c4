#include "runs/outcome.hpp"

#include <iterator>

#include <nlohmann/json.hpp>
#include <ostream>

namespace plotq::runs {

namespace {
constexpr TurnEnd done = TurnEnd::done, refused = TurnEnd::refused, failed = TurnEnd::failed;
}  // namespace

// outcome, name, host, refusal, turn end, turn code, job error, sentence. The sentences of the data
// caps name the caps of sandbox/harness/table.py (one place with the harness: runs/README.md).
constexpr OutcomeRow kOutcomes[] = {
    {Outcome::ok, "ok", false, false, done, "", "", "The run finished."},

    // Refused by a policy before or while the code ran.
    {Outcome::validation, "validation", false, true, refused, "invalid_code", "", "The code was not run: it breaks the rules for data code."},
    {Outcome::guard_refused, "guard_refused", false, true, refused, "invalid_code", "",
     "The code tried something it may not do, so the run was stopped."},
    {Outcome::capacity, "capacity", false, true, failed, "capacity", "", "The queue is full; try again shortly."},
    {Outcome::data_runs_exhausted, "data_runs_exhausted", false, true, refused, "data_runs_exhausted", "", "Today's data runs are used up."},
    {Outcome::pipeline_runs_exhausted, "pipeline_runs_exhausted", false, true, refused, "pipeline_runs_exhausted", "", "Today's plot runs are used up."},
    {Outcome::runtime_unavailable, "runtime_unavailable", false, true, failed, "runtime_unavailable", "",
     "This plotting library cannot be rendered here."},

    // The host's trouble or a stop from outside: says nothing about the code.
    {Outcome::cancelled, "cancelled", true, false, failed, "cancelled", "cancelled", "The run was cancelled."},
    {Outcome::sandbox_unavailable, "sandbox_unavailable", true, true, failed, "unavailable", "sandbox_unavailable", "The sandbox cannot run here."},
    {Outcome::exec_denied, "exec_denied", true, true, failed, "unavailable", "sandbox_unavailable",
     "The sandbox could not arm its exec filter, so the code was not run."},
    {Outcome::low_memory, "low_memory", true, true, failed, "unavailable", "low_memory", "The host is low on memory; try again shortly."},
    {Outcome::launcher, "launcher", true, false, failed, "unavailable", "io", "The sandbox could not start the run."},
    {Outcome::sandbox_lost, "sandbox_lost", true, false, failed, "unavailable", "sandbox_lost",
     "The sandbox lost the run's process (its zygote died); try again."},
    {Outcome::io, "io", true, false, failed, "unavailable", "io", "A host I/O failure stopped the run."},
    {Outcome::scratch_full, "scratch_full", true, false, failed, "unavailable", "scratch_full",
     "The sandbox's scratch space is full; try again once space is freed."},
    {Outcome::stuck, "stuck", true, false, failed, "unavailable", "stuck", "A killed run was still alive on the host."},
    {Outcome::renderer_error, "renderer_error", true, false, failed, "unavailable", "renderer_failed", "The figure renderer failed."},

    // The code ran and did not make what was asked: its own outcome, kept as the answer.
    {Outcome::timeout, "timeout", false, false, failed, "run_failed", "", "The code did not finish within the time limit."},
    {Outcome::cpu, "cpu", false, false, failed, "run_failed", "", "The code used more CPU time than allowed."},
    {Outcome::memory, "memory", false, false, failed, "run_failed", "", "The code used more memory than allowed."},
    {Outcome::disk, "disk", false, false, failed, "run_failed", "", "The code wrote more data to disk than allowed."},
    {Outcome::files, "files", false, false, failed, "run_failed", "", "The code created too many files."},
    {Outcome::crashed, "crashed", false, false, failed, "run_failed", "", "The code's process crashed."},
    {Outcome::nonzero_exit, "nonzero_exit", false, false, failed, "run_failed", "", "The code's process ended with an error status."},
    {Outcome::output_too_large, "output_too_large", false, false, failed, "run_failed", "", "The code's output is larger than its cap."},
    {Outcome::output_rejected, "output_rejected", false, false, failed, "run_failed", "", "The code's output is not a regular file."},
    {Outcome::invalid_job, "invalid_job", false, false, failed, "run_failed", "", "The run could not be set up as asked."},
    // The harness's record contradicts the process, or the harness failed: the code may have caused
    // it (it runs in the same process), so it is never the host's word and never success.
    {Outcome::harness_error, "harness_error", false, false, failed, "run_failed", "",
     "The run ended without a harness record that matches the process."},
    {Outcome::internal_error, "internal_error", false, false, failed, "run_failed", "", "The run's harness failed."},

    // Data mode (sandbox/harness/exits.py DATA_REASONS).
    {Outcome::snippet_error, "snippet_error", false, false, failed, "run_failed", "", "The code raised an error."},
    {Outcome::snippet_exit, "snippet_exit", false, false, failed, "run_failed", "",
     "The code tried to exit by itself; a data snippet must only assign df."},
    {Outcome::snippet_missing, "snippet_missing", false, false, failed, "run_failed", "", "The data snippet could not be read."},
    {Outcome::no_df, "no_df", false, false, failed, "run_failed", "", "The code ran but did not assign a table to df."},
    {Outcome::not_dataframe, "not_dataframe", false, false, failed, "run_failed", "", "df must be a pandas DataFrame."},
    {Outcome::multiindex_columns, "multiindex_columns", false, false, failed, "run_failed", "", "df has MultiIndex columns; flatten them first."},
    {Outcome::too_many_rows, "too_many_rows", false, false, failed, "run_failed", "", "The table has more rows than allowed."},
    {Outcome::too_many_columns, "too_many_columns", false, false, failed, "run_failed", "", "The table has more columns than allowed."},
    {Outcome::too_large, "too_large", false, false, failed, "run_failed", "", "The table is larger as CSV than allowed."},
    {Outcome::cell_too_long, "cell_too_long", false, false, failed, "run_failed", "", "A cell or column name is longer than allowed."},
    {Outcome::cell_type, "cell_type", false, false, failed, "run_failed", "",
     "A cell holds something that is not text, a number, a boolean or a date."},
    {Outcome::empty_table, "empty_table", false, false, failed, "run_failed", "", "The table is empty."},
    {Outcome::duplicate_columns, "duplicate_columns", false, false, failed, "run_failed", "", "Two columns have the same name."},

    // Plot and figure mode (PLOT_REASONS), and what the host finds of the image.
    {Outcome::plot_error, "plot_error", false, false, failed, "run_failed", "", "The plot raised an error."},
    {Outcome::plot_exit, "plot_exit", false, false, failed, "run_failed", "", "The plot ended itself with an error status (sys.exit)."},
    {Outcome::plot_missing, "plot_missing", false, false, failed, "run_failed", "", "The plot file could not be read."},
    {Outcome::source_invalid, "source_invalid", false, false, failed, "run_failed", "", "The plot file is too large or not UTF-8."},
    {Outcome::no_output, "no_output", false, false, failed, "run_failed", "", "The plot ran but saved no image."},
    {Outcome::canvas_size, "canvas_size", false, false, failed, "run_failed", "",
     "The figure's image is not the 3200x1800 or 2400x2400 canvas the figure renderer draws."},
    {Outcome::figure_invalid, "figure_invalid", false, false, failed, "run_failed", "", "The figure could not be read as a figure."},
    {Outcome::draw_failed, "draw_failed", false, false, failed, "run_failed", "", "The figure could not be drawn."},
    {Outcome::no_webgl, "no_webgl", false, false, failed, "run_failed", "", "The figure needs WebGL, which is not available here."},
    // JavaScript snippets (snippet mode): the page showed one flat colour / left its own document.
    {Outcome::blank, "blank", false, false, failed, "run_failed", "", "The plot drew nothing: the image is one flat colour."},
    {Outcome::navigated, "navigated", false, false, failed, "run_failed", "",
     "The plot tried to leave its page (a navigation), so the render was stopped."},
    {Outcome::invalid_request, "invalid_request", false, false, failed, "run_failed", "", "The render request is not valid."},
    {Outcome::invalid_library, "invalid_library", false, false, failed, "run_failed", "", "This plotting library is not supported."},

    // Anything else a layer below reports: the code's failure, never success, never the host's.
    {Outcome::unknown, "unknown", false, false, failed, "run_failed", "", "The run failed."},
};
const std::size_t kOutcomeCount = std::size(kOutcomes);

// The enum and the rows are one list: row i is the outcome numbered i, unknown the last.
namespace {
constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kOutcomes); ++i)
    if (static_cast<std::size_t>(kOutcomes[i].outcome) != i) return false;
  return kOutcomes[std::size(kOutcomes) - 1].outcome == Outcome::unknown;
}
static_assert(rows_in_enum_order(), "kOutcomes lists every Outcome once, in the enum's order");
}  // namespace

const OutcomeRow& outcome_row(Outcome o) { return kOutcomes[static_cast<std::size_t>(o)]; }

std::string_view to_string(Outcome o) { return outcome_row(o).name; }

std::optional<Outcome> parse_outcome(std::string_view name) {
  for (const OutcomeRow& r : kOutcomes)
    if (r.name == name) return r.outcome;
  return std::nullopt;
}

Outcome outcome_named(std::string_view name) { return parse_outcome(name).value_or(Outcome::unknown); }

Outcome sandbox_outcome(sandbox::Reason reason) { return outcome_named(sandbox::to_string(reason)); }

std::ostream& operator<<(std::ostream& out, Outcome o) { return out << to_string(o); }

void to_json(nlohmann::json& j, Outcome o) { j = std::string(to_string(o)); }

std::string outcomes_markdown() {
  std::string s =
      "# Run outcomes\n\n"
      "Generated from `runs/outcome.cpp` (`kOutcomes`); a test keeps this file equal to it.\n"
      "Every way a data run or a render theme ends, and what each part of plotq does with it:\n\n"
      "- **host**: the run says nothing about the code (the host's trouble, or a cancel). A chat turn\n"
      "  ends with the turn code and no blame; `/run-data` and `/render` answer the job error (its\n"
      "  status is the error vocabulary's, docs/api.md) and do not keep it as the job's answer, so a\n"
      "  retry with the same job id runs again; `plotq sweep` stops (exit 1, `--resume` goes on).\n"
      "- **refusal**: the ledger books the run `refused` with this code, else `failed` (or `ok`).\n"
      "- **turn**: how a chat turn ends: `done`, `refusal{code}` or `error{code}`.\n"
      "- Every other outcome is the code's own: `/run-data` and `/render` answer it with 200 and keep\n"
      "  that answer for retries; the sweep records it as the file's outcome.\n\n"
      "| outcome | host | refusal | turn | job error | sentence |\n|---|---|---|---|---|---|\n";
  for (const OutcomeRow& o : kOutcomes) {
    const char* end = o.turn_end == TurnEnd::done ? "done" : o.turn_end == TurnEnd::refused ? "refusal" : "error";
    s += "| `" + std::string(o.name) + "` | " + (o.host ? "yes" : "") + " | " + (o.refusal ? "yes" : "") + " | " +
         end + (o.turn_code.empty() ? std::string() : " `" + std::string(o.turn_code) + "`") + " | " +
         (o.job_error.empty() ? std::string() : "`" + std::string(o.job_error) + "`") + " | " + std::string(o.sentence) +
         " |\n";
  }
  return s;
}

}  // namespace plotq::runs
