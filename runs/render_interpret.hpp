// The pure half of a render: what a request may be, the plot step's job spec, and what its result
// means (the record cross-check, the PNG header, the canvas, the outcome sentence). The same
// shapes as POST /render's answer: one RenderResult per request, one ThemeRun per theme.
// runs/README.md has the outcome vocabulary.
#pragma once
#include "runs/outcome.hpp"
#include "runs/libraries.hpp"
#include "common/limits.hpp"
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runs/runtime.hpp"
#include "sandbox/job.hpp"

namespace plotq::sandbox {
class FigureRenderer;
}

namespace plotq::runs {

using ::plotq::limits::kMaxRenderSourceChars;  // common/limits.hpp
using ::plotq::limits::kMaxDataCsvChars;  // common/limits.hpp
using ::plotq::limits::kMaxRenderTimeoutS;  // common/limits.hpp
using ::plotq::limits::kMaxPngBytes;  // common/limits.hpp
using ::plotq::limits::kMaxRenderRecordBytes;  // common/limits.hpp
using ::plotq::limits::kCanvasTolerancePx;  // common/limits.hpp

struct RenderRequest {
  std::string job_id;
  std::string source;   // the plot file
  std::string library;  // a name of runs/libraries.hpp's table
  std::vector<std::string> themes;  // 1..2 of light|dark, distinct
  double timeout_s = 60;
  std::string data_csv;  // written as data.csv next to plot.py when not empty
};

struct ThemeRun {
  std::string theme;
  std::optional<RenderMode> mode;  // the render's mode: plot, figure, snippet or r (none when nothing ran)
  // ok, or a fixed reason: plot_error (the plot raised: error_class/error_line), plot_exit,
  // no_output, canvas_size (measured "WxH" in message, measured/limit = width), output_too_large,
  // output_rejected, guard_refused (refusal_rule), figure_invalid, draw_failed, no_webgl,
  // renderer_error, runtime_unavailable, invalid_library, ... (runs/outcome.hpp has them all)
  Outcome outcome = Outcome::ok;
  std::optional<int> exit_code;
  bool timed_out = false;
  std::optional<std::string> png;  // bytes, only when outcome == ok
  int width = 0, height = 0;       // from the PNG header when a PNG was read
  // With the PNG: "exact" (within kCanvasTolerancePx of 3200x1800 or 2400x2400) or "off" (plot
  // mode: any other size is still a render; the catalogue's review judges drift, not plotq).
  std::string canvas;
  std::optional<std::string> error_class;
  std::optional<int> error_line;
  std::optional<std::string> refusal_rule;  // guard_refused: the guard's rule
  std::optional<std::string> figure_code;   // figure mode: the screenshot step's own code
  std::optional<double> measured, limit;
  std::string message;  // plotq's own sentence (never what the code printed)
  double wall_s = 0;
  double cpu_s = 0;
  double max_rss_mb = 0;
  int attempts = 1;
  double draw_s = 0;       // figure mode: host time of the screenshot step
  sandbox::JobResult job;  // the plot step's launcher result (for the ledger; outputs cleared)
};

struct RenderResult {
  std::map<std::string, ThemeRun> outputs;  // by theme
};

// A theme that never started: `code` (invalid_request, invalid_library, runtime_unavailable, or
// cancelled before its turn), no attempt made (job.attempts 0: its ledger row is a refusal), with
// plotq's sentence. mode: the render's when it had started.
ThemeRun not_started(const std::string& theme, Outcome code, std::optional<RenderMode> mode = std::nullopt);
// A render refused before any theme started: each known theme not_started with `code` (an unknown
// theme has no answer: the request check refuses it).
RenderResult refused_render(const std::vector<std::string>& themes, Outcome code);

// What a renderer can serve here (runs/libraries.hpp: library_support): ok, invalid_library
// (not in the table), or runtime_unavailable (a package the runtime's manifest does not list, an
// unknown runtime, or a figure-mode library without a working figure renderer).
Outcome render_support(const std::string& library, const Runtime& runtime, const sandbox::FigureRenderer* figures);

// The library's mode from the table (runs/libraries.hpp); plot for a name not in it (refused
// before it runs).
RenderMode render_mode(const std::string& library);
// "" when the request is well formed, else why not (job id, source, themes, timeout, data).
std::string validate_render_request(const RenderRequest& request);

// One theme's plot step: mode plot|figure, plot.py (+ data.csv), ANYPLOT_THEME, the output and
// result.json under their caps.
// figure_max_bytes: the cap of a figure job's plot-<theme>.json, the figure renderer's
// (FigureRenderer::figure_max_bytes, PLOTQ_FIGURE_MAX_BYTES).
sandbox::JobSpec render_job_spec(const RenderRequest& request, const std::string& theme, double timeout_s,
                                 std::uint64_t figure_max_bytes);
// The plot step's result, cross-checked against the harness's record. Plot mode ends here (ok
// with the PNG, or a reason). Figure mode answers "ok" with the collected JSON still in
// run.job.outputs["plot-<theme>.json"] for the screenshot step; every other output is dropped.
ThemeRun interpret_render_job(sandbox::JobResult job, RenderMode mode, const std::string& theme);
// The screenshot step's code -> a ThemeRun outcome (the sweep's bare mode maps it alike).
Outcome figure_outcome(const std::string& code);
// plotq's own sentence for an outcome (never what the code printed).
std::string describe(const ThemeRun& run);

// plot-<theme>.png (plot mode) or plot-<theme>.json (figure mode).
std::string render_output_name(RenderMode mode, const std::string& theme);

// PNG IHDR size, or nullopt when the bytes are not a PNG.
std::optional<std::pair<int, int>> png_size(const std::string& bytes);
// 3200x1800 or 2400x2400 within kCanvasTolerancePx.
bool canvas_ok(int width, int height);
// "exact" when canvas_ok, else "off".
std::string canvas_of(int width, int height);

}  // namespace plotq::runs
