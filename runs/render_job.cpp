// The asynchronous half of a render (runs/render_job.hpp): the themes one after another through
// the Launcher, figure mode's draw on the host, cancel. Every decision is a pure function of
// runs/render_interpret.cpp.
#include "common/files.hpp"
#include "runs/render_job.hpp"
#include "sandbox/canvas.hpp"
#include "common/theme.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/env.hpp"
#include "common/log.hpp"
#include "runs/libraries.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "sandbox/output.hpp"

namespace plotq::runs {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// The draw is not started with less time than this left (the renderer needs a few ms per page).
constexpr double kMinDrawS = 0.05;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Writes data into a new file (common/files.hpp: never an existing path, never through a link).
bool write_new(int dirfd, const std::string& name, const std::string& data) {
  int fd = write_new_file(dirfd, name, data);
  return fd >= 0 && ::close(fd) == 0;
}

}  // namespace


// ---------------------------------------------------------------------------------------------
// Renderer

namespace detail {

// What every render of one Renderer shares: the private dir for figure files, the worker that
// writes and reads them (no file I/O on the event loop), and the running renders.
struct RendererShared {
  explicit RendererShared(RenderConfig c) : config(std::move(c)), pool(1) {}
  ~RendererShared() {
    pool.join();
    if (dirfd >= 0) {
      int parent = ::open(config.render_tmp_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (parent >= 0) {
        sandbox::remove_tree(parent, dir_name);
        ::close(parent);
      }
      ::close(dirfd);
    }
  }
  RenderConfig config;
  asio::thread_pool pool;
  std::string dir_name;  // plotq-render-XXXXXX under render_tmp_dir
  std::string dir_path;
  int dirfd = -1;
  std::string dir_error;
  std::uint64_t next_file = 0;
  std::uint64_t next_run = 0;
  // Running renders, held here until they finish (callbacks hold weak references).
  std::map<std::uint64_t, std::shared_ptr<struct RenderRun>> runs;
};

struct RenderRun : std::enable_shared_from_this<RenderRun> {
  RenderRun(asio::io_context& i, sandbox::Launcher& l, sandbox::FigureRenderer* f, std::shared_ptr<RendererShared> s)
      : io(i), launcher(l), figures(f), shared(std::move(s)) {}

  asio::io_context& io;
  sandbox::Launcher& launcher;
  sandbox::FigureRenderer* figures;
  // The figure JSON cap: the renderer's setting; without a renderer (figures are then answered
  // runtime_unavailable) its default.
  std::uint64_t figure_cap() const { return figures ? figures->figure_max_bytes() : sandbox::FigureConfig{}.figure_max_bytes; }
  std::shared_ptr<RendererShared> shared;
  std::uint64_t id = 0;
  RenderRequest req;
  RenderMode mode = RenderMode::plot;
  std::string mode_name() const { return std::string(to_string(mode)); }
  std::function<void(RenderResult)> on_done;
  RenderResult result;
  std::size_t next = 0;
  bool cancelled = false;
  bool finished = false;
  sandbox::JobHandle job;
  bool in_job = false;
  bool drawing = false;
  std::uint64_t draw_token = 0;
  std::optional<std::uint64_t> figure_job;  // the FigureRenderer's id of the draw in progress
  Clock::time_point theme_start;
  ThemeRun current;  // the theme being drawn

  void post_next() {
    auto self = shared_from_this();
    asio::post(io, [self] { self->start_next(); });
  }

  void start_next() {
    if (finished) return;
    if (next >= req.themes.size()) return finish();
    const std::string theme = req.themes[next];
    if (cancelled) {
      ThemeRun r;
      r.theme = theme;
      r.mode = mode_name();
      r.outcome = "cancelled";
      r.message = describe(r);
      return theme_done(std::move(r));
    }
    theme_start = Clock::now();
    if (mode == RenderMode::snippet) {
      // JavaScript: no Python sandbox; the snippet itself goes to the host's Chromium, whose
      // locked page is its sandbox (sandbox/figure/README.md, "JavaScript snippets").
      ThemeRun r;
      r.theme = theme;
      r.mode = mode_name();
      r.job.outputs[render_output_name(mode_name(), theme)] = req.source;
      r.job.attempts = 1;  // a run that was tried (the ledger books attempts 0 as never started)
      return draw(std::move(r));
    }
    in_job = true;
    std::weak_ptr<RenderRun> weak = shared_from_this();
    job = launcher.run(render_job_spec(req, theme, req.timeout_s, figure_cap()), [weak, theme](sandbox::JobResult jr) {
      if (auto self = weak.lock()) self->plot_done(theme, std::move(jr));
    });
  }

