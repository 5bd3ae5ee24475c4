// FigureRenderer: the host side of figure mode's screenshot step. It keeps one warm renderer
// process (sandbox/figure/renderer.mjs: Node + playwright-core + Debian's headless Chromium with the
// runtime's own plotly.js and BokehJS, from the packages in runtime/venv) and hands it one figure
// file at a time (a plotly figure JSON or a bokeh json_item) over line-delimited JSON on its
// stdin/stdout, all on the caller's io_context (no blocking call).
//
// The renderer runs in its own process group and, by default (root), as PID 1 of a new PID
// namespace with an empty network namespace: killing it kills Chromium too (Playwright starts the
// browser in a session of its own, so a process-group kill alone would miss it). Chromium itself
// runs as figure_uid with its own sandbox. A job that overruns its timeout (plus
// figure_kill_grace_s) kills the renderer; the next job gets a fresh one. The renderer is also
// replaced after figure_restart_after jobs. A job whose renderer died under it is tried once more on
// a fresh renderer. docs/figure-renderer.md has the protocol and codes.
#pragma once
#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>
#include <optional>
#include <string>

namespace plotq {
class Settings;
}

namespace plotq::sandbox {

// The sandbox runtime's own JavaScript (the venv of PLOTQ_DEFAULT_PYTHON, <venv>/lib/python3.N/
// site-packages): plotly's plotly.min.js and the directory of bokeh's BokehJS bundles. "" when the
// runtime has no site-packages. The figure is drawn with the JavaScript of the package that wrote it.
std::string runtime_plotly_js();
std::string runtime_bokeh_js();
// The JavaScript snippet libraries (runtime/js, installed from its package-lock.json by
// tools/setup.sh): <project home>/runtime/js/node_modules.
std::string runtime_js_modules();
// Which files each snippet library needs there: sandbox/snippet_libraries.hpp (the renderer's own table).

// Every limit and path of the figure renderer; env-var name PLOTQ_<FIELD IN UPPER CASE>, declared
// with its bound and its reason in figure_settings.cpp.
struct FigureConfig {
  std::string node = "/usr/bin/node";                             // PLOTQ_NODE
  std::string chromium = "/usr/bin/chromium";                     // PLOTQ_CHROMIUM
  std::string plotly_js = runtime_plotly_js();  // PLOTQ_PLOTLY_JS; "" or missing: no plotly figures
  std::string bokeh_js = runtime_bokeh_js();    // PLOTQ_BOKEH_JS, the bundles' dir; "" or missing: no bokeh figures
  std::string js_modules = runtime_js_modules();  // PLOTQ_JS_MODULES; "" or missing: no JavaScript snippets
  std::string figure_script;          // renderer.mjs; "" = <project home>/sandbox/figure/renderer.mjs
  std::string figure_tmp_root = "/tmp";  // a private 0711 dir per renderer start is made here
  std::uint32_t figure_restart_after = 200;  // jobs per renderer process, then a fresh one
  double figure_start_timeout_s = 60;    // start + warm-up must say "ready" within this (~3 s idle)
  double figure_kill_grace_s = 2;        // host kills the group at timeout + this (renderer answers first)
  double figure_max_timeout_s = 120;     // a job's timeout_s is clamped to (0, this]
  std::uint32_t figure_max_queue = 16;   // jobs waiting behind the running one; more answer "busy"
  std::uint32_t figure_spares = 2;       // fresh pages (plotly loaded) kept ready while idle
  bool figure_netns = true;              // run the renderer in a new, empty network namespace (root)
  bool figure_pidns = true;              // ...and a new PID namespace: when it dies, all of it dies (root)
  std::uint32_t figure_uid = 65533;      // Chromium's uid/gid when we are root (outside the sandbox range)
  std::uint32_t figure_gid = 65533;
  bool figure_chromium_sandbox = true;   // Chromium's own sandbox; false adds --no-sandbox
  bool figure_webgl = true;              // false: WebGL traces answer no_webgl
  bool figure_canvas_capture = true;     // a bokeh page whose canvases alone make its pixels: PNG from them
  std::uint64_t figure_max_bytes = 16u << 20;  // figure JSON cap
  std::uint32_t figure_max_depth = 64;   // JSON nesting cap (a bomb is refused before parsing)
  std::uint32_t figure_heap_mb = 1024;   // V8 heap cap of each page
  std::uint32_t figure_stderr_keep_bytes = 8192;  // renderer stderr tail kept for the log
};

// Registers every field of c as its PLOTQ_* setting (figure_settings.cpp); the defaults are c's values.
void register_figure_settings(Settings& s, FigureConfig& c);
// renderer.mjs's arguments for the switches c turns off (--no-chromium-sandbox, --no-webgl, ...).
std::vector<const char*> figure_switches_off(const FigureConfig& c);
// The registration loaded alone from the environment; throws plotq::ConfigError naming every bad
// value (nothing falls back silently).
FigureConfig figure_config_from_env();

// Codes: the renderer's vocabulary (request_invalid, figure_missing, figure_not_regular,
// figure_empty, figure_too_large, figure_too_deep, figure_invalid, figure_size_invalid, no_webgl,
// draw_failed, size_mismatch, output_failed, timeout, browser_failed) plus the host's own:
// runtime_unavailable, renderer_start_failed, renderer_crashed, protocol_error, busy, shutdown,
// cancelled (cancel()).
struct FigureResult {
  bool ok = false;
  std::string code;    // "" when ok
  std::string detail;  // short, never quotes the figure
  int width = 0;       // PNG size when ok: 3200x1800 or 2400x2400
  int height = 0;
  std::uint64_t bytes = 0;
  double render_ms = 0;  // the renderer's own time for the job
  double wall_s = 0;     // host time from render() to the callback (queue and start included)
  std::string library;       // "plotly" or "bokeh" when ok
  bool reused = false;       // drawn on a page that had drawn (and cleared) an earlier figure
  int blocked_requests = 0;  // requests the page's route aborted
  int csp_violations = 0;    // loads/scripts the page's Content-Security-Policy refused
  // Snippets: how the page said it was ready (signal | settled | deadline), popups it tried to
  // open (closed), and for snippet_error / import_refused the snippet's error class and line.
  std::string ready;
  int popups = 0;
  std::optional<std::string> error_class;
  std::optional<int> error_line;
};

// How a JavaScript snippet is drawn: its library (chartjs | d3 | echarts | highcharts | muix), the
// theme its page's tokens are for, and bare (the same page without its rules: no
// Content-Security-Policy, no request routing; the sweep's control, never for a user's code).
struct SnippetJob {
  std::string library;
  std::string theme = "light";
  bool bare = false;
};

class FigureRenderer {
 public:
  FigureRenderer(boost::asio::io_context& io, FigureConfig config);
  ~FigureRenderer();  // kills the renderer's process group; pending callbacks are dropped
  FigureRenderer(const FigureRenderer&) = delete;
  FigureRenderer& operator=(const FigureRenderer&) = delete;

