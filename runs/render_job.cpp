// The asynchronous half of a render (runs/render_job.hpp): the themes one after another through
// the Launcher, figure mode's draw on the host, cancel. Every decision is a pure function of
// runs/render_interpret.cpp.
#include "runs/render_job.hpp"
#include "sandbox/canvas.hpp"

#include <chrono>
#include <map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/log.hpp"
#include "runs/libraries.hpp"
#include "runs/scratch_dir.hpp"
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

}  // namespace


// ---------------------------------------------------------------------------------------------
// Renderer

namespace detail {

// What every render of one Renderer shares: the scratch dir for the draws' files, the worker that
// writes and reads them (no file I/O on the event loop), and the running renders.
struct RendererShared {
  explicit RendererShared(RenderConfig c) : config(std::move(c)), scratch(config.render_tmp_dir), pool(1) {}
  ~RendererShared() { pool.join(); }  // then the scratch dir goes, with what is left in it
  RenderConfig config;
  ScratchDir scratch;
  asio::thread_pool pool;
  std::uint64_t next_run = 0;
  // Running renders, held here until they finish (callbacks hold weak references).
  std::map<std::uint64_t, std::shared_ptr<struct RenderRun>> runs;
};

struct RenderRun : std::enable_shared_from_this<RenderRun> {
  // Where the render is. Themes run one after another: next -> in_job (-> drawing) -> next ...
  enum class State {
    next,        // between themes: the next one is posted
    in_job,      // a theme's plot step runs in the sandbox
    drawing,     // a theme's figure or snippet is written, drawn by Chromium and its PNG read back
    cancelling,  // cancelled while in_job: the killed job's answer is awaited
    cancelled,   // cancelled: every theme left answers cancelled
    finished,    // on_done ran (or the Renderer went): nothing more happens
  };

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
  std::function<void(RenderResult)> on_done;
  RenderResult result;
  std::size_t next = 0;
  State state = State::next;
  sandbox::JobHandle job;
  std::uint64_t draw_token = 0;
  std::optional<std::uint64_t> figure_job;  // the FigureRenderer's id of the draw in progress
  Clock::time_point theme_start;
  ThemeRun current;  // the theme being drawn
  DrawFiles files;   // its files in the scratch dir

  bool finished() const { return state == State::finished; }
  bool cancel_asked() const { return state == State::cancelling || state == State::cancelled; }

  void post_next() {
    auto self = shared_from_this();
    asio::post(io, [self] { self->start_next(); });
  }

  void start_next() {
    if (finished()) return;
    if (next >= req.themes.size()) return finish();
    const std::string theme = req.themes[next];
    if (state == State::cancelled) {
      return theme_done(not_started(theme, Outcome::cancelled, mode));
    }
    theme_start = Clock::now();
    if (mode == RenderMode::snippet) {
      // JavaScript: no Python sandbox; the snippet itself goes to the host's Chromium, whose
      // locked page is its sandbox (sandbox/figure/README.md, "JavaScript snippets").
      ThemeRun r;
      r.theme = theme;
      r.mode = mode;
      r.job.attempts = 1;  // a run that was tried (the ledger books attempts 0 as never started)
      return draw(std::move(r), req.source);
    }
    state = State::in_job;
    std::weak_ptr<RenderRun> weak = shared_from_this();
    job = launcher.run(render_job_spec(req, theme, req.timeout_s, figure_cap()), [weak, theme](sandbox::JobResult jr) {
      if (auto self = weak.lock()) self->plot_done(theme, std::move(jr));
    });
  }

  void plot_done(const std::string& theme, sandbox::JobResult jr) {
    job = {};
    if (finished()) return;
    const bool cancelled = state == State::cancelling;
    state = cancelled ? State::cancelled : State::next;
    ThemeRun r = interpret_render_job(std::move(jr), mode, theme);
    if (r.outcome == Outcome::ok && mode == RenderMode::figure) {
      if (!cancelled) {
        std::string figure_json = std::move(r.job.outputs[render_output_name(mode, theme)]);
        r.job.outputs.clear();
        return draw(std::move(r), std::move(figure_json));
      }
      // cancelled after the plot step ended, before its answer arrived: nothing is drawn
      r.outcome = Outcome::cancelled;
      r.job.outputs.clear();
      r.message = describe(r);
    }
    theme_done(std::move(r));
  }