  void plot_done(const std::string& theme, sandbox::JobResult jr) {
    in_job = false;
    job = {};
    if (finished) return;
    ThemeRun r = interpret_render_job(std::move(jr), mode_name(), theme);
    if (r.outcome == "ok" && mode == RenderMode::figure) {
      if (!cancelled) return draw(std::move(r));
      // cancelled after the plot step ended, before its answer arrived: nothing is drawn
      r.outcome = "cancelled";
      r.job.outputs.clear();
      r.message = describe(r);
    }
    theme_done(std::move(r));
  }

  // Figure mode's second step: the collected JSON into a fresh host-side file, FigureRenderer draws
  // it within the time the plot step left, the PNG is read back under its cap.
  void draw(ThemeRun r) {
    const std::string out = render_output_name(mode_name(), r.theme);
    std::string json = std::move(r.job.outputs[out]);
    r.job.outputs.clear();
    if (!figures || !figures->available(mode == RenderMode::plot ? "" : req.library)) {
      r.outcome = "runtime_unavailable";
      r.message = describe(r);
      return theme_done(std::move(r));
    }
    if (shared->dirfd < 0) {
      r.outcome = "renderer_error";
      r.figure_code = "io";
      r.message = describe(r);
      return theme_done(std::move(r));
    }
    current = std::move(r);
    drawing = true;
    std::uint64_t token = ++draw_token;
    std::uint64_t n = ++shared->next_file;
    std::string base = std::to_string(id) + "-" + std::to_string(n) + "-" + current.theme;
    pending_json = base + (mode == RenderMode::snippet ? std::string(snippet_extension(req.library)) : std::string(".json"));
    pending_png = base + ".png";
    int dirfd = shared->dirfd;
    std::weak_ptr<RenderRun> weak = shared_from_this();
    std::weak_ptr<RendererShared> weak_shared = shared;
    asio::post(shared->pool, [weak, weak_shared, token, dirfd, name = pending_json, json = std::move(json), &io = io] {
      bool written = write_new(dirfd, name, json);
      asio::post(io, [weak, weak_shared, token, written, name] {
        if (auto self = weak.lock()) return self->json_written(token, written);
        orphan_files(weak_shared, name, "");
      });
    });
  }

  // A step that answers after its render finished (cancelled) removes its own files.
  static void orphan_files(const std::weak_ptr<RendererShared>& weak_shared, const std::string& a,
                           const std::string& b) {
    auto s = weak_shared.lock();  // alive: its dirfd is still open
    if (!s || s->dirfd < 0) return;
    if (!a.empty()) ::unlinkat(s->dirfd, a.c_str(), 0);
    if (!b.empty()) ::unlinkat(s->dirfd, b.c_str(), 0);
  }
  std::string pending_json, pending_png;

  void json_written(std::uint64_t token, bool written) {
    if (token != draw_token || finished) return remove_files(pending_json, pending_png);
    if (!written) {
      current.outcome = "renderer_error";
      current.figure_code = "io";
      return draw_finished();
    }
    double left = req.timeout_s - since(theme_start);
    if (left < kMinDrawS) {
      current.outcome = "timeout";
      current.timed_out = true;
      return draw_finished();
    }
    std::weak_ptr<RenderRun> weak = shared_from_this();
    std::weak_ptr<RendererShared> weak_shared = shared;
    auto draw_start = Clock::now();
    auto on_drawn = [weak, weak_shared, token, draw_start, a = pending_json, b = pending_png](sandbox::FigureResult fr) {
      if (auto self = weak.lock()) return self->figure_done(token, draw_start, std::move(fr));
      orphan_files(weak_shared, a, b);
    };
    const std::string in = shared->dir_path + "/" + pending_json, out = shared->dir_path + "/" + pending_png;
    figure_job = mode == RenderMode::snippet
                     ? figures->render_snippet(in, out, sandbox::SnippetJob{req.library, current.theme, false}, left, on_drawn)
                     : figures->render(in, out, left, on_drawn);
  }

