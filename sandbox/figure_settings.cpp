// Every sandbox::FigureConfig field as its PLOTQ_* setting: name, field, one-line why, bound. The one
// declaration of the figure renderer's limits (plotly and bokeh figures drawn by a warm Chromium).
#include "common/settings.hpp"
#include "sandbox/figure_renderer.hpp"

namespace plotq::sandbox {

void register_figure_settings(Settings& s, FigureConfig& c) {
  s.add("PLOTQ_NODE", &c.node, "node binary of the figure renderer");
  s.add("PLOTQ_CHROMIUM", &c.chromium, "Chromium binary of the figure renderer");
  s.add("PLOTQ_PLOTLY_JS", &c.plotly_js, "plotly.js the figure page loads (the runtime's own, so it matches the plotly that wrote the figure)");
  s.add("PLOTQ_BOKEH_JS", &c.bokeh_js,
        "directory of the BokehJS bundles the figure page loads (the runtime's own, so it matches the bokeh that wrote the figure)");
  s.add("PLOTQ_JS_MODULES", &c.js_modules,
        "node_modules of the JavaScript snippet libraries (runtime/js, from its package-lock.json); empty: no snippets");
  s.add("PLOTQ_FIGURE_SCRIPT", &c.figure_script, "renderer.mjs; empty = <PLOTQ_HOME>/sandbox/figure/renderer.mjs");
  s.add("PLOTQ_FIGURE_TMP_ROOT", &c.figure_tmp_root, "a private 0711 dir per renderer start is made here");
  s.add("PLOTQ_FIGURE_RESTART_AFTER", &c.figure_restart_after, "jobs per renderer process, then a fresh one").range(1, 1'000'000);
  s.add("PLOTQ_FIGURE_START_TIMEOUT_S", &c.figure_start_timeout_s, "renderer start + warm-up must say ready within this, seconds")
      .range(1, 600);
  s.add("PLOTQ_FIGURE_KILL_GRACE_S", &c.figure_kill_grace_s, "the host kills the renderer at a job's timeout + this, seconds")
      .range(0.1, 60);
  s.add("PLOTQ_FIGURE_MAX_TIMEOUT_S", &c.figure_max_timeout_s, "a figure job's timeout is clamped to (0, this], seconds").range(1, 600);
  s.add("PLOTQ_FIGURE_MAX_QUEUE", &c.figure_max_queue, "figure jobs waiting behind the running one; more answer busy").range(0, 10'000);
  s.add("PLOTQ_FIGURE_SPARES", &c.figure_spares, "fresh pages (plotly loaded) kept ready while idle").range(0, 8);
  s.add("PLOTQ_FIGURE_NETNS", &c.figure_netns, "run the renderer in a new, empty network namespace");
  s.add("PLOTQ_FIGURE_PIDNS", &c.figure_pidns, "run the renderer in a new PID namespace");
  s.add("PLOTQ_FIGURE_UID", &c.figure_uid, "Chromium's uid when plotqd runs as root").range(1, 4'294'967'294LL);
  s.add("PLOTQ_FIGURE_GID", &c.figure_gid, "Chromium's gid when plotqd runs as root").range(1, 4'294'967'294LL);
  s.add("PLOTQ_FIGURE_CHROMIUM_SANDBOX", &c.figure_chromium_sandbox, "Chromium's own sandbox (false adds --no-sandbox)");
  s.add("PLOTQ_FIGURE_WEBGL", &c.figure_webgl, "allow WebGL traces (false: they answer no_webgl)");
  s.add("PLOTQ_FIGURE_CANVAS_CAPTURE", &c.figure_canvas_capture,
        "a bokeh page whose canvases alone make its pixels is captured from them (false: always a screenshot)");
  s.add("PLOTQ_FIGURE_MAX_BYTES", &c.figure_max_bytes, "figure JSON cap, bytes").range(1, 1LL << 30);
  s.add("PLOTQ_FIGURE_MAX_DEPTH", &c.figure_max_depth, "figure JSON nesting cap").range(2, 100'000);
  s.add("PLOTQ_FIGURE_HEAP_MB", &c.figure_heap_mb, "V8 heap cap of each figure page, MiB").range(64, 1 << 16);
  s.add("PLOTQ_FIGURE_STDERR_KEEP_BYTES", &c.figure_stderr_keep_bytes, "renderer stderr tail kept for the log, bytes")
      .range(256, 1 << 24);
}

std::vector<const char*> figure_switches_off(const FigureConfig& c) {
  std::vector<const char*> off;
  if (!c.figure_chromium_sandbox) off.push_back("--no-chromium-sandbox");
  if (!c.figure_webgl) off.push_back("--no-webgl");
  if (!c.figure_canvas_capture) off.push_back("--no-canvas-capture");
  return off;
}

FigureConfig figure_config_from_env() { return load_from_env<FigureConfig>(register_figure_settings); }

}  // namespace plotq::sandbox
