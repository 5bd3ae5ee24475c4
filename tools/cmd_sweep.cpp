// plotq sweep run|report|diff|list: replay a folder of plot files and compare outcomes (issue 7;
// sweep/*.hpp hold the logic, store/sweeps.hpp the rows).
//   plotq sweep run DIR [--glob G] [--library L,...] [--themes light,dark] [--label NAME] [--timeout S]
//                       [--mode sandbox|bare] [--server URL] [--jobs N] [--resume LABEL]
//   plotq sweep report LABEL [--json]
//   plotq sweep diff A B [--json]        exit 1 when any file differs, 0 when none
//   plotq sweep list [--json]
// Exit codes: 0 ok (diff: no difference), 1 diff: differences / run: a store or backend error
// stopped it, 2 bad arguments or unknown label, 130 run interrupted by SIGINT (143 SIGTERM).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "common/log.hpp"
#include "runs/outcome.hpp"
#include "runs/libraries.hpp"
#include "runs/render_job.hpp"
#include "runs/runtime.hpp"
#include "sweep/backends.hpp"
#include "sweep/report.hpp"
#include "sweep/runner.hpp"
#include "sandbox/config.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "store/error.hpp"
#include "store/migrate.hpp"
#include "store/sweeps.hpp"
#include "store/time.hpp"
#include "tools/commands.hpp"
#include "tools/http_client.hpp"
#include "tools/store_read.hpp"
#include "tools/text_table.hpp"

