// plotq sweep run: the CLI glue of a sweep session. The command line read into runs::SweepRunArgs,
// a new or stored sweep planned (sweep/options.hpp decides), the backend made by the sweep's policy
// (sweep/policy.hpp), the runner and the staggered warm-up (sweep/warmup.hpp) on one io_context,
// Ctrl-C, the summary (sweep/progress.hpp).
#include "tools/sweep_run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/env.hpp"
#include "common/log.hpp"
#include "runs/render_job.hpp"
#include "runs/runtime.hpp"
#include "sandbox/config.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/launcher.hpp"
#include "store/migrate.hpp"
#include "store/sweep_images.hpp"
#include "store/sweeps.hpp"
#include "store/time.hpp"
#include "sweep/backends.hpp"
#include "sweep/images.hpp"
#include "sweep/options.hpp"
#include "sweep/policy.hpp"
#include "sweep/progress.hpp"
#include "sweep/runner.hpp"
#include "sweep/warmup.hpp"
#include "tools/commands.hpp"
#include "tools/sweep_server_backend.hpp"

namespace plotq::cli {
namespace {

int usage_error(const std::string& what) { return sweep_usage_error(what); }

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

// ---- run --------------------------------------------------------------------------------------

bool pid_alive(std::int64_t pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }


struct ParsedRunArgs {
  runs::SweepRunArgs args;
  std::string error;  // non-empty: a usage error
};

// `sweep run`'s command line: every option taken, at most one DIR left.
ParsedRunArgs parse_run_args(Args args) {
  ParsedRunArgs p;
  runs::SweepRunArgs& a = p.args;
  a.glob = take_option(args, "--glob");
  // --language: a shorthand for the catalogue's glob of that language's files.
  std::string language = take_option(args, "--language");
  a.library = take_option(args, "--library");
  a.themes = take_option(args, "--themes");
  a.label = take_option(args, "--label");
  a.timeout = take_option(args, "--timeout");
  a.mode = take_option(args, "--mode");
  a.server = take_option(args, "--server");
  std::string jobs = take_option(args, "--jobs");
  a.resume = take_option(args, "--resume");
  auto refuse = [&](std::string why) {
    p.error = std::move(why);
    return p;
  };
  for (const auto& x : args)
    if (x.rfind("--", 0) == 0) return refuse("unknown option '" + x + "'");
  if (args.size() > 1) return refuse("one DIR, not " + std::to_string(args.size()));
  if (!language.empty()) {
    if (!a.glob.empty()) return refuse("--language and --glob are one choice: give one");
    if (language == "python") a.glob = runs::kDefaultSweepGlob;
    else if (language == "javascript") a.glob = runs::kJavaScriptSweepGlob;
    else if (language == "r") a.glob = runs::kRSweepGlob;
    else if (language == "julia") a.glob = runs::kJuliaSweepGlob;  // every file runtime_unavailable
    else if (language == "all") a.glob = runs::kAllSweepGlob;
    else return refuse("--language must be python, javascript, r, julia or all");
  }
  a.dir = args.empty() ? "" : args[0];
  if (a.dir.empty() && a.resume.empty()) return refuse("run needs DIR");
  if (!jobs.empty()) {
    char* end = nullptr;
    long n = std::strtol(jobs.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 64) return refuse("--jobs must be an integer in [1, 64]");
    a.jobs = static_cast<int>(n);
  }
  return p;
}

// What a session draws: the sweep (new or stored), the files it already recorded, its jobs.
struct RunPlan {
  store::Sweep sweep;
  std::vector<std::string> finished;  // sorted relative paths (resume)
  int jobs = 1;
};

// --resume LABEL: 0 when the stored sweep may go on with what was given, else the exit code.
int plan_resume(store::Db& db, const runs::SweepRunArgs& a, RunPlan& plan) {
  auto found = store::sweeps::find(db, a.resume);
  if (!found) return usage_error("no sweep labelled '" + a.resume + "'");
  const store::Sweep& sweep = plan.sweep = *found;
  std::string root_given;
  if (!a.dir.empty()) {
    std::error_code ec;
    root_given = std::filesystem::weakly_canonical(a.dir, ec).string();
  }
  if (auto d = runs::resume_difference(sweep, a, root_given)) {
    std::fprintf(stderr, "plotq sweep: %s '%s' differs from sweep %s's '%s'\n", d->option.c_str(), d->given.c_str(),
                 sweep.label.c_str(), d->stored.c_str());
    return 2;
  }
  if (sweep.state == "running" && sweep.pid && pid_alive(*sweep.pid) && *sweep.pid != ::getpid()) {
    std::fprintf(stderr, "plotq sweep: sweep %s is running (pid %lld)\n", sweep.label.c_str(),
                 static_cast<long long>(*sweep.pid));
    return 2;
  }
  // Rows of two runtimes in one sweep could not be told apart: a changed runtime is a new sweep.
  if (auto now_id = sweep_runtime_id(sweep.server_url, sweep.glob); now_id != sweep.runtime_id) {
    std::fprintf(stderr, "plotq sweep: the runtime changed (%s, sweep %s ran on %s): start a new sweep\n",
                 id_or_unknown(now_id).c_str(), sweep.label.c_str(), id_or_unknown(sweep.runtime_id).c_str());
    return 2;
  }
  plan.finished = store::sweeps::finished_paths(db, sweep.id);
  plan.jobs = a.jobs.value_or(sweep.jobs);
  return 0;
}

// A new sweep: 0 when its settings are good, its label free and DIR a directory, else the exit code.
int plan_new(store::Db& db, const runs::SweepRunArgs& a, RunPlan& plan) {
  runs::NewSweepSettings s = runs::new_sweep_settings(a, std::time(nullptr));
  if (!s.error.empty()) return usage_error(s.error);
  if (store::sweeps::find(db, s.sweep.label)) {
    std::fprintf(stderr, "plotq sweep: a sweep labelled '%s' exists; continue it with --resume %s or pick another --label\n",
                 s.sweep.label.c_str(), s.sweep.label.c_str());
    return 2;
  }
  std::error_code ec;
  std::filesystem::path root = std::filesystem::weakly_canonical(a.dir, ec);
  if (ec || !std::filesystem::is_directory(root)) return usage_error(a.dir + " is not a directory");
  plan.sweep = s.sweep;
  plan.sweep.root = root.string();
  plan.sweep.pid = ::getpid();
  plan.sweep.plotq_version = PLOTQ_VERSION;
  plan.sweep.runtime_id = sweep_runtime_id(plan.sweep.server_url, plan.sweep.glob);
  plan.jobs = plan.sweep.jobs;
  return 0;
}

// One session of a sweep: the backend and what it needs, all on one io_context; Ctrl-C; the
// runner; the warm-up; the summary. Members are destroyed in the reverse of their order here
// (the runner and the warm-up before the backend, the backend before what it draws with).
struct RunSession {
  RunSession(const std::string& db_path, store::Db& db, store::Sweep& sweep, int jobs,
             std::vector<runs::SweepFile> pending, std::size_t total)
      : db_path(db_path), db(db), sweep(sweep), jobs(jobs), pending(std::move(pending)), total(total),
        work(runs::pending_work(this->pending)), figure_files_left(work.browser_files),
        images(store::sweep_images_dir(db_path, sweep.id)) {}

