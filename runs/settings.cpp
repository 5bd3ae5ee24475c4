// The runs' own PLOTQ_* settings (the render slot's jobs and the catalogue sweep), declared once with
// their bounds and reasons; docs/settings.md prints them (sections "Renders" and "plotq sweep").
#include "common/env.hpp"
#include "common/settings.hpp"
#include "runs/render_job.hpp"
#include "runs/sweep_bare.hpp"

namespace plotq::runs {

void register_settings(Settings& s, RenderConfig& c) {
  s.add("PLOTQ_RENDER_TMP_DIR", &c.render_tmp_dir,
        "a private 0700 dir per Renderer is made here for the figure JSON handed to Chromium and its PNG")
      .check([](std::string_view t) { return !t.empty() && t[0] == '/' ? std::string() : std::string("must be an absolute path"); });
}

RenderConfig render_config_from_env() {
  RenderConfig c;
  Settings s;
  register_settings(s, c);
  load_or_throw(s);
  return c;
}

void register_sweep_settings(Settings& s, BareConfig& c) {
  s.add("PLOTQ_SWEEP_TMP_ROOT", &c.sweep_tmp_root, "bare mode makes a fresh dir per file and theme here");
  s.add("PLOTQ_SWEEP_STDERR_KEEP_BYTES", &c.sweep_stderr_keep_bytes,
        "bare mode keeps this much of a file's stderr to read its error class, bytes")
      .range(1024, 16 << 20);
  s.add("PLOTQ_SWEEP_LOG", &c.sweep_log,
        "keep the launcher's structured log on stderr during a sweep (zygote starts, each job): for a slow or failing sweep");
}

BareConfig bare_config_from_env() {
  BareConfig c;
  Settings s;
  register_sweep_settings(s, c);
  load_or_throw(s);
  // The interpreter and harness are the sandbox's own settings (PLOTQ_PYTHON, PLOTQ_HARNESS_DIR).
  c.python = env_string("PLOTQ_PYTHON", c.python);
  c.harness_dir = env_string("PLOTQ_HARNESS_DIR", c.harness_dir);
  return c;
}

}  // namespace plotq::runs