  void figure_done(std::uint64_t token, Clock::time_point draw_start, sandbox::FigureResult fr) {
    if (token != draw_token || finished) return remove_files(pending_json, pending_png);
    figure_job.reset();
    current.draw_s = since(draw_start);
    if (mode == RenderMode::snippet) {
      // The draw is the whole run: its time is the run's (the ledger's wall_s).
      current.wall_s = current.draw_s;
      current.job.wall_s = current.draw_s;
    }
    if (!fr.ok) {
      current.figure_code = fr.code;
      current.outcome = figure_outcome(fr.code);
      current.error_class = fr.error_class;
      current.error_line = fr.error_line;
      if (current.outcome == "guard_refused") current.refusal_rule = "import";
      if (current.outcome == "timeout") current.timed_out = true;
      if (current.outcome == "output_too_large") {
        current.limit = static_cast<double>(figure_cap());
        current.measured.reset();
      }
      return draw_finished();
    }
    // Read the PNG back on the worker: no link followed, a regular file, at most the PNG cap.
    int dirfd = shared->dirfd;
    std::weak_ptr<RenderRun> weak = shared_from_this();
    std::weak_ptr<RendererShared> weak_shared = shared;
    asio::post(shared->pool, [weak, weak_shared, token, dirfd, a = pending_json, b = pending_png, &io = io] {
      sandbox::OutputRead rd = sandbox::read_output(dirfd, b, kMaxPngBytes);
      asio::post(io, [weak, weak_shared, token, a, b, rd = std::move(rd)]() mutable {
        if (auto self = weak.lock()) return self->png_read(token, std::move(rd));
        orphan_files(weak_shared, a, b);
      });
    });
  }

  void png_read(std::uint64_t token, sandbox::OutputRead rd) {
    if (token != draw_token || finished) return remove_files(pending_json, pending_png);
    if (rd.status == sandbox::OutputRead::too_large) {
      current.outcome = "output_too_large";
      current.measured = static_cast<double>(rd.measured);
      current.limit = static_cast<double>(kMaxPngBytes);
      return draw_finished();
    }
    if (rd.status != sandbox::OutputRead::ok) {
      current.outcome = rd.status == sandbox::OutputRead::missing ? "renderer_error" : "output_rejected";
      if (rd.status == sandbox::OutputRead::missing) current.figure_code = "output_failed";
      return draw_finished();
    }
    auto size = png_size(rd.data);
    if (!size) {
      current.outcome = "output_rejected";
      return draw_finished();
    }
    current.width = size->first;
    current.height = size->second;
    // Figure mode stays exact: the renderer sets the canvas itself, so another size is its failure.
    if (!canvas_ok(current.width, current.height)) {
      current.outcome = "canvas_size";
      current.measured = current.width;
      current.limit = sandbox::meant_width(current.width, current.height);
      return draw_finished();
    }
    current.png = std::move(rd.data);
    current.canvas = "exact";
    current.outcome = "ok";
    draw_finished();
  }

  void draw_finished() {
    drawing = false;
    remove_files(pending_json, pending_png);
    ThemeRun r = std::move(current);
    current = ThemeRun();
    r.message = describe(r);
    if (r.outcome != "ok") r.png.reset();
    theme_done(std::move(r));
  }

  void remove_files(const std::string& a, const std::string& b) {
    int dirfd = shared->dirfd;
    if (dirfd < 0 || (a.empty() && b.empty())) return;
    asio::post(shared->pool, [dirfd, a, b] {
      if (!a.empty()) ::unlinkat(dirfd, a.c_str(), 0);
      if (!b.empty()) ::unlinkat(dirfd, b.c_str(), 0);
    });
  }

  void theme_done(ThemeRun r) {
    if (finished) return;
    result.outputs[r.theme] = std::move(r);
    ++next;
    post_next();
  }

