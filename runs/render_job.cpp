#include "runs/render_job.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "common/log.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "runs/record_fields.hpp"
#include "sandbox/output.hpp"

namespace plotq::runs {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kPlotFile = "plot.py";
constexpr const char* kDataFile = "data.csv";
constexpr const char* kResultFile = "result.json";
// The draw is not started with less time than this left (the renderer needs a few ms per page).
constexpr double kMinDrawS = 0.05;
// result.json is a flat object; anything nested deeper is not a harness record.
constexpr int kMaxRecordDepth = 8;

std::string output_name(const std::string& mode, const std::string& theme) {
  return "plot-" + theme + (mode == "figure" ? ".json" : ".png");
}

std::size_t utf8_chars(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

bool matches(const std::string& s, std::size_t max_len, bool upper_ok) {
  if (s.empty() || s.size() > max_len) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              (upper_ok && c >= 'A' && c <= 'Z');
    if (!ok) return false;
  }
  return true;
}

// Nesting depth of a JSON text, brackets outside strings counted without parsing: a record is
// parsed only when it is shallow (nlohmann destroys values recursively).
bool shallow_json(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}



bool plain_word(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  return true;
}

// The harness's plot/figure reasons (sandbox/harness/exits.py PLOT_REASONS) by exit code.
const std::map<int, std::string>& plot_reasons() {
  static const std::map<int, std::string> reasons = {
      {0, "ok"},           {30, "plot_error"},     {31, "guard_refused"},  {32, "plot_exit"},
      {33, "plot_missing"}, {34, "source_invalid"}, {35, "internal_error"},
  };
  return reasons;
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Writes data into a new file (O_EXCL: never an existing path, never through a link), 0600.
bool write_new_file(int dirfd, const std::string& name, const std::string& data) {
  int fd = ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      ::unlinkat(dirfd, name.c_str(), 0);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Pure parts

RenderConfig render_config_from_env() {
  RenderConfig c;
  c.render_tmp_dir = env_string("PLOTQ_RENDER_TMP_DIR", c.render_tmp_dir);
  if (c.render_tmp_dir.empty() || c.render_tmp_dir[0] != '/')
    throw ConfigError("PLOTQ_RENDER_TMP_DIR must be an absolute path");
  return c;
}

std::optional<std::pair<int, int>> png_size(const std::string& bytes) {
  static const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (bytes.size() < 24) return std::nullopt;
  for (int i = 0; i < 8; ++i)
    if (static_cast<unsigned char>(bytes[i]) != kSignature[i]) return std::nullopt;
  auto u32 = [&](std::size_t at) {
    return (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) << 24) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
           (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
           static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 3]));
  };
  if (u32(8) != 13 || bytes.compare(12, 4, "IHDR") != 0) return std::nullopt;
  std::uint32_t w = u32(16), h = u32(20);
  if (w == 0 || h == 0 || w > 0x7fffffffu || h > 0x7fffffffu) return std::nullopt;
  return std::make_pair(static_cast<int>(w), static_cast<int>(h));
}

bool canvas_ok(int width, int height) {
  auto near = [](int v, int target) { return std::abs(v - target) <= kCanvasTolerancePx; };
  return (near(width, 3200) && near(height, 1800)) || (near(width, 2400) && near(height, 2400));
}

std::string render_support(const std::string& library, const sandbox::FigureRenderer* figures) {
  if (library == "matplotlib" || library == "seaborn") return "ok";
  if (library == "plotly") return figures && figures->available() ? "ok" : "runtime_unavailable";
  // The Python bokeh package is not in Debian's archive (python3-bokeh does not exist).
  if (library == "bokeh") return "runtime_unavailable";
  return "invalid_library";
}

std::string render_mode(const std::string& library) { return library == "plotly" ? "figure" : "plot"; }