  int run();
  void watch_signals();
  void on_signal(const boost::system::error_code& ec, int sig);
  int make_backend();
  int make_sandbox_backend();
  void make_figures(bool start_now);
  int fail_setup(const std::string& why);
  runs::RunnerOptions runner_options();
  void on_file(const runs::SweepCounts& c, const std::vector<store::SweepResult>& rows);
  void start_warm_up();
  void poll_warm_up();
  int finish(double elapsed_s);

  const std::string& db_path;
  store::Db& db;
  store::Sweep& sweep;
  int jobs;
  std::vector<runs::SweepFile> pending;
  std::size_t total;
  runs::PendingWork work;
  boost::asio::io_context io{1};
  std::string job_prefix = "sweep-" + random_hex(6);
  std::vector<std::string> themes = runs::split_list(sweep.themes);
  std::unique_ptr<sandbox::FigureRenderer> figures;
  std::unique_ptr<sandbox::Launcher> launcher;
  std::unique_ptr<runs::Renderer> renderer;
  std::unique_ptr<runs::SweepBackend> backend;
  runs::Progress progress{::isatty(2) == 1};
  int signal_seen = 0;
  // Caught from here on (queued until the loop runs): a Ctrl-C during setup still ends cleanly.
  boost::asio::signal_set signals{io, SIGINT, SIGTERM};
  double stagger_s = 0;                 // > 0: the warm-up is staggered, each step at most this long
  std::vector<std::string> warm_modes;  // the launcher's
  std::size_t figure_files_left;
  bool figures_stopped = false;
  runs::ImageKeeper images;  // the report's thumbnails, written on its own thread
  std::unique_ptr<runs::SweepRunner> runner;
  std::unique_ptr<runs::WarmUp> warm;
  boost::asio::steady_timer warm_timer{io};
};

int RunSession::run() {
  watch_signals();
  if (int rc = make_backend()) return rc;
  runner = std::make_unique<runs::SweepRunner>(
      io, db, sweep.id, *backend, runner_options(),
      [this](const runs::SweepCounts& c, const std::vector<store::SweepResult>& rows) { on_file(c, rows); });
  auto t0 = std::chrono::steady_clock::now();
  std::size_t skipped = total - pending.size();
  if (skipped > 0)
    std::fprintf(stderr, "plotq sweep: resuming %s: %zu of %zu files already recorded\n", sweep.label.c_str(), skipped,
                 total);
  progress.draw(runner->counts(), "");
  runner->start(pending, total, skipped, [this] {
    signals.cancel();
    if (figures) figures->stop();
    io.stop();
  });
  start_warm_up();
  io.run();
  progress.end();
  return finish(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

void RunSession::watch_signals() {
  signals.async_wait([this](const boost::system::error_code& ec, int sig) { on_signal(ec, sig); });
}

void RunSession::on_signal(const boost::system::error_code& ec, int sig) {
  if (ec) return;
  if (!signal_seen) {
    signal_seen = sig;
    progress.end();
    std::fprintf(stderr, "plotq sweep: stopping (signal %d); finished files stay recorded\n", sig);
    if (runner) runner->stop();
  } else {
    std::fprintf(stderr, "plotq sweep: still stopping (a figure being drawn ends by its deadline)\n");
  }
  watch_signals();
}

// 0, or the exit code when the backend cannot be made (the session is ended as interrupted).
int RunSession::make_backend() {
  try {
    if (sweep.mode == "bare") {
      runs::BareConfig bare = runs::bare_config_from_env();
      sandbox::Config sc = sandbox::resolved(sandbox::config_from_env());
      runs::ClassVocabulary classes = runs::load_class_vocabulary(bare.python, sc.harness_dir);
      make_figures(true);
      backend = runs::make_bare_backend(io, bare, std::move(classes), figures.get(), runs::read_runtime(bare.python));
    } else if (sweep.server_url) {
      backend = std::make_unique<ServerBackend>(io, *sweep.server_url, job_prefix);
    } else {
      return make_sandbox_backend();
    }
  } catch (const std::exception& e) {
    return fail_setup(e.what());
  }
  return 0;
}

// The Renderer in process, on a launcher set up by the sweep's policy (sweep/policy.hpp).
int RunSession::make_sandbox_backend() {
  sandbox::Config sc = sandbox::resolved(sandbox::config_from_env());
  runs::OperatorChoices chose{env_set("PLOTQ_SANDBOX_NICE"), env_set("PLOTQ_WARM_MODES"), env_set("PLOTQ_FIGURE_SPARES")};
  runs::apply_sandbox_policy(sc, work, std::filesystem::absolute(db_path).parent_path().string(), chose);
  launcher = std::make_unique<sandbox::Launcher>(io, sc);
  if (!launcher->ready()) return fail_setup("the sandbox is not ready (plotq sandbox check shows the missing layer)");
  // Staggered, the warm-up runs as chains (start_warm_up); else everything warms at once.
  stagger_s = runs::warm_stagger_s(sc, launcher->layers().active("warm"));
  if (stagger_s <= 0) launcher->prewarm();
  make_figures(stagger_s <= 0);
  warm_modes = sc.warm_modes;
  renderer = std::make_unique<runs::Renderer>(io, *launcher, figures.get(), runs::render_config_from_env(),
                                              std::make_shared<const runs::Runtime>(runs::read_runtime(sc.python)));
  backend = runs::make_sandbox_backend(*renderer, &db, job_prefix);
  return 0;
}

// Chromium only when a pending file needs it. start_now = false: made, but started later (by the
// warm-up, or on the first figure).
void RunSession::make_figures(bool start_now) {
  if (work.browser_files == 0) return;
  sandbox::FigureConfig fc = sandbox::figure_config_from_env();
  // Bare mode, the control, keeps the renderer's defaults.
  if (sweep.mode == "sandbox" && !env_set("PLOTQ_FIGURE_SPARES"))
    fc.figure_spares = runs::sweep_figure_spares(fc.figure_spares, themes.size() * work.figure_files);  // snippets use no spares
  figures = std::make_unique<sandbox::FigureRenderer>(io, fc);
  if (!figures->available("*")) {
    std::fprintf(stderr, "plotq sweep: figure renderer unavailable (%s): plotly, bokeh and JavaScript files fail as runtime_unavailable\n",
                 figures->unavailable_reason("*").c_str());
    figures.reset();
  } else if (start_now) {
    figures->start();
  }
}

int RunSession::fail_setup(const std::string& why) {
  std::fprintf(stderr, "plotq sweep: %s\n", why.c_str());
  store::sweeps::end_session(db, sweep.id, "interrupted", 0, store::now_unix());
  return 1;
}

runs::RunnerOptions RunSession::runner_options() {
  runs::RunnerOptions ro;
  ro.themes = themes;
  ro.timeout_s = sweep.timeout_s;
  ro.jobs = jobs;
  ro.keep_images = [this](const std::string& rel_path, std::map<std::string, std::string> pngs) {
    images.keep(rel_path, std::move(pngs));
  };
  // While the figure path warms up (its zygote, then Chromium), draw the plot files first.
  bool warm_figure = std::find(warm_modes.begin(), warm_modes.end(), "figure") != warm_modes.end();
  ro.hold = [this, warm_figure](const runs::SweepFile& f) {
    if (!launcher || stagger_s <= 0 || runs::render_mode(f.library) != runs::RenderMode::figure) return false;
    return (warm_figure && !launcher->zygote_ready("figure")) || (figures && !figures->ready());
  };
  return ro;
}

// A sandboxed sweep stops Chromium once its last figure file is recorded: the renderer would
// otherwise keep topping up its spare pages, each a start of the plotting library's JavaScript,
// beside the plot files still to draw. (Bare mode, the control, keeps its renderer to the end.)
void RunSession::on_file(const runs::SweepCounts& c, const std::vector<store::SweepResult>& rows) {
  progress.file(c, rows);
  if (sweep.mode == "sandbox" && figures && !figures_stopped && !rows.empty() &&
      runs::render_mode(rows.front().library) != runs::RenderMode::plot && figure_files_left > 0 && --figure_files_left == 0) {
    figures_stopped = true;
    figures->stop();
  }
}

// The staggered warm-up (sweep/warmup.hpp); the figure files wait for their chain (ro.hold) while
// plot files are left.
void RunSession::start_warm_up() {
  if (!launcher || stagger_s <= 0) return;
  std::vector<std::vector<runs::WarmStep>> chains;
  for (const auto& plan : runs::plan_warm_chains(warm_modes, figures != nullptr, ::sysconf(_SC_NPROCESSORS_ONLN) < 2)) {
    auto& steps = chains.emplace_back();
    for (const auto& step : plan) {
      if (step.chromium)
        steps.push_back({[this] { if (!figures_stopped) figures->start(); },
                         [this] { return figures_stopped || figures->ready(); }});
      else
        steps.push_back({[this, m = step.mode] { launcher->prewarm(m); },
                         [this, m = step.mode] { return launcher->zygote_ready(m); }});
    }
  }
  warm = std::make_unique<runs::WarmUp>(std::move(chains), stagger_s);
  warm->begin();
  if (!warm->empty()) poll_warm_up();
}

void RunSession::poll_warm_up() {
  if (runner->stopped()) return;  // Ctrl-C or an error: start nothing more
  if (!warm->poll()) return;
  warm_timer.expires_after(std::chrono::milliseconds(100));
  warm_timer.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) poll_warm_up();
  });
}

int RunSession::finish(double elapsed_s) {
  const runs::SweepCounts& c = runner->counts();
  bool complete = !runner->stopped() && c.skipped + c.done == c.total;
  store::sweeps::end_session(db, sweep.id, complete ? "done" : "interrupted", elapsed_s, store::now_unix());
  backend.reset();
  images.finish();
  std::fputs(runs::run_summary(sweep, c, complete, elapsed_s).c_str(), stdout);
  if (images.failed() > 0)  // the rows are recorded; only the report's pictures are missing
    std::fprintf(stderr, "plotq sweep: %zu thumbnails not kept (first: %s)\n", images.failed(),
                 images.first_failure().c_str());
  if (!runner->error().empty()) {
    std::fprintf(stderr, "plotq sweep: stopped: %s\n", runner->error().c_str());
    return 1;
  }
  if (signal_seen) return 128 + signal_seen;
  return 0;
}

}  // namespace

