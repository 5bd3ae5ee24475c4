// The sweep's outcome model, identical in every mode so that `plotq sweep diff` of a bare and a
// sandboxed sweep compares like with like. Per file and theme:
//   outcome       render (exit 0 and a PNG, of any size) | fail
//   canvas        renders: exact (3200x1800 or 2400x2400 within 16 px) | off
//   reason        ok | the render path's fixed reason (plot_error, no_output, canvas_size, timeout,
//                 memory, guard_refused, figure_invalid, draw_failed, runtime_unavailable, ...)
//   error_class   for plot_error: the exception class in the harness's vocabulary
//                 (sandbox/harness/errors.py: a builtin name, a listed qualified name, or
//                 "unlisted"); never the message
//   reason_class  what diff compares: error_class for plot_error, else reason
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "runs/render_job.hpp"
#include "store/sweeps.hpp"

namespace plotq::runs {

// Fills a row's outcome fields from one theme of a render (sandbox mode, in process).
void apply_theme_run(const ThemeRun& run, store::SweepResult& row);

// A run's measures in a row, the one way every mode copies them: times never negative, the peak
// RSS only when it was measured.
void set_measures(store::SweepResult& row, double wall_s, double cpu_s, double max_rss_mb);

// A failed row with a fixed reason (nothing ran, or the run failed before a class was known).
void set_failure(store::SweepResult& row, Outcome reason, std::optional<std::string> error_class = std::nullopt);
// A failed row whose reason is a name, not an Outcome: a file refused before any run (sweep/files.hpp:
// unreadable, source_too_large, data_too_large, ...), a server's error code (node_lost), or an
// outcome's name; kept in the schema's shape ("unknown" otherwise).
void set_failure_named(store::SweepResult& row, std::string_view reason);

// "WxH" for canvas_size rows, "measured/limit" for limit reasons.
std::string describe_size(int width, int height);

// Keeps a reason inside the schema's vocabulary shape ([a-z][a-z0-9_]*, <= 32): anything else
// becomes "unknown".
std::string clean_reason(std::string_view reason);

// The class name Python printed for the exception of the last traceback in stderr_text
// ("ValueError", "pandas.errors.ParserError", "__main__" classes unqualified), or nullopt when no
// exception line is found. Handles chained tracebacks, SyntaxError (no "Traceback" header) and
// messages that run over several lines.
std::optional<std::string> traceback_class(std::string_view stderr_text);

// Maps the name Python prints for a class (module.qualname, bare for builtins/__main__) to the
// harness's vocabulary name; everything else is "unlisted". Built by running the harness's own
// errors.build_class_table() once (bare.hpp: load_class_vocabulary).
struct ClassVocabulary {
  std::map<std::string, std::string> printed_to_name;
  std::string classify(const std::string& printed) const;
};

}  // namespace plotq::runs