  // The host's draw (figure mode's second step, or a whole snippet): its input (the figure JSON,
  // or the snippet's JavaScript) into a fresh scratch file, FigureRenderer draws it within the
  // time left, the PNG is read back under its cap.
  void draw(ThemeRun r, std::string input) {
    if (!figures || !figures->available(mode == RenderMode::plot ? "" : req.library)) {
      r.outcome = Outcome::runtime_unavailable;
      r.message = describe(r);
      return theme_done(std::move(r));
    }
    if (!shared->scratch.ok()) {
      r.outcome = Outcome::renderer_error;
      r.figure_code = "io";
      r.message = describe(r);
      return theme_done(std::move(r));
    }
    current = std::move(r);
    state = State::drawing;
    std::uint64_t token = ++draw_token;
    files = shared->scratch.next_draw(
        id, current.theme, mode == RenderMode::snippet ? snippet_extension(req.library) : std::string_view(".json"));
    int dirfd = shared->scratch.fd();
    std::weak_ptr<RenderRun> weak = shared_from_this();
    std::weak_ptr<RendererShared> weak_shared = shared;
    asio::post(shared->pool, [weak, weak_shared, token, dirfd, f = files, input = std::move(input), &io = io] {
      bool written = write_draw_input(dirfd, f, input);
      asio::post(io, [weak, weak_shared, token, written, f] {
        if (auto self = weak.lock()) return self->input_written(token, written);
        orphan_files(weak_shared, f);
      });
    });
  }

  // A step that answers after its render finished (cancelled) removes its own files.
  static void orphan_files(const std::weak_ptr<RendererShared>& weak_shared, const DrawFiles& f) {
    auto s = weak_shared.lock();  // alive: its scratch dir is still open
    if (s && s->scratch.ok()) remove_draw_files(s->scratch.fd(), f);
  }

  // A stale step (its draw cancelled, or the render over) drops its answer.
  bool stale(std::uint64_t token) const { return token != draw_token || finished(); }

  void input_written(std::uint64_t token, bool written) {
    if (stale(token)) return remove_files(files);
    if (!written) {
      current.outcome = Outcome::renderer_error;
      current.figure_code = "io";
      return draw_finished();
    }
    double left = req.timeout_s - since(theme_start);
    if (left < kMinDrawS) {
      current.outcome = Outcome::timeout;
      current.timed_out = true;
      return draw_finished();
    }
    std::weak_ptr<RenderRun> weak = shared_from_this();
    std::weak_ptr<RendererShared> weak_shared = shared;
    auto draw_start = Clock::now();
    auto on_drawn = [weak, weak_shared, token, draw_start, f = files](sandbox::FigureResult fr) {
      if (auto self = weak.lock()) return self->figure_done(token, draw_start, std::move(fr));
      orphan_files(weak_shared, f);
    };
    const std::string in = shared->scratch.path(files.input), out = shared->scratch.path(files.png);
    figure_job = mode == RenderMode::snippet
                     ? figures->render_snippet(in, out, sandbox::SnippetJob{req.library, current.theme, false}, left, on_drawn)
                     : figures->render(in, out, left, on_drawn);
  }

  void figure_done(std::uint64_t token, Clock::time_point draw_start, sandbox::FigureResult fr) {
    if (stale(token)) return remove_files(files);
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
      if (current.outcome == Outcome::guard_refused) current.refusal_rule = "import";
      if (current.outcome == Outcome::timeout) current.timed_out = true;
      if (current.outcome == Outcome::output_too_large) {
        current.limit = static_cast<double>(figure_cap());
        current.measured.reset();
      }
      return draw_finished();
    }
    // Read the PNG back on the worker: no link followed, a regular file, at most the PNG cap.
    int dirfd = shared->scratch.fd();
    std::weak_ptr<RenderRun> weak = shared_from_this();
    std::weak_ptr<RendererShared> weak_shared = shared;
    asio::post(shared->pool, [weak, weak_shared, token, dirfd, f = files, &io = io] {
      sandbox::OutputRead rd = sandbox::read_output(dirfd, f.png, kMaxPngBytes);
      asio::post(io, [weak, weak_shared, token, f, rd = std::move(rd)]() mutable {
        if (auto self = weak.lock()) return self->png_read(token, std::move(rd));
        orphan_files(weak_shared, f);
      });
    });
  }