std::string validate_render_request(const RenderRequest& r) {
  if (!matches(r.job_id, 64, true)) return "job_id";
  if (!matches(r.library, 32, false)) return "library";
  if (r.source.empty() || utf8_chars(r.source) > kMaxRenderSourceChars) return "source";
  if (utf8_chars(r.data_csv) > kMaxDataCsvChars) return "data_csv";
  if (!(r.timeout_s > 0) || !(r.timeout_s <= kMaxRenderTimeoutS)) return "timeout_s";
  if (r.themes.empty() || r.themes.size() > 2) return "themes";
  for (const auto& t : r.themes)
    if (t != "light" && t != "dark") return "themes";
  if (r.themes.size() == 2 && r.themes[0] == r.themes[1]) return "themes";
  return "";
}

sandbox::JobSpec render_job_spec(const RenderRequest& request, const std::string& theme, double timeout_s) {
  std::string mode = render_mode(request.library);
  sandbox::JobSpec spec;
  spec.mode = mode;
  spec.files[kPlotFile] = request.source;
  if (!request.data_csv.empty()) spec.files[kDataFile] = request.data_csv;
  spec.argv = {"--" + mode, kPlotFile};
  spec.env["ANYPLOT_THEME"] = theme;
  spec.timeout_s = timeout_s;
  spec.outputs[output_name(mode, theme)] = mode == "figure" ? kMaxFigureBytes : kMaxPngBytes;
  spec.outputs[kResultFile] = kMaxRenderRecordBytes;
  spec.label = "render " + request.job_id + " " + theme;
  return spec;
}

std::string figure_outcome(const std::string& code) {
  if (code == "figure_missing") return "no_output";
  if (code == "figure_not_regular") return "output_rejected";
  if (code == "figure_too_large") return "output_too_large";
  if (code == "figure_empty" || code == "figure_too_deep" || code == "figure_invalid" || code == "figure_size_invalid")
    return "figure_invalid";
  if (code == "no_webgl" || code == "draw_failed" || code == "timeout" || code == "runtime_unavailable") return code;
  if (code == "size_mismatch") return "canvas_size";
  if (code == "shutdown") return "cancelled";
  return "renderer_error";  // request_invalid, output_failed, browser_failed, renderer_*, protocol_error, busy
}

ThemeRun interpret_render_job(sandbox::JobResult job, const std::string& mode, const std::string& theme) {
  ThemeRun r;
  r.theme = theme;
  r.mode = mode;
  r.exit_code = job.exit_code;
  r.timed_out = job.timed_out;
  r.wall_s = job.wall_s;
  r.cpu_s = job.cpu_s;
  r.max_rss_mb = job.max_rss_mb;
  r.attempts = job.attempts > 0 ? job.attempts : 1;
  r.measured = job.measured;
  r.limit = job.limit;
  const std::string out = output_name(mode, theme);
  std::optional<std::string> figure_json;
  auto done = [&](std::string outcome) {
    r.outcome = std::move(outcome);
    job.outputs.clear();
    if (figure_json && r.outcome == "ok") job.outputs[out] = std::move(*figure_json);
    r.job = std::move(job);
    r.message = describe(r);
    return r;
  };

  // The sandbox's verdict comes first: a stop by the host, a crash, a refused layer, an output
  // that was not a regular file or was over its cap.
  if (job.reason != sandbox::Reason::ok && job.reason != sandbox::Reason::nonzero_exit)
    return done(sandbox::to_string(job.reason));

  // The record is written inside the sandbox: it counts only when it agrees with the process.
  nlohmann::json rec;
  auto rec_text = job.outputs.find(kResultFile);
  if (rec_text != job.outputs.end() && shallow_json(rec_text->second, kMaxRecordDepth))
    rec = nlohmann::json::parse(rec_text->second, nullptr, false);
  int exit_code = job.exit_code.value_or(-1);
  auto rec_exit = int_field(rec, "exit_code");
  auto rec_reason = str_field(rec, "reason");
  auto known = plot_reasons().find(exit_code);
  bool agrees = rec.is_object() && rec_exit && *rec_exit == exit_code && rec_reason && known != plot_reasons().end() &&
                known->second == *rec_reason && str_field(rec, "mode") == mode && str_field(rec, "theme") == theme &&
                str_field(rec, "output") == out;
  if (!agrees) return done("harness_error");

  if (rec.contains("error") && rec["error"].is_object()) {
    auto cls = str_field(rec["error"], "class");
    if (cls && plain_class_name(*cls)) r.error_class = cls;
    if (auto line = int_field(rec["error"], "line")) r.error_line = static_cast<int>(*line);
  }
  if (rec.contains("refusal") && rec["refusal"].is_object()) {
    auto rule = str_field(rec["refusal"], "rule");
    if (rule && plain_word(*rule)) r.refusal_rule = rule;
    if (auto line = int_field(rec["refusal"], "line")) r.error_line = static_cast<int>(*line);
  }
  if (*rec_reason == "source_invalid") {
    if (auto m = int_field(rec, "measured")) r.measured = static_cast<double>(*m);
    if (auto l = int_field(rec, "limit")) r.limit = static_cast<double>(*l);
  }
  if (*rec_reason != "ok") return done(*rec_reason);

  auto file = job.outputs.find(out);
  if (file == job.outputs.end()) return done("no_output");
  if (mode == "figure") {
    figure_json = std::move(file->second);
    return done("ok");
  }
  auto size = png_size(file->second);
  if (!size) return done("output_rejected");
  r.width = size->first;
  r.height = size->second;
  if (!canvas_ok(r.width, r.height)) {
    r.measured = r.width;
    r.limit = r.width * 3 >= r.height * 4 ? 3200 : 2400;  // the nearer canvas by shape (w/h >= 4/3)
    return done("canvas_size");
  }
  r.png = std::move(file->second);
  return done("ok");
}