  void cancel() {
    if (finished || cancelled) return;
    cancelled = true;
    if (in_job) {
      job.cancel();  // its result comes back as `cancelled` through plot_done
      return;
    }
    if (drawing) {
      // The draw is stopped (its Chromium page closed, FigureRenderer::cancel); its answer
      // ("cancelled") is dropped (the token moves on) and the files are removed when it comes.
      ++draw_token;
      drawing = false;
      if (figure_job && figures) figures->cancel(*figure_job);
      figure_job.reset();
      ThemeRun r = std::move(current);
      current = ThemeRun();
      r.outcome = "cancelled";
      r.png.reset();
      r.message = describe(r);
      theme_done(std::move(r));
    }
  }

  void finish() {
    if (finished) return;
    finished = true;
    shared->runs.erase(id);
    auto cb = std::move(on_done);
    on_done = nullptr;
    if (cb) cb(std::move(result));
  }
};

}  // namespace detail

Renderer::Renderer(asio::io_context& io, sandbox::Launcher& launcher, sandbox::FigureRenderer* figures,
                   RenderConfig config, std::shared_ptr<const Runtime> runtime)
    : io_(io), launcher_(launcher), figures_(figures),
      runtime_(runtime ? std::move(runtime) : std::make_shared<const Runtime>(read_runtime(launcher.config().python))),
      shared_(std::make_shared<detail::RendererShared>(std::move(config))) {
  auto& s = *shared_;
  std::string tmpl = s.config.render_tmp_dir + "/plotq-render-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data())) {  // mode 0700: only this process's user reads the figures
    s.dir_path = buf.data();
    s.dir_name = s.dir_path.substr(s.dir_path.rfind('/') + 1);
    s.dirfd = ::open(s.dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (s.dirfd < 0) {
    s.dir_error = std::string("cannot make a private dir in ") + s.config.render_tmp_dir;
    log_event("render_tmp_unavailable", {{"dir", s.config.render_tmp_dir}});
  }
}

Renderer::~Renderer() {
  auto runs = std::move(shared_->runs);
  shared_->runs.clear();
  for (auto& [id, run] : runs) {
    run->on_done = nullptr;
    run->cancel();
    run->finished = true;
  }
}

const Runtime& Renderer::runtime_for(const std::string& library) const {
  if (render_mode(library) == RenderMode::r) return r_runtime();  // runtime/r, read once per process
  if (render_mode(library) != RenderMode::snippet) return *runtime_;
  // The modules dir the figure renderer really draws with (PLOTQ_JS_MODULES), as plotqd's App reads.
  if (!js_runtime_)
    js_runtime_ = std::make_shared<const Runtime>(
        read_js_runtime(figures_ ? figures_->js_modules() : sandbox::runtime_js_modules()));
  return *js_runtime_;
}

std::string Renderer::support(const std::string& library) const {
  return render_support(library, *runtime_, figures_);
}

RenderHandle Renderer::render(RenderRequest request, std::function<void(RenderResult)> on_done) {
  auto run = std::make_shared<detail::RenderRun>(io_, launcher_, figures_, shared_);
  run->id = ++shared_->next_run;
  run->mode = render_mode(request.library);
  run->on_done = std::move(on_done);
  RenderHandle handle;
  handle.state_ = run;
  std::weak_ptr<detail::RenderRun> weak = run;
  handle.cancel_ = [weak] {
    if (auto r = weak.lock()) r->cancel();
  };
  handle.done_ = [weak] {
    auto r = weak.lock();
    return !r || r->finished;
  };
  // A request the route should have refused, or a library this machine cannot draw: every theme
  // answers at once, no sandbox starts.
  std::string refused;
  if (!validate_render_request(request).empty()) refused = "invalid_request";
  else if (std::string s = render_support(request.library, *runtime_, figures_); s != "ok") refused = s;
  run->req = std::move(request);
  shared_->runs[run->id] = run;
  if (!refused.empty()) {
    for (const auto& theme : run->req.themes) {
      if (!known_theme(theme)) continue;
      ThemeRun r;
      r.theme = theme;
      r.outcome = refused;
      r.message = describe(r);
      run->result.outputs[theme] = std::move(r);
    }
    run->next = run->req.themes.size();
  }
  run->post_next();
  return handle;
}

void RenderHandle::cancel() {
  if (cancel_) cancel_();
}

bool RenderHandle::done() const { return done_ ? done_() : true; }

}  // namespace plotq::runs
