#include "sandbox/figure_renderer.hpp"
#include "sandbox/canvas.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "common/env.hpp"
#include "common/log.hpp"
#include "sandbox/figure_process.hpp"
#include "sandbox/sandbox_metrics.hpp"
#include "sandbox/snippet_libraries.hpp"

namespace plotq::sandbox {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------
// The runtime's JavaScript

namespace {

// <venv>/lib/python3.N/site-packages of the runtime. PLOTQ_DEFAULT_PYTHON is <venv>/bin/python,
// taken lexically (it is a link to the base interpreter, outside the venv).
std::string runtime_site_packages() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path lib = fs::path(PLOTQ_DEFAULT_PYTHON).parent_path().parent_path() / "lib";
  std::string best;
  for (fs::directory_iterator it(lib, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind("python3.", 0) == 0 && fs::is_directory(it->path() / "site-packages", ec) &&
        (best.empty() || name > fs::path(best).parent_path().filename().string()))
      best = (it->path() / "site-packages").string();
  }
  return best;
}

}  // namespace

std::string runtime_plotly_js() {
  std::string site = runtime_site_packages();
  return site.empty() ? "" : site + "/plotly/package_data/plotly.min.js";
}

std::string runtime_bokeh_js() {
  std::string site = runtime_site_packages();
  return site.empty() ? "" : site + "/bokeh/server/static/js";
}

std::string runtime_js_modules() { return project_home() + "/runtime/js/node_modules"; }

// ------------------------------------------------------------------------------------------------
// Jobs (the renderer process itself is figure_process.hpp's FigureProc).

namespace {

using Proc = FigureProc;

struct Job {
  std::uint64_t id = 0;
  std::string input;  // the file the page draws: the figure JSON, or (snippet set) the JavaScript snippet
  std::string out;    // the PNG it writes
  std::string library;  // "" = the figure's shape says
  std::optional<SnippetJob> snippet;  // set: a JavaScript snippet's job
  double timeout_s = 0;
  int attempts = 0;  // times sent to a renderer
  Clock::time_point start;
  Clock::time_point deadline;  // start + timeout: the renderer's own budget ends here
  bool cancelled = false;      // answered "cancelled"; in flight until the renderer acknowledges
  std::function<void(FigureResult)> done;
};

FigureResult failure(std::string code, std::string detail) {
  FigureResult r;
  r.code = std::move(code);
  r.detail = std::move(detail);
  return r;
}

}  // namespace

// ------------------------------------------------------------------------------------------------

