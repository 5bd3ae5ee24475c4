#include "sweep/policy.hpp"

#include <algorithm>

#include "runs/libraries.hpp"
#include "runs/render_interpret.hpp"

namespace plotq::runs {

PendingWork pending_work(const std::vector<SweepFile>& pending) {
  PendingWork w;
  w.any_plot = std::any_of(pending.begin(), pending.end(),
                           [](const SweepFile& f) { return render_mode(f.library) == RenderMode::plot; });
  w.any_r = std::any_of(pending.begin(), pending.end(), [](const SweepFile& f) {
    return find_library(f.library) && render_mode(f.library) == RenderMode::r;
  });
  w.figure_files = static_cast<std::size_t>(std::count_if(pending.begin(), pending.end(), [](const SweepFile& f) {
    return find_library(f.library) && render_mode(f.library) == RenderMode::figure;
  }));
  w.browser_files = w.figure_files + static_cast<std::size_t>(std::count_if(pending.begin(), pending.end(), [](const SweepFile& f) {
    return find_library(f.library) && render_mode(f.library) == RenderMode::snippet;
  }));
  return w;
}

void apply_sandbox_policy(sandbox::Config& config, const PendingWork& work, const std::string& db_dir,
                          const OperatorChoices& chose) {
  config.hidden_paths.push_back(db_dir);
  if (!chose.sandbox_nice) config.sandbox_nice = 0;
  if (!chose.warm_modes) {
    config.warm_modes.clear();
    if (work.any_plot) config.warm_modes.push_back("plot");
    if (work.figure_files > 0) config.warm_modes.push_back("figure");
    if (work.any_r) config.warm_modes.push_back("r");
  }
}

std::uint32_t sweep_figure_spares(std::uint32_t configured, std::size_t figure_renders) {
  return std::max(configured, static_cast<std::uint32_t>(std::min<std::size_t>(figure_renders, kSweepFigureSpares)));
}

double warm_stagger_s(const sandbox::Config& config, bool warm_layer_active) {
  return config.sandbox_cold || !warm_layer_active || config.warm_modes.empty() ? 0 : config.zygote_start_timeout_s;
}

}  // namespace plotq::runs
