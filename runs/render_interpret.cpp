// The pure half of a render (runs/render_interpret.hpp): request checks, the plot step's job spec,
// the cross-check of its result against the harness's record, the PNG header, the outcome
// sentences. No I/O; the asynchronous run is runs/render_job.cpp.
#include "runs/render_interpret.hpp"
#include "sandbox/canvas.hpp"
#include "common/theme.hpp"

#include <cmath>
#include <cstdlib>
#include <map>

#include <nlohmann/json.hpp>

#include "common/text.hpp"
#include "runs/libraries.hpp"
#include "runs/outcome.hpp"
#include "runs/record_fields.hpp"
#include "runs/runtime.hpp"
#include "sandbox/figure_renderer.hpp"

namespace plotq::runs {

namespace {

constexpr const char* kPlotFile = "plot.py";
constexpr const char* kRPlotFile = "plot.R";
constexpr const char* kDataFile = "data.csv";
constexpr const char* kResultFile = "result.json";


bool matches(const std::string& s, std::size_t max_len, bool upper_ok) {
  if (s.empty() || s.size() > max_len) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              (upper_ok && c >= 'A' && c <= 'Z');
    if (!ok) return false;
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
const std::map<int, Outcome>& plot_reasons() {
  static const std::map<int, Outcome> reasons = {
      {0, Outcome::ok},           {30, Outcome::plot_error},     {31, Outcome::guard_refused},
      {32, Outcome::plot_exit},   {33, Outcome::plot_missing},   {34, Outcome::source_invalid},
      {35, Outcome::internal_error},
  };
  return reasons;
}

}  // namespace

std::string render_output_name(RenderMode mode, const std::string& theme) {
  return "plot-" + theme + (mode == RenderMode::figure ? ".json" : ".png");
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

bool canvas_ok(int width, int height) { return sandbox::on_canvas(width, height, kCanvasTolerancePx); }

std::string canvas_of(int width, int height) { return canvas_ok(width, height) ? "exact" : "off"; }

Outcome render_support(const std::string& library, const Runtime& runtime, const sandbox::FigureRenderer* figures) {
  const RenderMode mode = render_mode(library);
  // An R library's packages are the R runtime's (runtime/r): the one passed when it is an R
  // runtime (tests), else this process's r_runtime().
  const Runtime& holds = mode == RenderMode::r && runtime.r.empty() ? r_runtime() : runtime;
  bool chromium = mode == RenderMode::figure || mode == RenderMode::snippet;
  return library_support(library, holds.packages, figures && figures->available(chromium ? library : ""));
}

RenderMode render_mode(const std::string& library) {
  const Library* l = find_library(library);
  return l ? l->mode : RenderMode::plot;
}

std::string validate_render_request(const RenderRequest& r) {
  if (!matches(r.job_id, 64, true)) return "job_id";
  if (!matches(r.library, 32, false)) return "library";
  if (r.source.empty() || utf8_chars(r.source) > kMaxRenderSourceChars) return "source";
  if (utf8_chars(r.data_csv) > kMaxDataCsvChars) return "data_csv";
  if (!r.data_csv.empty() && render_mode(r.library) == RenderMode::snippet) return "data_csv";  // a page has no files
  if (!(r.timeout_s > 0) || !(r.timeout_s <= kMaxRenderTimeoutS)) return "timeout_s";
  if (!themes_problem(r.themes).empty()) return "themes";
  return "";
}

sandbox::JobSpec render_job_spec(const RenderRequest& request, const std::string& theme, double timeout_s,
                                 std::uint64_t figure_max_bytes) {
  // plot | figure | r: snippets run no sandbox job. An R file is plot.R, run by rharness.R.
  const RenderMode mode = render_mode(request.library);
  const char* plot_file = mode == RenderMode::r ? kRPlotFile : kPlotFile;
  sandbox::JobSpec spec;
  spec.mode = std::string(to_string(mode));
  spec.files[plot_file] = request.source;
  if (!request.data_csv.empty()) spec.files[kDataFile] = request.data_csv;
  spec.argv = {mode == RenderMode::r ? std::string("--plot") : "--" + spec.mode, plot_file};
  spec.env["ANYPLOT_THEME"] = theme;
  spec.warm_for = request.library;
  spec.timeout_s = timeout_s;
  spec.outputs[render_output_name(mode, theme)] = mode == RenderMode::figure ? figure_max_bytes : kMaxPngBytes;
  spec.outputs[kResultFile] = kMaxRenderRecordBytes;
  spec.label = "render " + request.job_id + " " + theme;
  return spec;
}

Outcome figure_outcome(const std::string& code) {
  // The renderer's codes (sandbox/figure/lib/errors.mjs) that are not renderer_error. JavaScript
  // snippets: the snippet's own error (error_class, error_line) is a plot error, an import the page
  // does not provide is the guard's refusal (rule "import"), like Python's.
  static constexpr std::pair<std::string_view, Outcome> kCodes[] = {
      {"figure_missing", Outcome::no_output},          {"figure_not_regular", Outcome::output_rejected},
      {"figure_too_large", Outcome::output_too_large}, {"figure_empty", Outcome::figure_invalid},
      {"figure_too_deep", Outcome::figure_invalid},    {"figure_invalid", Outcome::figure_invalid},
      {"figure_size_invalid", Outcome::figure_invalid}, {"no_webgl", Outcome::no_webgl},
      {"draw_failed", Outcome::draw_failed},           {"timeout", Outcome::timeout},
      {"runtime_unavailable", Outcome::runtime_unavailable}, {"size_mismatch", Outcome::canvas_size},
      {"snippet_error", Outcome::plot_error},          {"import_refused", Outcome::guard_refused},
      {"blank", Outcome::blank},                       {"navigated", Outcome::navigated},
      {"library_unavailable", Outcome::runtime_unavailable}, {"shutdown", Outcome::cancelled},
  };
  for (const auto& [name, outcome] : kCodes)
    if (code == name) return outcome;
  return Outcome::renderer_error;  // request_invalid, output_failed, browser_failed, renderer_*, protocol_error, busy
}

ThemeRun interpret_render_job(sandbox::JobResult job, RenderMode mode, const std::string& theme) {
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
  const std::string out = render_output_name(mode, theme);
  std::optional<std::string> figure_json;
  auto done = [&](Outcome outcome) {
    r.outcome = outcome;
    job.outputs.clear();
    if (figure_json && r.outcome == Outcome::ok) job.outputs[out] = std::move(*figure_json);
    r.job = std::move(job);
    r.message = describe(r);
    return r;
  };

  // The sandbox's verdict comes first: a stop by the host, a crash, a refused layer, an output
  // that was not a regular file or was over its cap.
  if (job.reason != sandbox::Reason::ok && job.reason != sandbox::Reason::nonzero_exit)
    return done(sandbox_outcome(job.reason));

  // The record is written inside the sandbox: it counts only when it agrees with the process.
  nlohmann::json rec;
  auto rec_text = job.outputs.find(kResultFile);
  if (rec_text != job.outputs.end()) rec = parse_record(rec_text->second);
  int exit_code = job.exit_code.value_or(-1);
  auto rec_exit = int_field(rec, "exit_code");
  auto rec_reason = str_field(rec, "reason");
  auto known = plot_reasons().find(exit_code);
  bool agrees = rec.is_object() && rec_exit && *rec_exit == exit_code && rec_reason && known != plot_reasons().end() &&
                to_string(known->second) == *rec_reason && str_field(rec, "mode") == to_string(mode) && str_field(rec, "theme") == theme &&
                str_field(rec, "output") == out;
  if (!agrees) return done(Outcome::harness_error);

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
  if (known->second == Outcome::source_invalid) {
    if (auto m = int_field(rec, "measured")) r.measured = static_cast<double>(*m);
    if (auto l = int_field(rec, "limit")) r.limit = static_cast<double>(*l);
  }
  if (known->second != Outcome::ok) return done(known->second);

  auto file = job.outputs.find(out);
  if (file == job.outputs.end()) return done(Outcome::no_output);
  if (mode == RenderMode::figure) {
    figure_json = std::move(file->second);
    return done(Outcome::ok);
  }
  auto size = png_size(file->second);
  if (!size) return done(Outcome::output_rejected);
  r.width = size->first;
  r.height = size->second;
  // Any size is a render in plot mode (a file saving at dpi 300 with bbox_inches="tight" drew
  // what it meant to); the canvas says whether it is on one of the two.
  r.canvas = canvas_of(r.width, r.height);
  r.png = std::move(file->second);
  return done(Outcome::ok);
}

ThemeRun not_started(const std::string& theme, Outcome code, std::optional<RenderMode> mode) {
  ThemeRun r;
  r.theme = theme;
  r.mode = mode;
  r.outcome = code;
  r.job.attempts = 0;
  r.message = describe(r);
  return r;
}

RenderResult refused_render(const std::vector<std::string>& themes, Outcome code) {
  RenderResult result;
  for (const auto& theme : themes)
    if (known_theme(theme)) result.outputs[theme] = not_started(theme, code);
  return result;
}

std::string describe(const ThemeRun& r) {
  const Outcome o = r.outcome;
  const bool figure = r.mode == RenderMode::figure;
  auto at_line = [&] { return r.error_line ? " at line " + std::to_string(*r.error_line) : std::string(); };
  auto mib = [](std::optional<double> v) {
    return v ? std::to_string(static_cast<long long>(std::llround(*v / 1048576.0))) + " MiB" : std::string("its cap");
  };
  if (o == Outcome::ok && r.png && r.canvas == "off")
    return "Rendered a " + std::to_string(r.width) + "x" + std::to_string(r.height) +
           " image (not the " + sandbox::canvases_text() + " canvas).";
  if (o == Outcome::ok)
    return r.png ? "Rendered a " + std::to_string(r.width) + "x" + std::to_string(r.height) + " image."
                 : "The plot step finished; the figure is drawn next.";
  if (o == Outcome::plot_error) return "The plot raised " + r.error_class.value_or("an error") + at_line() + ".";
  if (o == Outcome::plot_exit)
    return std::string("The plot ended itself with an error status (") + (r.mode == RenderMode::r ? "quit" : "sys.exit") + ")" + at_line() + ".";
  if (o == Outcome::guard_refused)
    return "The plot tried something plot code may not do (" + r.refusal_rule.value_or("refused") + ")" + at_line() +
           ", so the render was stopped.";
  if (o == Outcome::no_output)
    return figure ? "The plot ran but made no figure: call fig.write_image(...) or fig.show() (plotly), save(p) "
                    "or export_png(p) (bokeh)."
                  : r.mode == RenderMode::r ? "The plot ran but saved no image: save it with ggsave(sprintf(\"plot-%s.png\", THEME), device = ragg::agg_png)."
                  : "The plot ran but saved no image: save it with fig.savefig(f\"plot-{THEME}.png\").";
  if (o == Outcome::canvas_size)  // figure mode: the renderer sets the canvas, so another size is its fault
    return "The figure's image is " + std::to_string(r.width) + "x" + std::to_string(r.height) +
           ", not the " + sandbox::canvases_text() + " canvas the figure renderer draws.";
  if (o == Outcome::output_too_large) {
    bool image = !figure || (r.limit && *r.limit == static_cast<double>(kMaxPngBytes));
    return std::string(image ? "The image" : "The figure") + " is larger than " + mib(r.limit) + ".";
  }
  if (o == Outcome::output_rejected)
    return figure ? "The plot's figure file is not a regular file." : "The plot's image is not a regular PNG file.";
  if (o == Outcome::figure_invalid)
    return "The figure could not be read as a figure (" + r.figure_code.value_or("figure_invalid") + ").";
  if (o == Outcome::renderer_error) return "The figure renderer failed (" + r.figure_code.value_or("unknown") + ").";
  if (o == Outcome::draw_failed && r.mode == RenderMode::snippet) return "The plot's page crashed while drawing (out of memory, or a crash).";
  if (o == Outcome::cancelled) return "The render was cancelled.";
  if (o == Outcome::crashed) return "The plot's process crashed.";
  if (o == Outcome::launcher || o == Outcome::exec_denied || o == Outcome::sandbox_unavailable || o == Outcome::low_memory || o == Outcome::io)
    return "The sandbox could not run the plot (" + std::string(to_string(o)) + ").";
  // Everything else says what the outcome table says (runs/outcome.cpp).
  return std::string(outcome_row(o).sentence);
}

}  // namespace plotq::runs