struct FigureRenderer::Impl : std::enable_shared_from_this<FigureRenderer::Impl> {
  Impl(asio::io_context& io_, FigureConfig cfg_) : io(io_), cfg(std::move(cfg_)), queue_timer(io_), job_timer(io_) {
    // Writing to a renderer that just died must give EPIPE, not kill the host (plotqd does the same).
    struct sigaction old {};
    if (::sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
  }

  asio::io_context& io;
  FigureConfig cfg;
  std::shared_ptr<Proc> proc;               // the current renderer (starting or ready), or null
  std::set<std::shared_ptr<Proc>> living;   // every process not yet reaped (current and retiring)
  std::deque<Job> pending;
  std::optional<Job> inflight;
  asio::steady_timer queue_timer;
  asio::steady_timer job_timer;
  std::atomic<std::uint64_t> next_id{1};  // render() hands out ids from any thread
  std::uint64_t start_count = 0;
  std::uint64_t cancels_in_flight = 0;
  std::uint64_t cancels_acknowledged = 0;
  std::uint64_t draws_begun = 0;
  bool stopping = false;

  std::string script() const {
    return cfg.figure_script.empty() ? project_home() + "/sandbox/figure/renderer.mjs" : cfg.figure_script;
  }

  bool has_plotly() const { return !cfg.plotly_js.empty() && ::access(cfg.plotly_js.c_str(), R_OK) == 0; }
  bool has_bokeh() const {
    return !cfg.bokeh_js.empty() && ::access((cfg.bokeh_js + "/bokeh.min.js").c_str(), R_OK) == 0;
  }

  // A snippet library is drawable when every file the renderer's table (snippet_libraries.hpp)
  // names for it is readable under the modules dir: what lib/snippet.mjs checks before it loads them.
  static bool is_snippet_library(const std::string& library) { return snippet_library_files().count(library) > 0; }
  bool has_js(const std::string& library) const {
    auto it = snippet_library_files().find(library);
    if (cfg.js_modules.empty() || it == snippet_library_files().end()) return false;
    for (const auto& f : it->second)
      if (::access((cfg.js_modules + "/" + f).c_str(), R_OK) != 0) return false;
    return true;
  }
  bool has_any_js() const {
    for (const auto& [library, files] : snippet_library_files())
      if (has_js(library)) return true;
    return false;
  }

  // library "" asks about plotly or bokeh (figure mode); "*" about anything at all to draw (start).
  std::string unavailable_reason(const std::string& library = "") const {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (::access(cfg.node.c_str(), X_OK) != 0) return "node not found at " + cfg.node;
    if (::access(cfg.chromium.c_str(), X_OK) != 0) return "chromium not found at " + cfg.chromium;
    if (library == "plotly" && !has_plotly()) return "plotly.js not found at '" + cfg.plotly_js + "'";
    if (library == "bokeh" && !has_bokeh()) return "BokehJS not found in '" + cfg.bokeh_js + "'";
    const bool js = is_snippet_library(library);
    if (js && !has_js(library))
      return library + "'s JavaScript not found in '" + cfg.js_modules + "' (run tools/setup.sh)";
    if (!library.empty() && library != "*" && library != "plotly" && library != "bokeh" && !js)
      return "no figure renderer for " + library;
    if (library.empty() && !has_plotly() && !has_bokeh())
      return "neither plotly.js ('" + cfg.plotly_js + "') nor BokehJS ('" + cfg.bokeh_js + "') found";
    if (library == "*" && !has_plotly() && !has_bokeh() && !has_any_js())
      return "no plotly.js, BokehJS or snippet library found";
    fs::path s = script();
    if (!fs::is_regular_file(s, ec)) return "renderer script not found at " + s.string();
    if (!fs::is_regular_file(s.parent_path() / "node_modules/playwright-core/package.json", ec))
      return "playwright-core is not installed in " + s.parent_path().string() + " (run tools/setup.sh)";
    if (::geteuid() == 0 && ::access("/usr/bin/setpriv", X_OK) != 0) return "setpriv (util-linux) not found";
    return "";
  }

  // Answers a job once (a cancelled job in flight has answered already).
  void complete(Job& job, FigureResult r) {
    if (!job.done) return;
    r.wall_s = std::chrono::duration<double>(Clock::now() - job.start).count();
    auto done = std::move(job.done);
    job.done = nullptr;
    asio::post(io, [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
  }

  void fail_pending(const std::string& code, const std::string& detail) {
    while (!pending.empty()) {
      Job j = std::move(pending.front());
      pending.pop_front();
      complete(j, failure(code, detail));
    }
    queue_timer.cancel();
  }

  // ---- jobs ------------------------------------------------------------------------------------

  void enqueue(Job job) {
    if (stopping) return complete(job, failure("shutdown", "the figure renderer is stopping"));
    if (std::string why = unavailable_reason(job.snippet ? job.snippet->library : job.library); !why.empty())
      return complete(job, failure("runtime_unavailable", why));
    if (pending.size() >= cfg.figure_max_queue + (inflight ? 0u : 1u))
      return complete(job, failure("busy", "too many figure jobs waiting"));
    pending.push_back(std::move(job));
    arm_queue_timer();
    ensure_started();
    pump();
  }

  void arm_queue_timer() {
    if (pending.empty()) return (void)queue_timer.cancel();
    auto earliest = std::min_element(pending.begin(), pending.end(), [](const Job& a, const Job& b) {
                      return a.deadline < b.deadline;
                    })->deadline;
    queue_timer.expires_at(earliest);
    queue_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      auto self = w.lock();
      if (ec || !self) return;
      self->expire_queued();
    });
  }

  void expire_queued() {
    auto now = Clock::now();
    for (auto it = pending.begin(); it != pending.end();) {
      if (it->deadline <= now) {
        Job j = std::move(*it);
        it = pending.erase(it);
        complete(j, failure("timeout", "the figure waited for the renderer past its timeout"));
      } else {
        ++it;
      }
    }
    arm_queue_timer();
  }

  void pump() {
    if (!proc || !proc->ready || inflight || pending.empty()) return;
    Job job = std::move(pending.front());
    pending.pop_front();
    arm_queue_timer();
    double left_ms = std::chrono::duration<double, std::milli>(job.deadline - Clock::now()).count();
    if (left_ms < 1) {
      complete(job, failure("timeout", "the figure waited for the renderer past its timeout"));
      return pump();
    }
    std::string line;
    try {
      json req{{"id", job.id}, {job.snippet ? "snippet" : "figure", job.input}, {"out", job.out},
               {"timeout_ms", std::floor(left_ms)}};
      if (job.snippet) {
        req["library"] = job.snippet->library;
        req["theme"] = job.snippet->theme;
        if (job.snippet->bare) req["bare"] = true;
      } else if (!job.library.empty()) {
        req["library"] = job.library;
      }
      if (!job.snippet) req["progress"] = true;  // {"id", "drawing"} when its page begins the draw
      line = req.dump() + "\n";
    } catch (const json::exception&) {
      complete(job, failure("request_invalid", "a path is not valid UTF-8"));
      return pump();
    }
    ++job.attempts;
    inflight = std::move(job);
    // The renderer answers "timeout" itself at the deadline; the group dies at deadline + grace.
    job_timer.expires_at(inflight->deadline + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(cfg.figure_kill_grace_s)));
    arm_job_timer(inflight->deadline + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(cfg.figure_kill_grace_s)),
                  "job timeout");
    send_line(proc, std::move(line));
  }

  // Kills the renderer when the job in flight is still there at `when` (its timeout plus grace, or
  // a cancel the renderer did not acknowledge in time).
  void arm_job_timer(Clock::time_point when, const char* reason) {
    job_timer.expires_at(when);
    job_timer.async_wait([w = weak_from_this(), p = proc, id = inflight->id, reason](const boost::system::error_code& ec) {
      auto self = w.lock();
      if (ec || !self || !self->inflight || self->inflight->id != id) return;
      log_event("figure_renderer_kill", {{"pid", p->pid}, {"reason", reason}});
      Job j = std::move(*self->inflight);
      self->inflight.reset();
      self->complete(j, failure("timeout", "the renderer did not answer in time and was killed"));
      kill_group(*p);
    });
  }

  void send_line(const std::shared_ptr<Proc>& p, std::string line) { send_figure_line(p, std::move(line)); }

  // ---- cancel ------------------------------------------------------------------------------------

  void cancel_job(std::uint64_t id) {
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      if (it->id != id) continue;
      Job j = std::move(*it);
      pending.erase(it);
      arm_queue_timer();
      log_event("figure_cancel", {{"id", id}, {"state", "queued"}});
      return complete(j, failure("cancelled", "the job was cancelled before it was drawn"));
    }
    if (!inflight || inflight->id != id || inflight->cancelled || !proc) return;
    log_event("figure_cancel", {{"id", id}, {"state", "drawing"}, {"pid", proc->pid}});
    // Answer now; the renderer closes the job's page. The next job is sent once it acknowledges
    // (one job at a time), or a fresh renderer takes over if it does not within the grace.
    inflight->cancelled = true;
    ++cancels_in_flight;
    complete(*inflight, failure("cancelled", "the job was cancelled while being drawn"));
    arm_job_timer(std::min(inflight->deadline, Clock::now()) +
                      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cfg.figure_kill_grace_s)),
                  "cancel not acknowledged");
    send_line(proc, json{{"cancel", id}}.dump() + "\n");
  }

  // ---- renderer answers ------------------------------------------------------------------------

  void on_line(const std::shared_ptr<Proc>& p, const std::string& line) {
    json msg = json::parse(line, nullptr, false);
    if (msg.is_discarded() || !msg.is_object()) return protocol_fault(p, "a line from the renderer is not JSON");
    if (!p->ready) {
      if (msg.value("ready", false) != true) {
        std::string detail = msg.value("detail", std::string("the renderer could not start"));
        log_event("figure_renderer_start_failed", {{"pid", p->pid}, {"detail", detail}});
        if (p == proc) fail_pending("renderer_start_failed", detail);
        kill_group(*p);
        return;
      }
      p->ready = true;
      p->start_timer.cancel();
      count_chromium_ready();
      log_event("figure_renderer_ready",
                {{"pid", p->pid},
                 {"ms", std::lround(std::chrono::duration<double, std::milli>(Clock::now() - p->started).count())},
                 {"chromium", msg.value("chromium", "")},
                 {"plotly", msg.value("plotly", json())},
                 {"bokeh", msg.value("bokeh", json())},
                 {"js", msg.value("js", json())},
                 {"chromium_uid", msg.value("chromium_uid", json())},
                 {"netns", cfg.figure_netns},
                 {"pidns", cfg.figure_pidns}});
      return pump();
    }
    if (msg.contains("drawing")) {
      // Not an answer: the page began to draw the job in flight.
      if (p == proc && inflight && msg.value("id", json()) == inflight->id) {
        ++draws_begun;
        log_event("figure_drawing", {{"id", inflight->id}, {"pid", p->pid}});
      }
      return;
    }
    if (p != proc || !inflight || !msg.contains("id") || msg["id"] != inflight->id) {
      // An answer for a job the host already gave up on (killed for its timeout): ignore it.
      return;
    }
    job_timer.cancel();
    Job job = std::move(*inflight);
    inflight.reset();
    if (job.cancelled) {
      // Answered already; this is the renderer letting go of it (its page is closed).
      const bool acknowledged = msg.value("code", "") == "cancelled";
      if (acknowledged) ++cancels_acknowledged;
      log_event("figure_cancel_done", {{"id", job.id}, {"acknowledged", acknowledged}, {"pid", p->pid}});
      if (++p->jobs >= cfg.figure_restart_after) retire(p);
      return pump();
    }
    FigureResult r;
    try {
      r.ok = msg.value("ok", false);
      r.render_ms = msg.value("ms", 0.0);
      if (r.ok) {
        r.width = msg.at("width").get<int>();
        r.height = msg.at("height").get<int>();
        r.bytes = msg.value("bytes", std::uint64_t{0});
        r.blocked_requests = msg.value("blocked_requests", 0);
        r.csp_violations = msg.value("csp_violations", 0);
        r.library = msg.value("library", "");
        r.reused = msg.value("reused", false);
        r.ready = msg.value("ready", "");
        r.popups = msg.value("popups", 0);
        if (!on_canvas(r.width, r.height)) r = failure("protocol_error", "the renderer reported an unexpected size");
      } else {
        r.code = msg.at("code").get<std::string>();
        r.detail = msg.value("detail", "");
        if (auto c = msg.find("error_class"); c != msg.end() && c->is_string()) r.error_class = c->get<std::string>().substr(0, 64);
        if (auto l = msg.find("error_line"); l != msg.end() && l->is_number_integer() && l->get<long long>() > 0 &&
                                               l->get<long long>() < (1LL << 31))
          r.error_line = static_cast<int>(l->get<long long>());
      }
    } catch (const json::exception&) {
      r = failure("protocol_error", "the renderer's answer has the wrong shape");
    }
    complete(job, std::move(r));
    if (++p->jobs >= cfg.figure_restart_after) retire(p);
    pump();
  }

  void protocol_fault(const std::shared_ptr<Proc>& p, const char* what) {
    log_event("figure_renderer_kill", {{"pid", p->pid}, {"reason", what}});
    if (p == proc && inflight) {
      job_timer.cancel();
      Job j = std::move(*inflight);
      inflight.reset();
      complete(j, failure("protocol_error", what));
    }
    kill_group(*p);
  }

  // ---- process life ----------------------------------------------------------------------------

  void ensure_started() {
    if (proc || stopping) return;
    std::string why = spawn();
    if (!why.empty()) {
      log_event("figure_renderer_start_failed", {{"detail", why}});
      fail_pending("renderer_start_failed", why);
    }
  }

  std::vector<std::string> argv_for(const std::string& tmp_dir) const {
    std::vector<std::string> a = {cfg.node, script(),
                                  "--chromium=" + cfg.chromium,
                                  has_plotly() ? "--plotly=" + cfg.plotly_js : "--no-plotly",
                                  has_bokeh() ? "--bokeh=" + cfg.bokeh_js : "--no-bokeh",
                                  has_any_js() ? "--js-modules=" + cfg.js_modules : "--no-js",
                                  "--tmp-dir=" + tmp_dir,
                                  "--max-bytes=" + std::to_string(cfg.figure_max_bytes),
                                  "--max-depth=" + std::to_string(cfg.figure_max_depth),
                                  "--max-heap-mb=" + std::to_string(cfg.figure_heap_mb),
                                  "--spares=" + std::to_string(cfg.figure_spares)};
    if (::geteuid() == 0) {
      a.push_back("--uid=" + std::to_string(cfg.figure_uid));
      a.push_back("--gid=" + std::to_string(cfg.figure_gid));
    }
    for (const char* off : figure_switches_off(cfg)) a.push_back(off);
    return a;
  }

  // Starts a renderer process (figure_process.cpp) and watches it. Returns "" or why not.
  std::string spawn() {
    FigureSpawn sp = spawn_figure_process(io, cfg, [this](const std::string& tmp_dir) { return argv_for(tmp_dir); });
    if (!sp.proc) return sp.error;
    auto p = sp.proc;
    proc = p;
    living.insert(p);
    ++start_count;
    auto w = weak_from_this();
    watch_figure_process(p, cfg.figure_stderr_keep_bytes,
                         {[w, p](const std::string& line) {
                            if (auto self = w.lock()) self->on_line(p, line);
                          },
                          [w, p](const char* fault) {
                            if (auto self = w.lock()) self->protocol_fault(p, fault);
                          },
                          [w, p](const FigureExit& x) {
                            if (auto self = w.lock()) self->reap(p, x);
                          }});
    p->start_timer.expires_after(std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(cfg.figure_start_timeout_s)));
    p->start_timer.async_wait([w, p](const boost::system::error_code& ec) {
      auto self = w.lock();
      if (ec || !self || p->ready) return;
      log_event("figure_renderer_start_failed", {{"pid", p->pid}, {"detail", "not ready in time"}});
      if (p == self->proc) self->fail_pending("renderer_start_failed", "the renderer was not ready in time");
      kill_group(*p);
    });
    return "";
  }

  // The renderer exited (reaped, its dir removed): answer or retry the job it held, restart.
  void reap(const std::shared_ptr<Proc>& p, const FigureExit& x) {
    const int code = x.exit_code, sig = x.signal;
    const std::string& tail = x.stderr_tail;
    living.erase(p);
    if (p != proc) return;  // a retired renderer finished shutting down
    proc.reset();
    const bool was_ready = p->ready;
    if (inflight) {
      job_timer.cancel();
      Job j = std::move(*inflight);
      inflight.reset();
      if (j.attempts < 2 && Clock::now() < j.deadline && !stopping && !j.cancelled) {
        // The renderer died under the job (or just before it arrived): one more try on a fresh one.
        pending.push_front(std::move(j));
        arm_queue_timer();
      } else {
        complete(j, failure("renderer_crashed", "the renderer exited while drawing (exit " + std::to_string(code) +
                                                    ", signal " + std::to_string(sig) + ")"));
      }
    }
    if (!was_ready) {
      // A start that failed: answer the waiting jobs now instead of looping on restarts.
      std::string detail = "the renderer exited before it was ready (exit " + std::to_string(code) + ")";
      std::string last = tail.substr(0, tail.find_last_not_of("\n") + 1);
      last = last.substr(last.find_last_of('\n') + 1);
      if (!last.empty()) detail += ": " + last.substr(0, 200);
      fail_pending("renderer_start_failed", detail);
      return;
    }
    // It had been serving: stay warm for the next job.
    if (!stopping) {
      ensure_started();
      pump();
    }
  }

  // Graceful replacement after figure_restart_after jobs: stdin EOF makes the renderer close its
  // browser and exit; a fresh one starts at once; the old one is killed if it lingers.
  void retire(std::shared_ptr<Proc> p) {  // by value: it may be `proc` itself, reset below
    if (p == proc) proc.reset();
    boost::system::error_code ignored;
    p->in.close(ignored);
    p->kill_timer.expires_after(std::chrono::seconds(10));
    p->kill_timer.async_wait([p](const boost::system::error_code& ec) {
      if (!ec) kill_group(*p);
    });
    if (!stopping) ensure_started();
  }

  void stop_all() {
    stopping = true;
    fail_pending("shutdown", "the figure renderer is stopping");
    if (inflight) {
      job_timer.cancel();
      Job j = std::move(*inflight);
      inflight.reset();
      complete(j, failure("shutdown", "the figure renderer is stopping"));
    }
    if (proc) retire(proc);
  }

  // Synchronous teardown for the destructor: kill, reap (immediate after SIGKILL), remove dirs.
  void destroy() {
    stopping = true;
    queue_timer.cancel();
    job_timer.cancel();
    for (const auto& p : living) destroy_figure_process(*p);
    living.clear();
    proc.reset();
    pending.clear();
    inflight.reset();
  }
};