namespace plotq::cli {
namespace {

constexpr const char* kUsage =
    "usage: plotq sweep run DIR [--glob PATTERN] [--library L[,L...]] [--themes light,dark] [--label NAME]\n"
    "                           [--timeout S] [--mode sandbox|bare] [--server URL] [--jobs N]\n"
    "       plotq sweep run [DIR] --resume LABEL [--jobs N]\n"
    "       plotq sweep report LABEL [--json]\n"
    "       plotq sweep diff A B [--json]\n"
    "       plotq sweep list [--json]\n"
    "  defaults: --glob 'plots/*/implementations/python/*.py', --themes light,dark, --timeout 60,\n"
    "            --mode sandbox, --jobs 1, --label sweep-YYYYMMDD-HHMMSS (UTC)\n";

int usage_error(const std::string& what) {
  std::fprintf(stderr, "plotq sweep: %s\n%s", what.c_str(), kUsage);
  return 2;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string random_hex(int bytes) {
  std::random_device rd;
  std::string out;
  const char* hex = "0123456789abcdef";
  for (int i = 0; i < bytes; ++i) {
    unsigned v = rd() & 0xff;
    out += hex[v >> 4];
    out += hex[v & 15];
  }
  return out;
}

std::string hms(double s) {
  if (!(s >= 0) || s > 360000) return "--:--";
  long t = std::lround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

std::string row_word(const store::SweepResult& r) {
  return r.outcome == "render" ? "render" : "fail(" + (r.reason == "plot_error" ? r.error_class.value_or("") : r.reason) + ")";
}

// ---- progress ---------------------------------------------------------------------------------

// A bar redrawn in place on a terminal; one plain line per file otherwise (stderr either way).
class Progress {
 public:
  explicit Progress(bool tty) : tty_(tty) {}

  void file(const runs::SweepCounts& c, const std::vector<store::SweepResult>& rows) {
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

  void draw(const runs::SweepCounts& c, const std::string& last) {
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

  void end() {
    if (tty_) std::fprintf(stderr, "\n");
  }

 private:
  bool tty_;
};

// ---- --server URL: POST /render on a running plotqd --------------------------------------------

std::size_t base64_decoded_size(const std::string& b64) {
  std::size_t n = b64.size();
  if (n == 0) return 0;
  std::size_t pad = 0;
  if (b64[n - 1] == '=') ++pad;
  if (n > 1 && b64[n - 2] == '=') ++pad;
  return n / 4 * 3 - pad;
}

template <class T>
std::optional<T> field(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::nullopt;
  try {
    return j[key].get<T>();
  } catch (...) {
    return std::nullopt;
  }
}

// One theme of POST /render's answer as a row (the same model as in process).
store::SweepResult row_from_answer(const std::string& theme, const nlohmann::json& out) {
  store::SweepResult row;
  row.theme = theme;
  row.exit_code = field<int>(out, "exit_code");
  row.wall_s = std::max(0.0, field<double>(out, "wall_s").value_or(0));
  row.cpu_s = std::max(0.0, field<double>(out, "cpu_s").value_or(0));
  row.max_rss_mb = field<double>(out, "max_rss_mb");
  row.width = field<int>(out, "width");
  row.height = field<int>(out, "height");
  std::string reason = field<std::string>(out, "reason").value_or("ok");
  std::string png = field<std::string>(out, "png_base64").value_or("");
  if (reason == "ok" && !png.empty()) {
    row.outcome = "render";
    row.reason = "ok";
    row.png_bytes = static_cast<std::int64_t>(base64_decoded_size(png));
    std::string canvas = field<std::string>(out, "canvas").value_or("");
    row.canvas = canvas == "exact" || canvas == "off" ? canvas : runs::canvas_of(row.width.value_or(0), row.height.value_or(0));
    return row;
  }
  std::optional<std::string> error_class;
  if (out.contains("error") && out["error"].is_object()) error_class = field<std::string>(out["error"], "class");
  runs::set_failure(row, reason == "ok" ? "no_output" : reason, error_class);
  if (row.reason == "canvas_size" && row.width && row.height) {
    row.detail = runs::describe_size(*row.width, *row.height);
  } else if (auto m = field<double>(out, "measured"), l = field<double>(out, "limit"); m && l) {
    row.detail = std::to_string(static_cast<long long>(*m)) + "/" + std::to_string(static_cast<long long>(*l));
  }
  return row;
}

class ServerBackend : public runs::SweepBackend {
 public:
  ServerBackend(boost::asio::io_context& io, std::string url, std::string prefix)
      : io_(io), url_(std::move(url)), prefix_(std::move(prefix)) {}
  ~ServerBackend() override {
    stop_ = true;
    for (auto& [id, t] : threads_)
      if (t.joinable()) t.join();
  }

  // A library not in the table is refused here as in process; whether this server's runtime can
  // draw the others (runtime_unavailable) it answers itself.
  std::string support(const std::string& library) override {
    return runs::find_library(library) ? "ok" : "invalid_library";
  }

  void start(const runs::SweepTask& task, const std::vector<std::string>& themes, double timeout_s,
             std::function<void(runs::FileOutcome)> done) override {
    std::uint64_t id = next_id_++;
    std::string job_id = prefix_ + "-" + std::to_string(id);
    nlohmann::json body = {{"job_id", job_id},    {"source", task.source}, {"library", task.file.library},
                           {"themes", themes},    {"timeout_s", timeout_s}};
    if (!task.data_csv.empty()) body["data_csv"] = task.data_csv;
    running_[id] = job_id;
    auto work = std::make_shared<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(
        io_.get_executor());
    threads_[id] = std::thread([this, id, body = body.dump(), themes, timeout_s, work, done = std::move(done)]() mutable {
      runs::FileOutcome out = call(body, themes, timeout_s);
      boost::asio::post(io_, [this, id, work, out = std::move(out), done = std::move(done)]() mutable {
        work->reset();
        auto it = threads_.find(id);
        if (it != threads_.end()) {
          it->second.join();
          threads_.erase(it);
        }
        running_.erase(id);
        if (stop_) out.cancelled = true;
        done(std::move(out));
      });
    });
  }

  void cancel_all() override {
    stop_ = true;
    for (const auto& [id, job_id] : running_) http_call(url_, "POST", "/render/" + job_id + "/cancel", "", 5);
  }

 private:
  runs::FileOutcome call(const std::string& body, const std::vector<std::string>& themes, double timeout_s) {
    runs::FileOutcome out;
    // A busy server (queue full, rate window) is waited for, not recorded.
    for (int attempt = 0; attempt < 120 && !stop_; ++attempt) {
      HttpResult r = http_call(url_, "POST", "/render", body, timeout_s * static_cast<double>(themes.size()) + 120);
      if (!r.error.empty()) {
        out.error = "POST /render: " + r.error;
        return out;
      }
      nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
      std::string detail = j.is_object() ? field<std::string>(j, "detail").value_or("") : "";
      if (r.status == 200 && j.is_object() && j.contains("outputs")) {
        for (const auto& theme : themes) {
          if (!j["outputs"].contains(theme)) {
            store::SweepResult row;
            row.theme = theme;
            runs::set_failure(row, "harness_error");
            out.themes.push_back(row);
          } else {
            out.themes.push_back(row_from_answer(theme, j["outputs"][theme]));
            if (runs::outcome(out.themes.back().reason).host && out.error.empty())
              out.error = "the server's render path failed on its host: " + out.themes.back().reason;
          }
        }
        return out;
      }
      // Waiting helps: the queue or slot was full, memory was short, a store write was busy.
      bool busy = r.status == 429 || (r.status == 503 && (detail == "busy" || detail == "capacity" ||
                                                          detail == "low_memory" || detail == "store_unavailable" ||
                                                          detail == "stuck"));
      if (busy) {
        for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (r.status == 503 && detail == "runtime_unavailable") {
        // Not a host failure: this server cannot draw this library (the same as in process).
        for (const auto& theme : themes) {
          store::SweepResult row;
          row.theme = theme;
          runs::set_failure(row, "runtime_unavailable");
          out.themes.push_back(row);
        }
        return out;
      }
      // Anything else (401/403, 409, 422, 499, 5xx) is not the file's outcome: stop, resume later.
      out.error = "POST /render answered " + std::to_string(r.status) + (detail.empty() ? "" : " " + detail);
      return out;
    }
    if (stop_) out.cancelled = true;
    else out.error = "POST /render: the server stayed busy";
    return out;
  }

  boost::asio::io_context& io_;
  std::string url_;
  std::string prefix_;
  std::atomic<bool> stop_{false};
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::thread> threads_;
  std::map<std::uint64_t, std::string> running_;
};

// ---- run --------------------------------------------------------------------------------------

bool pid_alive(std::int64_t pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The runtime a sweep's files run on: the configured interpreter's manifest (bare and sandbox
// mode run the same one), or what a server's GET /status says it runs. nullopt: unknown.
std::optional<std::string> sweep_runtime_id(const std::optional<std::string>& server) {
  if (!server) return runs::runtime_id(runs::read_runtime(sandbox::config_from_env().python));
  HttpResult r = http_call(*server, "GET", "/status", "", 10);
  nlohmann::json j = r.status == 200 ? nlohmann::json::parse(r.body, nullptr, false) : nlohmann::json();
  if (!j.is_object() || !j.contains("runtime") || !j["runtime"].is_object()) return std::nullopt;
  auto id = field<std::string>(j["runtime"], "id");
  if (!id || id->size() != 12 || id->find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
  return id;
}

std::string id_or_unknown(const std::optional<std::string>& id) { return id.value_or("unknown"); }

int sweep_run(const std::string& db_path, Args args) {
  std::string glob = take_option(args, "--glob");
  std::string library = take_option(args, "--library");
  std::string themes_opt = take_option(args, "--themes");
  std::string label = take_option(args, "--label");
  std::string timeout_opt = take_option(args, "--timeout");
  std::string mode = take_option(args, "--mode");
  std::string server = take_option(args, "--server");
  std::string jobs_opt = take_option(args, "--jobs");
  std::string resume = take_option(args, "--resume");
  for (const auto& a : args)
    if (a.rfind("--", 0) == 0) return usage_error("unknown option '" + a + "'");
  if (args.size() > 1) return usage_error("one DIR, not " + std::to_string(args.size()));
  std::string dir = args.empty() ? "" : args[0];
  if (dir.empty() && resume.empty()) return usage_error("run needs DIR");

  int jobs = 1;
  if (!jobs_opt.empty()) {
    char* end = nullptr;
    long n = std::strtol(jobs_opt.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 64) return usage_error("--jobs must be an integer in [1, 64]");
    jobs = static_cast<int>(n);
  }

  auto db = store::Db::open(db_path, store::options_from_env());
  store::migrate(*db);

  store::Sweep sweep;
  std::vector<std::string> finished;
  if (!resume.empty()) {
    auto found = store::sweeps::find(*db, resume);
    if (!found) return usage_error("no sweep labelled '" + resume + "'");
    sweep = *found;
    // A resumed sweep keeps every setting that decides outcomes; asking for another is an error.
    auto differs = [&](const std::string& opt, const std::string& given, const std::string& stored) {
      if (!given.empty() && given != stored) {
        std::fprintf(stderr, "plotq sweep: %s '%s' differs from sweep %s's '%s'\n", opt.c_str(), given.c_str(),
                     sweep.label.c_str(), stored.c_str());
        return true;
      }
      return false;
    };
    std::string root_given;
    if (!dir.empty()) {
      std::error_code ec;
      root_given = std::filesystem::weakly_canonical(dir, ec).string();
    }
    if (differs("DIR", root_given, sweep.root) || differs("--glob", glob, sweep.glob) ||
        differs("--library", library, sweep.libraries.value_or("")) || differs("--themes", themes_opt, sweep.themes) ||
        differs("--mode", mode, sweep.mode) || differs("--server", server, sweep.server_url.value_or("")) ||
        (!label.empty() && differs("--label", label, sweep.label)) ||
        (!timeout_opt.empty() && std::abs(std::stod(timeout_opt) - sweep.timeout_s) > 1e-9 &&
         differs("--timeout", timeout_opt, fixed(sweep.timeout_s, 3))))
      return 2;
    if (sweep.state == "running" && sweep.pid && pid_alive(*sweep.pid) && *sweep.pid != ::getpid()) {
      std::fprintf(stderr, "plotq sweep: sweep %s is running (pid %lld)\n", sweep.label.c_str(),
                   static_cast<long long>(*sweep.pid));
      return 2;
    }
    // Rows of two runtimes in one sweep could not be told apart: a changed runtime is a new sweep.
    if (auto now_id = sweep_runtime_id(sweep.server_url); now_id != sweep.runtime_id) {
      std::fprintf(stderr, "plotq sweep: the runtime changed (%s, sweep %s ran on %s): start a new sweep\n",
                   id_or_unknown(now_id).c_str(), sweep.label.c_str(), id_or_unknown(sweep.runtime_id).c_str());
      return 2;
    }
    finished = store::sweeps::finished_paths(*db, sweep.id);
    if (jobs_opt.empty()) jobs = sweep.jobs;
  } else {
    if (mode.empty()) mode = "sandbox";
    if (mode != "sandbox" && mode != "bare") return usage_error("--mode is sandbox or bare");
    if (!server.empty() && mode != "sandbox") return usage_error("--server goes with --mode sandbox");
    if (!server.empty() && server.rfind("http://", 0) != 0) return usage_error("--server must be an http:// URL");
    std::vector<std::string> themes = split_list(themes_opt.empty() ? "light,dark" : themes_opt);
    if (themes.empty() || themes.size() > 2) return usage_error("--themes is one or two of light,dark");
    for (const auto& t : themes)
      if (t != "light" && t != "dark") return usage_error("unknown theme '" + t + "'");
    if (themes.size() == 2 && themes[0] == themes[1]) return usage_error("--themes must be distinct");
    double timeout = 60;
    if (!timeout_opt.empty()) {
      char* end = nullptr;
      timeout = std::strtod(timeout_opt.c_str(), &end);
      if (*end != '\0' || !(timeout > 0) || timeout > runs::kMaxRenderTimeoutS)
        return usage_error("--timeout must be a number of seconds in (0, 120]");
    }
    if (label.empty()) {
      std::time_t t = std::time(nullptr);
      char buf[32];
      std::strftime(buf, sizeof buf, "sweep-%Y%m%d-%H%M%S", std::gmtime(&t));
      label = buf;
    }
    if (!store::sweeps::valid_label(label)) return usage_error("--label must be 1..64 of [A-Za-z0-9._-]");
    if (store::sweeps::find(*db, label)) {
      std::fprintf(stderr, "plotq sweep: a sweep labelled '%s' exists; continue it with --resume %s or pick another --label\n",
                   label.c_str(), label.c_str());
      return 2;
    }
    std::error_code ec;
    std::filesystem::path root = std::filesystem::weakly_canonical(dir, ec);
    if (ec || !std::filesystem::is_directory(root)) return usage_error(dir + " is not a directory");
    sweep.label = label;
    sweep.mode = mode;
    if (!server.empty()) sweep.server_url = server;
    sweep.root = root.string();
    sweep.glob = glob.empty() ? runs::kDefaultSweepGlob : glob;
    if (!library.empty()) sweep.libraries = join(split_list(library));
    sweep.themes = join(themes);
    sweep.timeout_s = timeout;
    sweep.jobs = jobs;
    sweep.pid = ::getpid();
    sweep.plotq_version = PLOTQ_VERSION;
    sweep.runtime_id = sweep_runtime_id(sweep.server_url);
  }

  std::vector<runs::SweepFile> files;
  try {
    files = runs::find_sweep_files(sweep.root, sweep.glob, split_list(sweep.libraries.value_or("")));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plotq sweep: %s\n", e.what());
    return 2;
  }
  if (resume.empty()) sweep.id = store::sweeps::create(*db, sweep, store::now_unix());
  std::vector<runs::SweepFile> pending;
  for (auto& f : files)
    if (!std::binary_search(finished.begin(), finished.end(), f.rel_path)) pending.push_back(f);
  std::size_t skipped = files.size() - pending.size();
  store::sweeps::begin_session(*db, sweep.id, static_cast<int>(files.size()), jobs, ::getpid(), store::now_unix());

  // The launcher's structured log (zygote starts and their preload times, job ends) would bury the
  // progress lines: off unless PLOTQ_SWEEP_LOG=1 asks for it (diagnosing a slow or failing sweep).
  set_log_enabled(runs::bare_config_from_env().sweep_log);
  boost::asio::io_context io{1};
  std::string job_prefix = "sweep-" + random_hex(6);
  std::vector<std::string> themes = split_list(sweep.themes);

  // The backend and what it needs, all on this io_context.
  std::unique_ptr<sandbox::FigureRenderer> figures;
  std::unique_ptr<sandbox::Launcher> launcher;
  std::unique_ptr<runs::Renderer> renderer;
  std::unique_ptr<runs::SweepBackend> backend;
  // Chromium only when a pending file needs it (its start costs a second or two): the figure-mode
  // libraries of the table (plotly, bokeh).
  auto figure_file = [](const runs::SweepFile& f) {
    return runs::find_library(f.library) && runs::render_mode(f.library) == "figure";
  };
  const auto plotly_files = static_cast<std::size_t>(std::count_if(pending.begin(), pending.end(), figure_file));
  const bool any_plotly = plotly_files > 0;
  const std::size_t figure_renders = themes.size() * plotly_files;
  // now = false: made, but Chromium starts later (the warm-up chain below) or on the first figure.
  auto start_figures = [&](bool now) {
    if (!any_plotly) return;
    sandbox::FigureConfig fc = sandbox::figure_config_from_env();
    // Every figure is drawn in a fresh page (plotly.js started in it: ~1 s of CPU). A sandboxed
    // sweep draws its figure files after the plot files (ro.hold), back to back: unless the
    // operator chose, keep up to kSweepFigureSpares pages made ahead while the renderer is idle,
    // so that those figures do not wait for their page. Bare mode, the control, keeps the
    // renderer's defaults.
    constexpr std::uint32_t kSweepFigureSpares = 4;
    if (sweep.mode == "sandbox" && !std::getenv("PLOTQ_FIGURE_SPARES"))
      fc.figure_spares = std::max(fc.figure_spares,
                                  static_cast<std::uint32_t>(std::min<std::size_t>(figure_renders, kSweepFigureSpares)));
    figures = std::make_unique<sandbox::FigureRenderer>(io, fc);
    if (!figures->available()) {
      std::fprintf(stderr, "plotq sweep: figure renderer unavailable (%s): plotly and bokeh files fail as runtime_unavailable\n",
                   figures->unavailable_reason().c_str());
      figures.reset();
    } else if (now) {
      figures->start();
    }
  };
  auto fail_setup = [&](const std::string& why) {
    std::fprintf(stderr, "plotq sweep: %s\n", why.c_str());
    store::sweeps::end_session(*db, sweep.id, "interrupted", 0, store::now_unix());
    return 1;
  };
  // Caught from here on (queued until the loop runs): a Ctrl-C during setup still ends cleanly.
  Progress progress(::isatty(2) == 1);
  int signal_seen = 0;
  runs::SweepRunner* running = nullptr;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        if (!signal_seen) {
          signal_seen = sig;
          progress.end();
          std::fprintf(stderr, "plotq sweep: stopping (signal %d); finished files stay recorded\n", sig);
          if (running) running->stop();
        } else {
          std::fprintf(stderr, "plotq sweep: still stopping (a figure being drawn ends by its deadline)\n");
        }
        signals.async_wait(on_signal);
      };
  signals.async_wait(on_signal);
  double stagger_s = 0;                 // > 0: warm_rest polls the zygotes for at most this long
  std::vector<std::string> warm_modes;  // the launcher's
  try {
    if (sweep.mode == "bare") {
      runs::BareConfig bare = runs::bare_config_from_env();
      sandbox::Config sc = sandbox::resolved(sandbox::config_from_env());
      runs::ClassVocabulary classes = runs::load_class_vocabulary(bare.python, sc.harness_dir);
      start_figures(true);
      backend = runs::make_bare_backend(io, bare, std::move(classes), figures.get(), runs::read_runtime(bare.python));
    } else if (sweep.server_url) {
      backend = std::make_unique<ServerBackend>(io, *sweep.server_url, job_prefix);
    } else {
      sandbox::Config sc = sandbox::resolved(sandbox::config_from_env());
      // The database stays out of every job's view.
      sc.hidden_paths.push_back(std::filesystem::absolute(db_path).parent_path().string());
      // sandbox_nice keeps jobs below plotqd's event loop. A sweep has no loop to protect, only its
      // own Chromium, which its plot jobs would wait behind (sweep 13.5 -> 17.5 s at nice 10):
      // unless the operator chose it, its jobs run at the sweep's own niceness (`nice plotq sweep`
      // puts the whole sweep below plotqd).
      if (!std::getenv("PLOTQ_SANDBOX_NICE")) sc.sandbox_nice = 0;
      // A sweep runs plot jobs (figure mode for plotly) and nothing else: unless the operator chose
      // the modes, warm exactly those. A raw or data zygote would only take CPU from the plot
      // zygote's preload, which the first file waits for.
      if (!std::getenv("PLOTQ_WARM_MODES")) {
        bool any_plot = std::any_of(pending.begin(), pending.end(),
                                    [](const runs::SweepFile& f) { return runs::render_mode(f.library) == "plot"; });
        sc.warm_modes.clear();
        if (any_plot) sc.warm_modes.push_back("plot");
        if (any_plotly) sc.warm_modes.push_back("figure");
      }
      launcher = std::make_unique<sandbox::Launcher>(io, sc);
      if (!launcher->ready())
        return fail_setup("the sandbox is not ready (plotq sandbox check shows the missing layer)");
      // Staggered warm-up (the warm-up chains below), so that the warm-up bursts do not pile up
      // on 2 cores. Without zygotes there is nothing to stagger.
      stagger_s = sc.sandbox_cold || !launcher->layers().active("warm") || sc.warm_modes.empty()
                      ? 0
                      : sc.zygote_start_timeout_s;
      if (stagger_s <= 0) launcher->prewarm();
      start_figures(stagger_s <= 0);
      warm_modes = sc.warm_modes;
      renderer = std::make_unique<runs::Renderer>(io, *launcher, figures.get(), runs::render_config_from_env(),
                                                  std::make_shared<const runs::Runtime>(runs::read_runtime(sc.python)));
      backend = runs::make_sandbox_backend(*renderer, db.get(), job_prefix);
    }
  } catch (const std::exception& e) {
    return fail_setup(e.what());
  }

  runs::RunnerOptions ro;
  ro.themes = themes;
  ro.timeout_s = sweep.timeout_s;
  ro.jobs = jobs;
  // While the figure path warms up (its zygote, then Chromium), draw the plot files first.
  bool warm_figure = std::find(warm_modes.begin(), warm_modes.end(), "figure") != warm_modes.end();
  ro.hold = [&](const runs::SweepFile& f) {
    if (!launcher || stagger_s <= 0 || runs::render_mode(f.library) != "figure") return false;
    return (warm_figure && !launcher->zygote_ready("figure")) || (figures && !figures->ready());
  };
  // A sandboxed sweep stops Chromium once its last figure file is recorded: the renderer would
  // otherwise keep topping up its spare pages (~1 s of CPU each) beside the plot files still to
  // draw. (Bare mode, the control, keeps its renderer to the end, as before.)
  std::size_t figure_files_left = plotly_files;
  bool figures_stopped = false;
  runs::SweepRunner runner(io, *db, sweep.id, *backend, ro,
                           [&](const runs::SweepCounts& c, const std::vector<store::SweepResult>& rows) {
                             progress.file(c, rows);
                             if (sweep.mode == "sandbox" && figures && !figures_stopped && !rows.empty() &&
                                 runs::render_mode(rows.front().library) == "figure" && figure_files_left > 0 &&
                                 --figure_files_left == 0) {
                               figures_stopped = true;
                               figures->stop();
                             }
                           });
  running = &runner;
  auto t0 = std::chrono::steady_clock::now();
  if (skipped > 0)
    std::fprintf(stderr, "plotq sweep: resuming %s: %zu of %zu files already recorded\n", sweep.label.c_str(), skipped,
                 files.size());
  progress.draw(runner.counts(), "");
  runner.start(pending, files.size(), skipped, [&] {
    signals.cancel();
    if (figures) figures->stop();
    io.stop();
  });
  // The warm-up chains, one per warm mode, run side by side: the plot zygote alone; the figure
  // zygote, then Chromium once it is ready (or its start timeout passed). The plot preload is the
  // longer one (~3.4 s of CPU against ~2 s): on 2 cores the figure zygote is ready within that
  // wait and Chromium's start overlaps it and the first plot files, one burst beside each. On one
  // core the chains run one after the other. The figure files wait for their chain (ro.hold)
  // while plot files are left.
  struct WarmStep {
    std::function<void()> start;
    std::function<bool()> ready;
  };
  struct WarmChain {
    std::vector<WarmStep> steps;
    std::size_t at = 0;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<WarmChain> warm_chains;
  if (launcher && stagger_s > 0) {
    const WarmStep chromium{[&] { if (!figures_stopped) figures->start(); },
                            [&] { return figures_stopped || figures->ready(); }};
    for (const auto& m : warm_modes) {
      WarmChain chain;
      chain.steps.push_back({[&, m] { launcher->prewarm(m); }, [&, m] { return launcher->zygote_ready(m); }});
      if (m == "figure" && figures) chain.steps.push_back(chromium);
      warm_chains.push_back(std::move(chain));
    }
    if (figures && !warm_figure && !warm_chains.empty()) warm_chains.back().steps.push_back(chromium);
    if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) {
      for (std::size_t i = 1; i < warm_chains.size(); ++i)
        for (auto& step : warm_chains[i].steps) warm_chains[0].steps.push_back(std::move(step));
      warm_chains.resize(std::min<std::size_t>(warm_chains.size(), 1));
    }
  }
  boost::asio::steady_timer warm_timer(io);
  auto step_deadline = [&] {
    return std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                  std::chrono::duration<double>(stagger_s));
  };
  std::function<void()> warm_next = [&] {
    if (runner.stopped()) return;  // Ctrl-C or an error: start nothing more
    bool left = false;
    for (auto& chain : warm_chains) {
      while (chain.at < chain.steps.size() &&
             (chain.steps[chain.at].ready() || std::chrono::steady_clock::now() >= chain.deadline)) {
        if (++chain.at < chain.steps.size()) {
          chain.steps[chain.at].start();
          chain.deadline = step_deadline();
        }
      }
      left = left || chain.at < chain.steps.size();
    }
    if (!left) return;
    warm_timer.expires_after(std::chrono::milliseconds(100));
    warm_timer.async_wait([&](const boost::system::error_code& ec) {
      if (!ec) warm_next();
    });
  };
  for (auto& chain : warm_chains) {
    if (chain.steps.empty()) continue;
    chain.steps[0].start();
    chain.deadline = step_deadline();
  }
  if (!warm_chains.empty()) warm_next();
  io.run();
  progress.end();
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const runs::SweepCounts& c = runner.counts();
  bool complete = !runner.stopped() && c.skipped + c.done == c.total;
  store::sweeps::end_session(*db, sweep.id, complete ? "done" : "interrupted", elapsed, store::now_unix());
  backend.reset();

  std::printf("sweep %s (%s%s): %s, %zu of %zu files recorded (%zu this run), rows render %zu fail %zu, %ss\n",
              sweep.label.c_str(), sweep.mode.c_str(), sweep.server_url ? (" via " + *sweep.server_url).c_str() : "",
              complete ? "done" : "interrupted", c.skipped + c.done, c.total, c.done, c.renders, c.fails,
              fixed(elapsed, 1).c_str());
  if (!complete) std::printf("continue it with: plotq sweep run --resume %s\n", sweep.label.c_str());
  if (!runner.error().empty()) {
    std::fprintf(stderr, "plotq sweep: stopped: %s\n", runner.error().c_str());
    return 1;
  }
  if (signal_seen) return 128 + signal_seen;
  return 0;
}

// ---- report, diff, list -----------------------------------------------------------------------

std::string class_cell(const nlohmann::json& side) {
  if (side.is_null()) return "-";
  return side["outcome"].get<std::string>() + " " + side["reason_class"].get<std::string>();
}

int sweep_report_cmd(const std::string& db_path, Args args) {
  bool json = take_flag(args, "--json");
  if (args.size() != 1) return usage_error("report needs one LABEL");
  auto db = open_for_listing(db_path, "sweep");
  std::optional<store::Sweep> s;
  if (db) s = store::sweeps::find(*db, args[0]);
  if (!s) {
    std::fprintf(stderr, "plotq sweep: no sweep labelled '%s'\n", args[0].c_str());
    return 2;
  }
  nlohmann::json r = runs::sweep_report(*s, store::sweeps::results(*db, s->id));
  if (json) {
    std::printf("%s\n", r.dump(2).c_str());
    return 0;
  }
  std::printf("sweep %s: %s mode%s, %s; %s (glob %s, themes %s%s)\n", s->label.c_str(), s->mode.c_str(),
              s->server_url ? (" via " + *s->server_url).c_str() : "", s->state.c_str(), s->root.c_str(),
              s->glob.c_str(), s->themes.c_str(), s->libraries ? (", libraries " + *s->libraries).c_str() : "");
  std::printf("runtime %s\n", id_or_unknown(s->runtime_id).c_str());
  std::printf("files %d of %d recorded, %d render in every theme; rows %d: render %d (%d off the canvas), fail %d\n\n",
              r["files"]["done"].get<int>(), r["files"]["total"].get<int>(), r["files"]["all_render"].get<int>(),
              r["rows"].get<int>(), r["outcomes"]["render"].get<int>(), r["outcomes"]["canvas_off"].get<int>(),
              r["outcomes"]["fail"].get<int>());
  std::vector<std::vector<std::string>> t;
  for (const auto& l : r["by_library"]) {
    std::string sizes;
    for (const auto& z : l["off_sizes"])
      sizes += (sizes.empty() ? "" : ", ") + z["size"].get<std::string>() + " x" + std::to_string(z["rows"].get<int>());
    t.push_back({l["library"], std::to_string(l["files"].get<int>()), std::to_string(l["render"].get<int>()),
                 std::to_string(l["canvas_off"].get<int>()), std::to_string(l["fail"].get<int>()),
                 sizes.empty() ? "-" : sizes});
  }
  print_table(stdout, {"LIBRARY", "FILES", "RENDER", "OFF_CANVAS", "FAIL", "OFF_SIZES"}, t);
  std::printf("\n");
  t.clear();
  for (const auto& w : r["by_reason"])
    t.push_back({w["reason_class"], w["reason"], std::to_string(w["rows"].get<int>()),
                 std::to_string(w["files"].get<int>())});
  print_table(stdout, {"REASON_CLASS", "REASON", "ROWS", "FILES"}, t);
  std::printf("\nslowest:\n");
  t.clear();
  for (const auto& w : r["slowest"])
    t.push_back({w["path"], w["theme"], fixed(w["wall_s"].get<double>(), 2), fixed(w["cpu_s"].get<double>(), 2),
                 w["max_rss_mb"].is_null() ? "-" : fixed(w["max_rss_mb"].get<double>(), 1),
                 w["outcome"].get<std::string>() + " " + w["reason_class"].get<std::string>()});
  print_table(stdout, {"PATH", "THEME", "WALL_S", "CPU_S", "RSS_MB", "OUTCOME"}, t);
  const auto& tot = r["totals"];
  std::printf("\ntotals: sweep elapsed %ss; per row wall %ss (mean %ss), cpu %ss; peak rss %s MB\n",
              fixed(tot["elapsed_s"].get<double>(), 1).c_str(), fixed(tot["wall_s"].get<double>(), 1).c_str(),
              fixed(tot["mean_wall_s"].get<double>(), 2).c_str(), fixed(tot["cpu_s"].get<double>(), 1).c_str(),
              fixed(tot["max_rss_mb"].get<double>(), 1).c_str());
  return 0;
}

int sweep_diff_cmd(const std::string& db_path, Args args) {
  bool json = take_flag(args, "--json");
  if (args.size() != 2) return usage_error("diff needs two labels");
  auto db = open_for_listing(db_path, "sweep");
  std::optional<store::Sweep> a, b;
  if (db) {
    a = store::sweeps::find(*db, args[0]);
    b = store::sweeps::find(*db, args[1]);
  }
  for (const auto& [label, s] : {std::pair{args[0], &a}, std::pair{args[1], &b}}) {
    if (!*s) {
      std::fprintf(stderr, "plotq sweep: no sweep labelled '%s'\n", label.c_str());
      return 2;
    }
  }
  nlohmann::json d = runs::sweep_diff(*a, store::sweeps::results(*db, a->id), *b, store::sweeps::results(*db, b->id));
  std::size_t n = d["count"].get<std::size_t>();
  if (json) {
    std::printf("%s\n", d.dump(2).c_str());
    return n == 0 ? 0 : 1;
  }
  std::vector<std::vector<std::string>> t;
  for (const auto& x : d["differences"]) {
    std::string ha = x["a"].is_null() ? "" : x["a"]["sha256"].get<std::string>().substr(0, 12);
    std::string hb = x["b"].is_null() ? "" : x["b"]["sha256"].get<std::string>().substr(0, 12);
    std::string hash = ha.empty() ? hb : hb.empty() ? ha : ha == hb ? ha : ha + " -> " + hb;
    t.push_back({x["path"], x["theme"], x["kind"], class_cell(x["a"]), class_cell(x["b"]), hash, x["cause"]});
  }
  if (!t.empty()) {
    print_table(stdout, {"PATH", "THEME", "KIND", args[0], args[1], "SHA256", "CAUSE"}, t);
    std::printf("\n");
  }
  // What changed between the two: the runtime (its id), or not (then a difference is the code's:
  // the file's bytes, the mode's rules or plotq itself; CAUSE says which per row).
  std::string ra = id_or_unknown(a->runtime_id), rb = id_or_unknown(b->runtime_id);
  if (d["runtime_changed"].get<bool>())
    std::printf("the runtime changed: %s ran on %s, %s on %s\n", args[0].c_str(), ra.c_str(), args[1].c_str(), rb.c_str());
  else
    std::printf("the runtime is the same (%s): differences come from the code (the file, the mode or plotq)\n", ra.c_str());
  auto note = [](const nlohmann::json& h) {
    std::string s = h["mode"].get<std::string>() + ", " + h["state"].get<std::string>();
    if (h["state"] != "done")
      s += ", " + std::to_string(h["files_done"].get<int>()) + " of " + std::to_string(h["files_total"].get<int>()) + " files";
    return s;
  };
  std::printf("%zu difference%s in %zu rows compared: %s (%s) vs %s (%s)\n", n, n == 1 ? "" : "s",
              d["compared"].get<std::size_t>(), args[0].c_str(), note(d["a"]).c_str(), args[1].c_str(),
              note(d["b"]).c_str());
  return n == 0 ? 0 : 1;
}

int sweep_list(const std::string& db_path, Args args) {
  bool json = take_flag(args, "--json");
  if (!args.empty()) return usage_error("list takes no arguments");
  std::vector<store::Sweep> sweeps;
  auto db = open_for_listing(db_path, "sweep");
  if (db) sweeps = store::sweeps::list(*db);
  nlohmann::json out = nlohmann::json::array();
  std::vector<std::vector<std::string>> t;
  for (const auto& s : sweeps) {
    auto rows = store::sweeps::results(*db, s.id);
    nlohmann::json r = runs::sweep_report(s, rows, 0);
    out.push_back({{"label", s.label},
                   {"mode", s.mode},
                   {"server_url", s.server_url ? nlohmann::json(*s.server_url) : nlohmann::json()},
                   {"state", s.state},
                   {"files_done", r["files"]["done"]},
                   {"files_total", s.files_total},
                   {"render", r["outcomes"]["render"]},
                   {"fail", r["outcomes"]["fail"]},
                   {"elapsed_s", s.elapsed_s},
                   {"runtime_id", s.runtime_id ? nlohmann::json(*s.runtime_id) : nlohmann::json()},
                   {"created_at", store::iso_utc(s.created_at)}});
    t.push_back({s.label, s.mode + (s.server_url ? "+server" : ""), s.state,
                 std::to_string(r["files"]["done"].get<int>()) + "/" + std::to_string(s.files_total),
                 std::to_string(r["outcomes"]["render"].get<int>()), std::to_string(r["outcomes"]["fail"].get<int>()),
                 fixed(s.elapsed_s, 1), store::iso_utc(s.created_at)});
  }
  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  print_table(stdout, {"LABEL", "MODE", "STATE", "FILES", "RENDER", "FAIL", "ELAPSED_S", "CREATED"}, t);
  return 0;
}

}  // namespace

int cmd_sweep(Args args) {
  std::string sub;
  try {
    std::string db_path = take_db_path(args);
    if (take_flag(args, "--help")) {
      std::printf("%s", kUsage);
      return 0;
    }
    if (args.empty()) return usage_error("which subcommand?");
    sub = args[0];
    args.erase(args.begin());
    if (sub == "run") return sweep_run(db_path, args);
    if (sub == "report") return sweep_report_cmd(db_path, args);
    if (sub == "diff") return sweep_diff_cmd(db_path, args);
    if (sub == "list") return sweep_list(db_path, args);
    return usage_error("unknown subcommand '" + sub + "'");
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotq sweep: %s: %s\n", e.code().c_str(), e.what());
    return sub == "diff" ? 2 : 1;  // diff's 1 means "differences"
  }
}

}  // namespace plotq::cli
