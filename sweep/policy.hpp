// How a sweep sets up the machinery it draws with, decided from the files still to draw and what
// the operator chose (a PLOTQ_* variable set in the environment always wins). Pure functions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sandbox/config.hpp"
#include "sweep/files.hpp"

namespace plotq::runs {

// What the pending files need: a plot zygote, the R zygote, and Chromium for the figure-mode libraries of the
// table (plotly, bokeh). Chromium is started only when a pending file needs it.
struct PendingWork {
  bool any_plot = false;
  std::size_t figure_files = 0;   // Python figure mode (plotly, bokeh): the warm "figure" zygote
  std::size_t browser_files = 0;  // figure + JavaScript snippet files: everything Chromium draws
  bool any_r = false;             // R files: the warm "r" zygote (harness/rzygote.R)
};
PendingWork pending_work(const std::vector<SweepFile>& pending);

// Which of the operator's PLOTQ_* variables are set (then the sweep leaves that setting alone).
struct OperatorChoices {
  bool sandbox_nice = false;   // PLOTQ_SANDBOX_NICE
  bool warm_modes = false;     // PLOTQ_WARM_MODES
  bool figure_spares = false;  // PLOTQ_FIGURE_SPARES
};

// A sandboxed sweep's launcher settings:
// - the database's directory (db_dir) joins the jobs' hidden paths: the store stays out of view;
// - sandbox_nice 0: the default keeps jobs below plotqd's event loop, but a sweep has no loop to
//   protect, only its own Chromium, which its plot jobs would wait behind (`nice plotq sweep`
//   puts the whole sweep below plotqd);
// - exactly the modes the pending files need are warmed: a raw or data zygote would only take CPU
//   from the plot zygote's preload, which the first file waits for.
void apply_sandbox_policy(sandbox::Config& config, const PendingWork& work, const std::string& db_dir,
                          const OperatorChoices& chose);

// Spare Chromium pages for a sandboxed sweep. Every figure is drawn in a fresh page, which starts
// its plotting library's JavaScript; the figure files are drawn after the plot files (held while
// the figure path warms up), back to back, so pages made ahead while the renderer is idle spare
// them the wait. Never fewer than configured; at most kSweepFigureSpares, or one per figure drawn.
inline constexpr std::uint32_t kSweepFigureSpares = 4;
std::uint32_t sweep_figure_spares(std::uint32_t configured, std::size_t figure_renders);

// How long each warm-up step may take before the next one starts anyway (the zygote's start
// timeout); 0 when there is nothing to stagger (cold, the warm layer inactive, no warm mode): then
// the launcher warms everything at once.
double warm_stagger_s(const sandbox::Config& config, bool warm_layer_active);

}  // namespace plotq::runs