// ------------------------------------------------------------------------------------------------

FigureRenderer::FigureRenderer(asio::io_context& io, FigureConfig config)
    : impl_(std::make_shared<Impl>(io, std::move(config))) {}

FigureRenderer::~FigureRenderer() { impl_->destroy(); }

void FigureRenderer::start() {
  asio::post(impl_->io, [w = std::weak_ptr<Impl>(impl_)] {
    if (auto self = w.lock(); self && self->unavailable_reason("*").empty()) self->ensure_started();
  });
}

namespace {
// A job for either kind: its id, paths, the timeout clamped to figure_max_timeout_s and its deadline.
Job make_job(std::uint64_t id, std::string in, std::string out, double timeout_s, double max_s,
             std::function<void(FigureResult)> done) {
  Job job;
  job.id = id;
  job.input = std::move(in);
  job.out = std::move(out);
  job.start = Clock::now();
  job.timeout_s = (std::isfinite(timeout_s) && timeout_s > 0) ? std::min(timeout_s, max_s) : max_s;
  job.deadline = job.start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(job.timeout_s));
  job.done = std::move(done);
  return job;
}

// Queues it on the io_context (render() and render_snippet() may be called from any thread).
std::uint64_t submit(const std::shared_ptr<FigureRenderer::Impl>& impl, Job job) {
  const std::uint64_t id = job.id;
  asio::post(impl->io, [w = std::weak_ptr<FigureRenderer::Impl>(impl), job = std::move(job)]() mutable {
    if (auto self = w.lock()) self->enqueue(std::move(job));
  });
  return id;
}
}  // namespace