  // Starts the renderer now (it otherwise starts on the first render()). Safe to call any time.
  void start();

  // Draws the figure JSON at figure_path (absolute; written by sandboxed code, so untrusted) into
  // out_path (absolute). `done` runs once, on the io_context. timeout_s counts from this call and
  // covers queueing and a renderer start. Callable from any thread. Returns the job's id (for cancel).
  // library: "plotly" or "bokeh" (then a figure of the other shape is figure_invalid), or "" (the
  // figure's shape says).
  std::uint64_t render(std::string figure_path, std::string out_path, double timeout_s,
                       std::function<void(FigureResult)> done, std::string library = "");
  // Draws the JavaScript snippet at snippet_path (absolute; the user's code) in a fresh locked page
  // (one job per page, destroyed after it) into out_path, exactly 3200x1800 or 2400x2400 by the
  // snippet's orientation line. Same queue, timeout, cancel and answer as render().
  std::uint64_t render_snippet(std::string snippet_path, std::string out_path, SnippetJob how, double timeout_s,
                               std::function<void(FigureResult)> done);

  // Stops one job (callable from any thread; posted to the io_context). Queued: it answers
  // "cancelled" and is never sent. Being drawn: it answers "cancelled" at once, the renderer closes
  // its page (the draw stops, nothing is written) and the next job waits only for that; a renderer
  // that does not acknowledge within figure_kill_grace_s is killed (the next job gets a fresh one).
  // An id that already answered (or an unknown one) is ignored.
  void cancel(std::uint64_t id);

  // Fails queued jobs with "shutdown" and stops the renderer (posted to the io_context).
  void stop();

  // node, the renderer script, playwright-core and Chromium are present, and the library's
  // JavaScript ("plotly", "bokeh", a snippet library; "": plotly or bokeh) is.
  bool available(const std::string& library = "") const;
  std::string unavailable_reason(const std::string& library = "") const;  // "" when available
  // The snippet libraries' modules dir this renderer draws with (FigureConfig::js_modules).
  const std::string& js_modules() const;
  // The figure JSON cap it reads under (PLOTQ_FIGURE_MAX_BYTES): the sandbox job that writes the
  // JSON is given the same cap, so the setting moves both and the answer reports it.
  std::uint64_t figure_max_bytes() const;

  // Diagnostics (read on the io_context thread): renderer processes started so far, and the pid
  // and process group of the current one (0 when none).
  std::uint64_t starts() const;
  pid_t renderer_pid() const;
  // A renderer process is up and said "ready" (warmed up); false before start() and while one starts.
  bool ready() const;
  // Jobs cancelled while being drawn, and how many of those the renderer acknowledged (its page
  // closed) rather than being killed.
  std::uint64_t cancels_in_flight() const;
  std::uint64_t cancels_acknowledged() const;
  // Figures whose page began the draw (the renderer's {"id", "drawing"} line; log figure_drawing).
  std::uint64_t draws_begun() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace plotq::sandbox
