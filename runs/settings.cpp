// The runs' own PLOTQ_* settings (the render slot's jobs), declared once with their bounds and
// reasons; docs/settings.md prints them (section "Renders").
#include "common/settings.hpp"
#include "runs/render_job.hpp"

namespace plotq::runs {

void register_settings(Settings& s, RenderConfig& c) {
  s.add("PLOTQ_RENDER_TMP_DIR", &c.render_tmp_dir,
        "a private 0700 dir per Renderer is made here for the figure JSON handed to Chromium and its PNG")
      .check([](std::string_view t) { return !t.empty() && t[0] == '/' ? std::string() : std::string("must be an absolute path"); });
  s.add("PLOTQ_R_RUNTIME", &c.r_runtime_manifest,
        "the R runtime's manifest (R and package versions, the runtime id); empty = <PLOTQ_HOME>/runtime/r/plotq-r-runtime.json");
}

RenderConfig render_config_from_env() { return load_from_env<RenderConfig>(register_settings); }

}  // namespace plotq::runs