std::uint64_t FigureRenderer::render(std::string figure_path, std::string out_path, double timeout_s,
                                     std::function<void(FigureResult)> done, std::string library) {
  Job job = make_job(impl_->next_id++, std::move(figure_path), std::move(out_path), timeout_s,
                     impl_->cfg.figure_max_timeout_s, std::move(done));
  job.library = std::move(library);
  return submit(impl_, std::move(job));
}

std::uint64_t FigureRenderer::render_snippet(std::string snippet_path, std::string out_path, SnippetJob how,
                                             double timeout_s, std::function<void(FigureResult)> done) {
  Job job = make_job(impl_->next_id++, std::move(snippet_path), std::move(out_path), timeout_s,
                     impl_->cfg.figure_max_timeout_s, std::move(done));
  job.snippet = std::move(how);
  return submit(impl_, std::move(job));
}

void FigureRenderer::cancel(std::uint64_t id) {
  asio::post(impl_->io, [w = std::weak_ptr<Impl>(impl_), id] {
    if (auto self = w.lock()) self->cancel_job(id);
  });
}

void FigureRenderer::stop() {
  asio::post(impl_->io, [w = std::weak_ptr<Impl>(impl_)] {
    if (auto self = w.lock()) self->stop_all();
  });
}

bool FigureRenderer::available(const std::string& library) const {
  return impl_->unavailable_reason(library).empty();
}
std::string FigureRenderer::unavailable_reason(const std::string& library) const {
  return impl_->unavailable_reason(library);
}
const std::string& FigureRenderer::js_modules() const { return impl_->cfg.js_modules; }
std::uint64_t FigureRenderer::figure_max_bytes() const { return impl_->cfg.figure_max_bytes; }
std::uint64_t FigureRenderer::starts() const { return impl_->start_count; }
std::uint64_t FigureRenderer::cancels_in_flight() const { return impl_->cancels_in_flight; }
std::uint64_t FigureRenderer::cancels_acknowledged() const { return impl_->cancels_acknowledged; }
std::uint64_t FigureRenderer::draws_begun() const { return impl_->draws_begun; }
pid_t FigureRenderer::renderer_pid() const { return impl_->proc ? impl_->proc->pid : 0; }
bool FigureRenderer::ready() const { return impl_->proc && impl_->proc->ready; }

}  // namespace plotq::sandbox
