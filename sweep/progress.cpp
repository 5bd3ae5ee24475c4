#include "sweep/progress.hpp"

#include <cmath>
#include <cstdio>

namespace plotq::runs {
namespace {

std::string hms(double s) {
  if (!(s >= 0) || s > 360000) return "--:--";
  long t = std::lround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

std::string row_word(const store::SweepResult& r) {
  // error_class is set exactly for plot_error (store/sweeps.hpp): the class says more than the reason.
  return r.outcome == store::SweepOutcome::render ? "render" : "fail(" + r.error_class.value_or(r.reason) + ")";
}

}  // namespace

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void Progress::file(const SweepCounts& c, const std::vector<store::SweepResult>& rows) {
  if (!tty_) {
    std::string themes;
    double wall = 0;
    for (const auto& r : rows) {
      themes += " " + r.theme + "=" + row_word(r);
      wall += r.wall_s;
    }
    std::fprintf(stderr, "[%zu/%zu] %s%s %ss\n", c.skipped + c.done, c.total,
                 rows.empty() ? "" : rows[0].path.c_str(), themes.c_str(), fixed(wall, 2).c_str());
    std::fflush(stderr);
    return;
  }
  draw(c, rows.empty() ? "" : rows[0].path);
}

void Progress::draw(const SweepCounts& c, const std::string& last) {
  if (!tty_) return;
  std::size_t done = c.skipped + c.done;
  const int width = 24;
  int filled = c.total ? static_cast<int>(width * done / c.total) : width;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(width, '.');
  double rate = c.elapsed_s > 0 ? c.done / c.elapsed_s : 0;
  double eta = rate > 0 ? (c.total - done) / rate : -1;
  std::string tail = last.size() > 40 ? "..." + last.substr(last.size() - 37) : last;
  std::fprintf(stderr, "\r\033[K[%s] %zu/%zu files  render %zu  fail %zu  %s files/s  ETA %s  %s", bar.c_str(),
               done, c.total, c.renders, c.fails, fixed(rate, 2).c_str(), eta < 0 ? "--:--" : hms(eta).c_str(),
               tail.c_str());
  std::fflush(stderr);
}

void Progress::end() {
  if (tty_) std::fprintf(stderr, "\n");
}

std::string run_summary(const store::Sweep& sweep, const SweepCounts& c, bool complete, double elapsed_s) {
  std::string out = "sweep " + sweep.label + " (" + sweep.mode + (sweep.server_url ? " via " + *sweep.server_url : "") +
                    "): " + (complete ? "done" : "interrupted") + ", " + std::to_string(c.skipped + c.done) + " of " +
                    std::to_string(c.total) + " files recorded (" + std::to_string(c.done) + " this run), rows render " +
                    std::to_string(c.renders) + " fail " + std::to_string(c.fails) + ", " + fixed(elapsed_s, 1) + "s\n";
  if (!complete) out += "continue it with: plotq sweep run --resume " + sweep.label + "\n";
  return out;
}

}  // namespace plotq::runs