int sweep_run(const std::string& db_path, Args args) {
  ParsedRunArgs p = parse_run_args(std::move(args));
  if (!p.error.empty()) return usage_error(p.error);
  auto db = store::Db::open(db_path, store::options_from_env());
  store::migrate(*db);
  const bool resuming = !p.args.resume.empty();
  RunPlan plan;
  if (int rc = resuming ? plan_resume(*db, p.args, plan) : plan_new(*db, p.args, plan)) return rc;
  store::Sweep& sweep = plan.sweep;
  std::vector<runs::SweepFile> files;
  try {
    files = runs::find_sweep_files(sweep.root, sweep.glob, runs::split_list(sweep.libraries.value_or("")));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plotq sweep: %s\n", e.what());
    return 2;
  }
  if (!resuming) {
    sweep.id = store::sweeps::create(*db, sweep, store::now_unix());
    // A removed sweep may have had this id: its thumbnails are not this one's.
    store::remove_sweep_images(db_path, sweep.id);
  }
  std::vector<runs::SweepFile> pending;
  for (auto& f : files)
    if (!std::binary_search(plan.finished.begin(), plan.finished.end(), f.rel_path)) pending.push_back(f);
  store::sweeps::begin_session(*db, sweep.id, static_cast<int>(files.size()), plan.jobs, ::getpid(), store::now_unix());
  // The launcher's structured log (zygote starts and their preload times, job ends) would bury the
  // progress lines: off unless PLOTQ_SWEEP_LOG=1 asks for it (diagnosing a slow or failing sweep).
  set_log_enabled(runs::bare_config_from_env().sweep_log);
  RunSession session(db_path, *db, sweep, plan.jobs, std::move(pending), files.size());
  return session.run();
}

}  // namespace plotq::cli
