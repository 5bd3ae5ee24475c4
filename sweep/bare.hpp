// Bare mode: the sweep's control. Each file runs with the configured runtime's interpreter
// (PLOTQ_PYTHON, the venv the sandbox runs) in a fresh process and temp dir (plot.py, data.csv
// beside it if any; env ANYPLOT_THEME and MPLBACKEND=Agg), no sandbox layer and none of the
// sandbox's rules: a PNG of any size is a render. plotly and bokeh files run through a small
// runner that installs the harness's figurecapture.py (no guard), which writes the figure's JSON
// to plot-<theme>.json at write_image/show/save/export_png; the host then draws that JSON with the
// same Chromium figure renderer as figure mode (sandbox/figure_renderer.hpp), whose canvas is
// exact in both modes. The exception class comes from the last traceback on stderr,
// mapped into the harness's class vocabulary so that both modes name classes alike.
#pragma once
#include <atomic>
#include <cstddef>
#include <optional>
#include <string>

#include "sweep/outcome.hpp"

namespace plotq {
class Settings;
}

namespace plotq::runs {

// Settings of bare mode; env PLOTQ_<FIELD IN UPPER CASE> (bare_config_from_env).
struct BareConfig {
  std::string python = PLOTQ_DEFAULT_PYTHON;  // PLOTQ_PYTHON (the sandbox's interpreter setting)
  std::string rscript = "/usr/bin/Rscript";   // R files' bare control (PLOTQ_SWEEP_RSCRIPT)
  std::string sweep_tmp_root = "/tmp";        // PLOTQ_SWEEP_TMP_ROOT: a fresh dir per file and theme
  // The sandbox's harness dir (PLOTQ_HARNESS_DIR; "" = <PLOTQ_HOME>/sandbox/harness): figure-mode
  // files import its figurecapture.py, the capture figure mode uses.
  std::string harness_dir;
  std::size_t sweep_stderr_keep_bytes = 65536;  // PLOTQ_SWEEP_STDERR_KEEP_BYTES: stderr tail kept for the class
  std::size_t max_png_bytes = kMaxPngBytes;     // same cap as the render path (10 MiB)
  bool sweep_log = false;  // PLOTQ_SWEEP_LOG: keep the launcher's log on stderr during a sweep
};
// PLOTQ_SWEEP_* are declared in sweep/settings.cpp; bare_config_from_env() loads them with the
// sandbox's PLOTQ_PYTHON and PLOTQ_HARNESS_DIR.
void register_sweep_settings(Settings& s, BareConfig& c);
BareConfig bare_config_from_env();

// One theme of one file, run to the end of its Python step.
struct BareRun {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  bool cancelled = false;
  std::string host_error;  // the host could not run it (temp dir, spawn); empty otherwise
  double wall_s = 0;
  double cpu_s = 0;
  double max_rss_mb = 0;
  std::string stderr_tail;  // last sweep_stderr_keep_bytes of stderr
  std::string dir;          // the run's temp dir; the caller removes it (remove_run_dir)
};

// Blocking: runs the file to its end, its timeout, or `stop` (checked every 50 ms). The child is
// its own process group (a terminal's Ctrl-C reaches plotq only), killed whole at the end.
BareRun run_bare_python(const BareConfig& config, const std::string& source, const std::string& data_csv,
                        const std::string& theme, bool plotly_shim, double timeout_s,
                        const std::atomic<bool>& stop);

// An R file (mode r), bare: `Rscript --vanilla plotq_bare_r.R` in a fresh temp dir holding plot.R,
// one fresh process a theme, no sandbox and no guard. The runner (kBareRRunner, bare.cpp) only
// evaluates plot.R's expressions in the global environment as Rscript would and, when one raises,
// prints `plotq-r-error: <class> <line>` on stderr before R's own message, so that bare mode names
// the condition's class as the sandbox's rharness.R does.
BareRun run_bare_r(const BareConfig& config, const std::string& source, const std::string& theme, double timeout_s,
                   const std::atomic<bool>& stop);
// The condition class of the last `plotq-r-error:` line of an R run's stderr, if any.
std::optional<std::string> r_error_class(std::string_view stderr_text);

// The row for a Python step that ended (no figure step), in plot mode's terms: timeout, crashed
// (a signal), plot_error with the traceback's class, plot_exit (a non-zero exit without a
// traceback: sys.exit(3)), or the PNG's checks (no_output, output_rejected, output_too_large; any
// size renders, with its canvas).
// png_out: when not null, a render's PNG bytes (for the report's thumbnails).
void classify_bare(const BareConfig& config, const BareRun& run, const ClassVocabulary& classes,
                   const std::string& png_name, store::SweepResult& row, std::string* png_out = nullptr);

// Reads <dir>/<name> without following links, regular files only, at most cap bytes. Sets reason
// to no_output / output_rejected / output_too_large when it returns nullopt.
std::optional<std::string> read_output(const std::string& dir, const std::string& name, std::size_t cap,
                                       Outcome& reason);

// The row for a PNG that came back: render with its canvas (exact | off), or output_rejected (not a
// PNG). exact_canvas (the figure renderer's PNG, which sets the canvas itself): another size is
// canvas_size, as in figure mode.
void classify_png(const std::string& png, store::SweepResult& row, bool exact_canvas = false);

void remove_run_dir(const std::string& dir);

// Runs the harness's errors.build_class_table() once with `python` and returns the printed-name
// map. Throws std::runtime_error when it cannot (no harness, python fails).
ClassVocabulary load_class_vocabulary(const std::string& python, const std::string& harness_dir);

// The runner's source (written as plotq_bare_shim.py into the run dir of a plotly or bokeh file,
// run with the harness dir as its argument).
const char* bare_figure_shim();

}  // namespace plotq::runs