  void png_read(std::uint64_t token, sandbox::OutputRead rd) {
    if (stale(token)) return remove_files(files);
    if (rd.status == sandbox::OutputRead::too_large) {
      current.outcome = Outcome::output_too_large;
      current.measured = static_cast<double>(rd.measured);
      current.limit = static_cast<double>(kMaxPngBytes);
      return draw_finished();
    }
    if (rd.status != sandbox::OutputRead::ok) {
      current.outcome = rd.status == sandbox::OutputRead::missing ? Outcome::renderer_error : Outcome::output_rejected;
      if (rd.status == sandbox::OutputRead::missing) current.figure_code = "output_failed";
      return draw_finished();
    }
    auto size = png_size(rd.data);
    if (!size) {
      current.outcome = Outcome::output_rejected;
      return draw_finished();
    }
    current.width = size->first;
    current.height = size->second;
    // Figure mode stays exact: the renderer sets the canvas itself, so another size is its failure.
    if (!canvas_ok(current.width, current.height)) {
      current.outcome = Outcome::canvas_size;
      current.measured = current.width;
      current.limit = sandbox::meant_width(current.width, current.height);
      return draw_finished();
    }
    current.png = std::move(rd.data);
    current.canvas = "exact";
    current.outcome = Outcome::ok;
    draw_finished();
  }

  void draw_finished() {
    state = State::next;
    remove_files(files);
    ThemeRun r = std::move(current);
    current = ThemeRun();
    r.message = describe(r);
    if (r.outcome != Outcome::ok) r.png.reset();
    theme_done(std::move(r));
  }

  void remove_files(const DrawFiles& f) {
    if (!shared->scratch.ok() || (f.input.empty() && f.png.empty())) return;
    asio::post(shared->pool, [dirfd = shared->scratch.fd(), f] { remove_draw_files(dirfd, f); });
  }

  void theme_done(ThemeRun r) {
    if (finished()) return;
    result.outputs[r.theme] = std::move(r);
    ++next;
    post_next();
  }

  void cancel() {
    if (finished() || cancel_asked()) return;
    const State was = state;
    state = State::cancelled;
    if (was == State::in_job) {
      state = State::cancelling;
      job.cancel();  // its result comes back as `cancelled` through plot_done
      return;
    }
    if (was == State::drawing) {
      // The draw is stopped (its Chromium page closed, FigureRenderer::cancel); its answer
      // ("cancelled") is dropped (the token moves on) and the files are removed when it comes.
      ++draw_token;
      if (figure_job && figures) figures->cancel(*figure_job);
      figure_job.reset();
      ThemeRun r = std::move(current);
      current = ThemeRun();
      r.outcome = Outcome::cancelled;
      r.png.reset();
      r.message = describe(r);
      theme_done(std::move(r));
    }
  }

  void finish() {
    if (finished()) return;
    state = State::finished;
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
      shared_(std::make_shared<detail::RendererShared>(std::move(config))) {}

Renderer::~Renderer() {
  auto runs = std::move(shared_->runs);
  shared_->runs.clear();
  for (auto& [id, run] : runs) {
    run->on_done = nullptr;
    run->cancel();
    run->state = detail::RenderRun::State::finished;
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

Outcome Renderer::support(const std::string& library) const {
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
    return !r || r->finished();
  };
  // A request the route should have refused, or a library this machine cannot draw: every theme
  // answers at once, no sandbox starts.
  Outcome refused = Outcome::ok;
  if (!validate_render_request(request).empty()) refused = Outcome::invalid_request;
  else refused = render_support(request.library, *runtime_, figures_);
  run->req = std::move(request);
  shared_->runs[run->id] = run;
  if (refused != Outcome::ok) {
    run->result = refused_render(run->req.themes, refused);
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
