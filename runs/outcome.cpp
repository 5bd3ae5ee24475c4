#include "runs/outcome.hpp"

#include <iterator>

namespace plotq::runs {

namespace {
constexpr TurnEnd done = TurnEnd::done, refused = TurnEnd::refused, failed = TurnEnd::failed;
}  // namespace

// name, host, refusal, turn end, turn code, job error, sentence. The sentences of the data caps
// name the caps of sandbox/harness/table.py (one place with the harness: runs/README.md).
const Outcome kOutcomes[] = {
    {"ok", false, false, done, "", "", "The run finished."},

    // Refused by a policy before or while the code ran.
    {"validation", false, true, refused, "invalid_code", "", "The code was not run: it breaks the rules for data code."},
    {"guard_refused", false, true, refused, "invalid_code", "",
     "The code tried something it may not do, so the run was stopped."},
    {"capacity", false, true, failed, "capacity", "", "The queue is full; try again shortly."},
    {"data_runs_exhausted", false, true, refused, "data_runs_exhausted", "", "Today's data runs are used up."},
    {"pipeline_runs_exhausted", false, true, refused, "pipeline_runs_exhausted", "", "Today's plot runs are used up."},
    {"runtime_unavailable", false, true, failed, "runtime_unavailable", "",
     "This plotting library cannot be rendered here."},

    // The host's trouble or a stop from outside: says nothing about the code.
    {"cancelled", true, false, failed, "cancelled", "cancelled", "The run was cancelled."},
    {"sandbox_unavailable", true, true, failed, "unavailable", "sandbox_unavailable", "The sandbox cannot run here."},
    {"exec_denied", true, true, failed, "unavailable", "sandbox_unavailable",
     "The sandbox could not arm its exec filter, so the code was not run."},
    {"low_memory", true, true, failed, "unavailable", "low_memory", "The host is low on memory; try again shortly."},
    {"launcher", true, false, failed, "unavailable", "io", "The sandbox could not start the run."},
    {"sandbox_lost", true, false, failed, "unavailable", "sandbox_lost",
     "The sandbox lost the run's process (its zygote died); try again."},
    {"io", true, false, failed, "unavailable", "io", "A host I/O failure stopped the run."},
    {"scratch_full", true, false, failed, "unavailable", "scratch_full",
     "The sandbox's scratch space is full; try again once space is freed."},
    {"stuck", true, false, failed, "unavailable", "stuck", "A killed run was still alive on the host."},
    {"renderer_error", true, false, failed, "unavailable", "renderer_failed", "The figure renderer failed."},

    // The code ran and did not make what was asked: its own outcome, kept as the answer.
    {"timeout", false, false, failed, "run_failed", "", "The code did not finish within the time limit."},
    {"cpu", false, false, failed, "run_failed", "", "The code used more CPU time than allowed."},
    {"memory", false, false, failed, "run_failed", "", "The code used more memory than allowed."},
    {"disk", false, false, failed, "run_failed", "", "The code wrote more data to disk than allowed."},
    {"files", false, false, failed, "run_failed", "", "The code created too many files."},
    {"crashed", false, false, failed, "run_failed", "", "The code's process crashed."},
    {"nonzero_exit", false, false, failed, "run_failed", "", "The code's process ended with an error status."},
    {"output_too_large", false, false, failed, "run_failed", "", "The code's output is larger than its cap."},
    {"output_rejected", false, false, failed, "run_failed", "", "The code's output is not a regular file."},
    {"invalid_job", false, false, failed, "run_failed", "", "The run could not be set up as asked."},
    // The harness's record contradicts the process, or the harness failed: the code may have caused
    // it (it runs in the same process), so it is never the host's word and never success.
    {"harness_error", false, false, failed, "run_failed", "",
     "The run ended without a harness record that matches the process."},
    {"internal_error", false, false, failed, "run_failed", "", "The run's harness failed."},

    // Data mode (sandbox/harness/exits.py DATA_REASONS).
    {"snippet_error", false, false, failed, "run_failed", "", "The code raised an error."},
    {"snippet_exit", false, false, failed, "run_failed", "",
     "The code tried to exit by itself; a data snippet must only assign df."},
    {"snippet_missing", false, false, failed, "run_failed", "", "The data snippet could not be read."},
    {"no_df", false, false, failed, "run_failed", "", "The code ran but did not assign a table to df."},
    {"not_dataframe", false, false, failed, "run_failed", "", "df must be a pandas DataFrame."},
    {"multiindex_columns", false, false, failed, "run_failed", "", "df has MultiIndex columns; flatten them first."},
    {"too_many_rows", false, false, failed, "run_failed", "", "The table has more rows than allowed."},
    {"too_many_columns", false, false, failed, "run_failed", "", "The table has more columns than allowed."},
    {"too_large", false, false, failed, "run_failed", "", "The table is larger as CSV than allowed."},
    {"cell_too_long", false, false, failed, "run_failed", "", "A cell or column name is longer than allowed."},
    {"cell_type", false, false, failed, "run_failed", "",
     "A cell holds something that is not text, a number, a boolean or a date."},
    {"empty_table", false, false, failed, "run_failed", "", "The table is empty."},
    {"duplicate_columns", false, false, failed, "run_failed", "", "Two columns have the same name."},

    // Plot and figure mode (PLOT_REASONS), and what the host finds of the image.
    {"plot_error", false, false, failed, "run_failed", "", "The plot raised an error."},
    {"plot_exit", false, false, failed, "run_failed", "", "The plot ended itself with an error status (sys.exit)."},
    {"plot_missing", false, false, failed, "run_failed", "", "The plot file could not be read."},
    {"source_invalid", false, false, failed, "run_failed", "", "The plot file is too large or not UTF-8."},
    {"no_output", false, false, failed, "run_failed", "", "The plot ran but saved no image."},
    {"canvas_size", false, false, failed, "run_failed", "",
     "The figure's image is not the 3200x1800 or 2400x2400 canvas the figure renderer draws."},
    {"figure_invalid", false, false, failed, "run_failed", "", "The figure could not be read as a figure."},
    {"draw_failed", false, false, failed, "run_failed", "", "The figure could not be drawn."},
    {"no_webgl", false, false, failed, "run_failed", "", "The figure needs WebGL, which is not available here."},
    // JavaScript snippets (snippet mode): the page showed one flat colour / left its own document.
    {"blank", false, false, failed, "run_failed", "", "The plot drew nothing: the image is one flat colour."},
    {"navigated", false, false, failed, "run_failed", "",
     "The plot tried to leave its page (a navigation), so the render was stopped."},
    {"invalid_request", false, false, failed, "run_failed", "", "The render request is not valid."},
    {"invalid_library", false, false, failed, "run_failed", "", "This plotting library is not supported."},

    // Anything else a layer below reports: the code's failure, never success, never the host's.
    {"unknown", false, false, failed, "run_failed", "", "The run failed."},
};
const std::size_t kOutcomeCount = std::size(kOutcomes);

const Outcome& outcome(std::string_view name) {
  for (const Outcome& o : kOutcomes)
    if (o.name == name) return o;
  return kOutcomes[kOutcomeCount - 1];
}

bool known_outcome(std::string_view name) {
  for (const Outcome& o : kOutcomes)
    if (o.name == name) return true;
  return false;
}

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
  for (const Outcome& o : kOutcomes) {
    const char* end = o.turn_end == TurnEnd::done ? "done" : o.turn_end == TurnEnd::refused ? "refusal" : "error";
    s += "| `" + std::string(o.name) + "` | " + (o.host ? "yes" : "") + " | " + (o.refusal ? "yes" : "") + " | " +
         end + (o.turn_code.empty() ? std::string() : " `" + std::string(o.turn_code) + "`") + " | " +
         (o.job_error.empty() ? std::string() : "`" + std::string(o.job_error) + "`") + " | " + std::string(o.sentence) +
         " |\n";
  }
  return s;
}

}  // namespace plotq::runs
