// A render: plot code drawn once per theme in the sandbox (plot mode for matplotlib/seaborn,
// figure mode for plotly: the plot step writes plot-<theme>.json, Chromium draws it). One
// RenderResult per request, one ThemeRun per theme, the same shape as POST /render's answer.
// The caller holds the render slot; themes run one after another inside it.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/job.hpp"

namespace boost::asio {
class io_context;
}
namespace plotq::sandbox {
class Launcher;
class FigureRenderer;
}  // namespace plotq::sandbox

namespace plotq::runs {

inline constexpr std::size_t kMaxRenderSourceChars = 131'072;
inline constexpr std::size_t kMaxDataCsvChars = 2'097'152;
inline constexpr double kMaxRenderTimeoutS = 120;
inline constexpr std::size_t kMaxPngBytes = 10'485'760;
inline constexpr int kCanvasTolerancePx = 16;

struct RenderRequest {
  std::string job_id;
  std::string source;   // the plot file
  std::string library;  // matplotlib | seaborn | plotly (bokeh: runtime_unavailable)
  std::vector<std::string> themes;  // 1..2 of light|dark, distinct
  double timeout_s = 60;
  std::string data_csv;  // written as data.csv next to plot.py when not empty
};

struct ThemeRun {
  std::string theme;
  // "ok", or a fixed reason: plot_error (the plot raised: error_class/error_line), no_output,
  // canvas_size (measured "WxH" in message, measured/limit = width), output_too_large,
  // output_rejected, guard_refused, figure_invalid, draw_failed, no_webgl, timeout, memory, cpu,
  // disk, files, cancelled, launcher, exec_denied, harness_error, ...
  std::string outcome = "ok";
  std::optional<int> exit_code;
  bool timed_out = false;
  std::optional<std::string> png;  // bytes, only when outcome == ok
  int width = 0, height = 0;       // from the PNG header when a PNG was read
  std::optional<std::string> error_class;
  std::optional<int> error_line;
  std::optional<double> measured, limit;
  std::string message;  // plotq's own sentence (never what the code printed)
  double wall_s = 0;
  double cpu_s = 0;
  double max_rss_mb = 0;
  int attempts = 1;
  sandbox::JobResult job;  // the plot step's launcher result (for the ledger)
};

struct RenderResult {
  std::map<std::string, ThemeRun> outputs;  // by theme
};

// What a renderer can serve here: "ok", or "runtime_unavailable" (no Chromium/plotly.js for plotly,
// bokeh always), or "invalid_library".
std::string render_support(const std::string& library, const sandbox::FigureRenderer* figures);

class RenderHandle {
 public:
  void cancel();
  bool done() const;

 private:
  friend class Renderer;
  std::weak_ptr<void> state_;
  std::function<void()> cancel_;
};

class Renderer {
 public:
  // figures may be null: plotly then answers runtime_unavailable.
  Renderer(boost::asio::io_context& io, sandbox::Launcher& launcher, sandbox::FigureRenderer* figures);
  // Runs every theme of the request one after another; on_done once, on the io_context.
  RenderHandle render(RenderRequest request, std::function<void(RenderResult)> on_done);
  std::string support(const std::string& library) const;

 private:
  boost::asio::io_context& io_;
  sandbox::Launcher& launcher_;
  sandbox::FigureRenderer* figures_;
};

// PNG IHDR size, or nullopt when the bytes are not a PNG.
std::optional<std::pair<int, int>> png_size(const std::string& bytes);
// 3200x1800 or 2400x2400 within kCanvasTolerancePx.
bool canvas_ok(int width, int height);

}  // namespace plotq::runs
