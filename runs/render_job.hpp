// A render: plot code drawn once per theme in the sandbox (plot mode: the PNG is drawn inside it;
// figure mode for plotly and bokeh: the plot step writes plot-<theme>.json, Chromium draws it). One
// RenderResult per request, one ThemeRun per theme, the same shape as POST /render's answer
// (runs/render_interpret.hpp holds those shapes and every pure decision).
// The caller holds the render slot; themes run one after another inside it. runs/README.md has
// the outcome vocabulary and the figure-mode split (plot step in the sandbox, drawing on the host).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runs/render_interpret.hpp"
#include "sandbox/job.hpp"

namespace boost::asio {
class io_context;
}
namespace plotq::sandbox {
class Launcher;
class FigureRenderer;
}  // namespace plotq::sandbox

namespace plotq {
class Settings;
}

namespace plotq::runs {

// Host-side settings of the renderer (env PLOTQ_<FIELD IN UPPER CASE>).
struct RenderConfig {
  // A private 0700 dir per Renderer is made here for the figure JSON handed to Chromium and the
  // PNG it draws (PLOTQ_RENDER_TMP_DIR).
  std::string render_tmp_dir = "/tmp";
  // The R runtime's manifest (PLOTQ_R_RUNTIME; "" = <PLOTQ_HOME>/runtime/r/plotq-r-runtime.json).
  std::string r_runtime_manifest;
};
// Declared in runs/settings.cpp (PLOTQ_RENDER_TMP_DIR, PLOTQ_R_RUNTIME); loaded alone from the environment.
void register_settings(Settings& s, RenderConfig& c);
RenderConfig render_config_from_env();

class RenderHandle {
 public:
  // Stops the render (call on the io_context's thread): the running theme's sandbox job is
  // killed; a theme being drawn is answered `cancelled` at once and its draw stopped
  // (FigureRenderer::cancel closes its Chromium page); themes not started are `cancelled`.
  // on_done still runs, once.
  void cancel();
  bool done() const;

 private:
  friend class Renderer;
  std::weak_ptr<void> state_;
  std::function<void()> cancel_;
  std::function<bool()> done_;
};

namespace detail {
struct RendererShared;
}

class Renderer {
 public:
  // figures may be null: figure-mode libraries then answer runtime_unavailable. runtime: what the
  // launcher's interpreter holds; null = read its manifest now (read_runtime of the launcher's
  // python), which a caller making a Renderer per request avoids by passing the one it read.
  Renderer(boost::asio::io_context& io, sandbox::Launcher& launcher, sandbox::FigureRenderer* figures,
           RenderConfig config = render_config_from_env(), std::shared_ptr<const Runtime> runtime = nullptr);
  // Cancels what still runs; their on_done is not called.
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;
  // Runs every theme of the request one after another; on_done once, on the io_context (never
  // inside render()). Call on the io_context's thread.
  RenderHandle render(RenderRequest request, std::function<void(RenderResult)> on_done);
  Outcome support(const std::string& library) const;
  const Runtime& runtime() const { return *runtime_; }
  // The runtime a library's renders run on: for snippet libraries the JavaScript one (runtime/js,
  // read once, at first use, beside the figure renderer's js_modules()); a sweep's ledger rows record its id.
  const Runtime& runtime_for(const std::string& library) const;

 private:
  boost::asio::io_context& io_;
  sandbox::Launcher& launcher_;
  sandbox::FigureRenderer* figures_;
  std::shared_ptr<const Runtime> runtime_;
  mutable std::shared_ptr<const Runtime> js_runtime_;
  std::shared_ptr<detail::RendererShared> shared_;
};

}  // namespace plotq::runs
