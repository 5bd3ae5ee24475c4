#include "sweep/outcome.hpp"

#include <vector>

namespace plotq::runs {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return lines;
}

bool ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9') || c == '.'; }

// "Name: message" or "Name" alone -> Name; anything else -> empty.
std::string_view exception_name(std::string_view line) {
  if (line.empty() || !ident_start(line[0])) return {};
  std::size_t i = 1;
  while (i < line.size() && ident_char(line[i])) ++i;
  if (i < line.size() && line[i] != ':') return {};
  std::string_view name = line.substr(0, i);
  if (name.back() == '.') return {};
  return name;
}

}  // namespace

std::string clean_reason(std::string_view reason) {
  if (reason.empty() || reason.size() > 32 || !(reason[0] >= 'a' && reason[0] <= 'z')) return "unknown";
  for (char c : reason)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return "unknown";
  return std::string(reason);
}

std::string describe_size(int width, int height) { return std::to_string(width) + "x" + std::to_string(height); }

void set_failure(store::SweepResult& row, Outcome reason, std::optional<std::string> error_class) {
  if (reason == Outcome::ok) reason = Outcome::unknown;  // a failure is never ok
  row.outcome = store::SweepOutcome::fail;
  row.reason = std::string(to_string(reason));
  row.error_class.reset();
  row.canvas.reset();
  if (reason == Outcome::plot_error) {
    std::string c = error_class.value_or("unlisted");
    if (c.empty() || c.size() > 128) c = "unlisted";
    row.error_class = c;
  }
  row.png_bytes.reset();
}

void set_failure_named(store::SweepResult& row, std::string_view reason) {
  const std::string clean = clean_reason(reason);
  set_failure(row, Outcome::unknown);
  row.reason = clean == "ok" ? "unknown" : clean;
}

void set_measures(store::SweepResult& row, double wall_s, double cpu_s, double max_rss_mb) {
  row.wall_s = wall_s > 0 ? wall_s : 0;
  row.cpu_s = cpu_s > 0 ? cpu_s : 0;
  row.max_rss_mb = max_rss_mb > 0 ? std::optional<double>(max_rss_mb) : std::nullopt;
}

void apply_theme_run(const ThemeRun& run, store::SweepResult& row) {
  row.theme = run.theme;
  row.exit_code = run.exit_code;
  row.signal = run.job.signal;
  set_measures(row, run.wall_s, run.cpu_s, run.max_rss_mb);
  if (run.width > 0 || run.height > 0) {
    row.width = run.width;
    row.height = run.height;
  }
  row.detail.reset();
  if (run.outcome == Outcome::ok && run.png) {
    row.outcome = store::SweepOutcome::render;
    row.reason = "ok";
    row.error_class.reset();
    row.png_bytes = static_cast<std::int64_t>(run.png->size());
    row.canvas = run.canvas.empty() ? canvas_of(run.width, run.height) : run.canvas;
    return;
  }
  set_failure(row, run.outcome == Outcome::ok ? Outcome::no_output : run.outcome, run.error_class);
  if (run.outcome == Outcome::canvas_size && run.width > 0) {
    row.detail = describe_size(run.width, run.height);
  } else if (run.measured && run.limit) {
    row.detail = std::to_string(static_cast<long long>(*run.measured)) + "/" +
                 std::to_string(static_cast<long long>(*run.limit));
  }
}

std::optional<std::string> traceback_class(std::string_view stderr_text) {
  std::vector<std::string_view> lines = split_lines(stderr_text);
  std::optional<std::size_t> start;
  for (std::size_t i = lines.size(); i-- > 0;) {
    if (lines[i] == "Traceback (most recent call last):") {
      start = i + 1;
      break;
    }
  }
  if (!start) {
    // No header (a SyntaxError at compile time, or a tail that cut it off): the last frame line.
    for (std::size_t i = lines.size(); i-- > 0;) {
      if (lines[i].rfind("  File \"", 0) == 0) {
        start = i;
        break;
      }
    }
  }
  if (!start) return std::nullopt;
  for (std::size_t i = *start; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    if (l.empty() || l[0] == ' ' || l[0] == '\t') continue;
    std::string_view name = exception_name(l);
    if (name.empty()) return std::nullopt;
    return std::string(name);
  }
  return std::nullopt;
}

std::string ClassVocabulary::classify(const std::string& printed) const {
  auto it = printed_to_name.find(printed);
  return it == printed_to_name.end() ? "unlisted" : it->second;
}

}  // namespace plotq::runs