std::string describe(const ThemeRun& r) {
  const std::string& o = r.outcome;
  const bool figure = r.mode == "figure";
  auto at_line = [&] { return r.error_line ? " at line " + std::to_string(*r.error_line) : std::string(); };
  auto mib = [](std::optional<double> v) {
    return v ? std::to_string(static_cast<long long>(std::llround(*v / 1048576.0))) + " MiB" : std::string("its cap");
  };
  if (o == "ok")
    return r.png ? "Rendered a " + std::to_string(r.width) + "x" + std::to_string(r.height) + " image."
                 : "The plot step finished; the figure is drawn next.";
  if (o == "plot_error") return "The plot raised " + r.error_class.value_or("an error") + at_line() + ".";
  if (o == "plot_exit") return "The plot ended itself with an error status (sys.exit)" + at_line() + ".";
  if (o == "guard_refused")
    return "The plot tried something plot code may not do (" + r.refusal_rule.value_or("refused") + ")" + at_line() +
           ", so the render was stopped.";
  if (o == "no_output")
    return figure ? "The plot ran but made no figure: call fig.write_image(...) or fig.show()."
                  : "The plot ran but saved no image: save it with fig.savefig(f\"plot-{THEME}.png\").";
  if (o == "canvas_size")
    return "The image is " + std::to_string(r.width) + "x" + std::to_string(r.height) +
           "; it must be 3200x1800 (figsize=(16, 9), dpi=200) or 2400x2400 (figsize=(12, 12), dpi=200).";
  if (o == "output_too_large") {
    bool image = !figure || (r.limit && *r.limit == static_cast<double>(kMaxPngBytes));
    return std::string(image ? "The image" : "The figure") + " is larger than " + mib(r.limit) + ".";
  }
  if (o == "output_rejected")
    return figure ? "The plot's figure file is not a regular file." : "The plot's image is not a regular PNG file.";
  if (o == "figure_invalid")
    return "The figure could not be read as a plotly figure (" + r.figure_code.value_or("figure_invalid") + ").";
  if (o == "draw_failed") return "The figure could not be drawn.";
  if (o == "no_webgl") return "The figure needs WebGL, which is not available here.";
  if (o == "renderer_error") return "The figure renderer failed (" + r.figure_code.value_or("unknown") + ").";
  if (o == "runtime_unavailable") return "This plotting library cannot be rendered here.";
  if (o == "invalid_library") return "This plotting library is not supported.";
  if (o == "invalid_request") return "The render request is not valid.";
  if (o == "source_invalid") return "The plot file is too large or not UTF-8.";
  if (o == "timeout") return "The code did not finish within the time limit.";
  if (o == "cpu") return "The code used more CPU time than allowed.";
  if (o == "memory") return "The code used more memory than allowed.";
  if (o == "disk") return "The code wrote more data to disk than allowed.";
  if (o == "files") return "The code created too many files.";
  if (o == "cancelled") return "The render was cancelled.";
  if (o == "crashed") return "The plot's process crashed.";
  if (o == "harness_error") return "The render ended without a harness record that matches the process.";
  if (o == "launcher" || o == "exec_denied" || o == "sandbox_unavailable" || o == "low_memory" || o == "io")
    return "The sandbox could not run the plot (" + o + ").";
  return "The render failed (" + o + ").";
}

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
  std::shared_ptr<RendererShared> shared;
  std::uint64_t id = 0;
  RenderRequest req;
  std::string mode;
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
      r.mode = mode;
      r.outcome = "cancelled";
      r.message = describe(r);
      return theme_done(std::move(r));
    }
    theme_start = Clock::now();
    in_job = true;
    std::weak_ptr<RenderRun> weak = shared_from_this();
    job = launcher.run(render_job_spec(req, theme, req.timeout_s), [weak, theme](sandbox::JobResult jr) {
      if (auto self = weak.lock()) self->plot_done(theme, std::move(jr));
    });
  }

  void plot_done(const std::string& theme, sandbox::JobResult jr) {
    in_job = false;
    job = {};
    if (finished) return;
    ThemeRun r = interpret_render_job(std::move(jr), mode, theme);
    if (r.outcome == "ok" && mode == "figure") {
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
    const std::string out = output_name(mode, r.theme);
    std::string json = std::move(r.job.outputs[out]);
    r.job.outputs.clear();
    if (!figures || !figures->available()) {
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
    pending_json = base + ".json";
    pending_png = base + ".png";
    int dirfd = shared->dirfd;
    std::weak_ptr<RenderRun> weak = shared_from_this();
    std::weak_ptr<RendererShared> weak_shared = shared;
    asio::post(shared->pool, [weak, weak_shared, token, dirfd, name = pending_json, json = std::move(json), &io = io] {
      bool written = write_new_file(dirfd, name, json);
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
    figure_job = figures->render(shared->dir_path + "/" + pending_json, shared->dir_path + "/" + pending_png, left,
                    [weak, weak_shared, token, draw_start, a = pending_json, b = pending_png](sandbox::FigureResult fr) {
                      if (auto self = weak.lock()) return self->figure_done(token, draw_start, std::move(fr));
                      orphan_files(weak_shared, a, b);
                    });
  }

  void figure_done(std::uint64_t token, Clock::time_point draw_start, sandbox::FigureResult fr) {
    if (token != draw_token || finished) return remove_files(pending_json, pending_png);
    figure_job.reset();
    current.draw_s = since(draw_start);
    if (!fr.ok) {
      current.figure_code = fr.code;
      current.outcome = figure_outcome(fr.code);
      if (current.outcome == "timeout") current.timed_out = true;
      if (current.outcome == "output_too_large") {
        current.limit = static_cast<double>(kMaxFigureBytes);
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
    if (!canvas_ok(current.width, current.height)) {
      current.outcome = "canvas_size";
      current.measured = current.width;
      current.limit = current.width * 3 >= current.height * 4 ? 3200 : 2400;
      return draw_finished();
    }
    current.png = std::move(rd.data);
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
                   RenderConfig config)
    : io_(io), launcher_(launcher), figures_(figures),
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

std::string Renderer::support(const std::string& library) const { return render_support(library, figures_); }

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
  else if (std::string s = render_support(request.library, figures_); s != "ok") refused = s;
  run->req = std::move(request);
  shared_->runs[run->id] = run;
  if (!refused.empty()) {
    for (const auto& theme : run->req.themes) {
      if (theme != "light" && theme != "dark") continue;
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
