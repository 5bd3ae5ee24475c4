// Bare mode's backend: each file's Python steps run on a worker thread of their own (blocking
// spawn/poll/wait, sweep/bare.cpp); results come back to the io_context, where plotly JSON goes
// through the FigureRenderer theme after theme and the rows are classified. JavaScript snippets
// go straight to the FigureRenderer's bare page.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include "common/files.hpp"
#include "runs/libraries.hpp"
#include "runs/outcome.hpp"
#include "runs/render_job.hpp"
#include "sweep/backends.hpp"
#include "sandbox/figure_renderer.hpp"

namespace plotq::runs {

Outcome sweep_support(const std::string& library, const Runtime& runtime, const sandbox::FigureRenderer* figures) {
  return render_support(library, runtime, figures);  // the render path's own rule, so both modes agree
}

namespace {

class BareBackend : public SweepBackend {
 public:
  BareBackend(boost::asio::io_context& io, BareConfig config, ClassVocabulary classes,
              sandbox::FigureRenderer* figures, Runtime runtime)
      : io_(io), config_(std::move(config)), classes_(std::move(classes)), figures_(figures),
        runtime_(std::move(runtime)) {}

  ~BareBackend() override {
    stop_ = true;
    for (auto& [id, t] : threads_)
      if (t.joinable()) t.join();
  }

  Outcome support(const std::string& library) override { return sweep_support(library, runtime_, figures_); }

  void start(const SweepTask& task, const std::vector<std::string>& themes, double timeout_s,
             std::function<void(FileOutcome)> done) override {
    std::uint64_t id = next_id_++;
    if (render_mode(task.file.library) == RenderMode::snippet) return start_snippet(task, themes, timeout_s, std::move(done));
    // Figure-mode libraries: the Python step writes the figure's JSON, the host draws it.
    bool plotly = render_mode(task.file.library) == RenderMode::figure;
    bool r_file = render_mode(task.file.library) == RenderMode::r;  // Rscript, not the venv's python
    // The loop must not run out of work while the thread runs: the guard goes with the result.
    auto work = std::make_shared<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(
        io_.get_executor());
    threads_[id] = std::thread([this, id, source = task.source, csv = task.data_csv, themes, timeout_s, plotly,
                                r_file, work, done = std::move(done)]() mutable {
      std::vector<BareRun> runs;
      for (const auto& theme : themes) {
        if (stop_) break;
        runs.push_back(r_file ? run_bare_r(config_, source, theme, timeout_s, stop_)
                              : run_bare_python(config_, source, csv, theme, plotly, timeout_s, stop_));
      }
      boost::asio::post(io_, [this, id, runs = std::move(runs), themes, timeout_s, plotly, work,
                              done = std::move(done)]() mutable {
        work->reset();
        auto it = threads_.find(id);
        if (it != threads_.end()) {
          it->second.join();
          threads_.erase(it);
        }
        finish(std::move(runs), themes, timeout_s, plotly, std::move(done));
      });
    });
  }

  void cancel_all() override { stop_ = true; }

 private:
  struct Pending {
    std::vector<BareRun> runs;
    std::vector<std::string> themes;
    double timeout_s = 0;
    std::vector<store::SweepResult> rows;
    std::map<std::string, std::string> pngs;  // theme -> a render's PNG
    std::function<void(FileOutcome)> done;
  };

  static void cleanup(const std::vector<BareRun>& runs) {
    for (const auto& r : runs) remove_run_dir(r.dir);
  }

  void finish(std::vector<BareRun> runs, const std::vector<std::string>& themes, double timeout_s, bool plotly,
              std::function<void(FileOutcome)> done) {
    bool cancelled = stop_ || runs.size() != themes.size();
    for (const auto& r : runs) cancelled = cancelled || r.cancelled;
    if (cancelled) {
      cleanup(runs);
      FileOutcome out;
      out.cancelled = true;
      return done(std::move(out));
    }
    for (const auto& r : runs) {
      if (!r.host_error.empty()) {  // the host could not run it (temp dir, spawn): not the file's outcome
        cleanup(runs);
        FileOutcome out;
        out.error = "bare run failed on this host: " + r.host_error;
        return done(std::move(out));
      }
    }
    auto p = std::make_shared<Pending>();
    p->runs = std::move(runs);
    p->themes = themes;
    p->timeout_s = timeout_s;
    p->done = std::move(done);
    if (!plotly) {
      for (std::size_t i = 0; i < themes.size(); ++i) {
        store::SweepResult row;
        row.theme = themes[i];
        std::string png;
        classify_bare(config_, p->runs[i], classes_, "plot-" + themes[i] + ".png", row, &png);
        if (!png.empty()) p->pngs[themes[i]] = std::move(png);
        p->rows.push_back(std::move(row));
      }
      return complete(p);
    }
    figure_step(p, 0);
  }

  // plotly: theme i's Python step wrote plot-<theme>.json (or failed); draw it, then the next.
  void figure_step(std::shared_ptr<Pending> p, std::size_t i) {
    if (i == p->themes.size()) return complete(p);
    const BareRun& run = p->runs[i];
    const std::string& theme = p->themes[i];
    store::SweepResult row;
    row.theme = theme;
    bool python_ok = run.host_error.empty() && !run.timed_out && !run.signal && run.exit_code.value_or(1) == 0;
    double remaining = p->timeout_s - run.wall_s;
    if (!python_ok || remaining <= 0 || !figures_) {
      classify_bare(config_, run, classes_, "plot-" + theme + ".png", row);
      if (python_ok && remaining <= 0) set_failure(row, Outcome::timeout);
      if (python_ok && !figures_) set_failure(row, Outcome::runtime_unavailable);
      p->rows.push_back(std::move(row));
      return figure_step(p, i + 1);
    }
    row.exit_code = run.exit_code;
    set_measures(row, run.wall_s, run.cpu_s, run.max_rss_mb);
    std::string dir = run.dir;
    figures_->render(dir + "/plot-" + theme + ".json", dir + "/plot-" + theme + ".png", remaining,
                     [this, p, i, row, dir, theme](sandbox::FigureResult fr) mutable {
                       row.wall_s += fr.wall_s;
                       if (!drawn(p, fr, dir, theme, row)) return;
                       p->rows.push_back(std::move(row));
                       figure_step(p, i + 1);
                     });
  }

  // JavaScript: the snippet, written into a fresh dir, is drawn by the same renderer on the same
  // page without its rules (SnippetJob::bare: no Content-Security-Policy, no request routing), theme
  // after theme; the sandboxed sweep draws it on the locked page through runs::Renderer.
  void start_snippet(const SweepTask& task, const std::vector<std::string>& themes, double timeout_s,
                     std::function<void(FileOutcome)> done) {
    auto p = std::make_shared<Pending>();
    p->themes = themes;
    p->timeout_s = timeout_s;
    p->done = std::move(done);
    BareRun run;
    std::string tmpl = config_.sweep_tmp_root + "/plotq-sweep-XXXXXX";
    if (!::mkdtemp(tmpl.data())) {
      FileOutcome out;
      out.error = "bare run failed on this host: cannot make a temp dir";
      return p->done(std::move(out));
    }
    run.dir = tmpl;
    p->runs.push_back(run);
    const std::string snippet = run.dir + "/snippet" + std::string(snippet_extension(task.file.library));
    if (!write_new_snippet(snippet, task.source)) {
      cleanup(p->runs);
      FileOutcome out;
      out.error = "bare run failed on this host: cannot write the snippet";
      return p->done(std::move(out));
    }
    snippet_step(p, task.file.library, snippet, 0);
  }

  static bool write_new_snippet(const std::string& path, const std::string& text) {
    int fd = write_new_file(AT_FDCWD, path, text);
    return fd >= 0 && ::close(fd) == 0;
  }

  void snippet_step(std::shared_ptr<Pending> p, std::string library, std::string snippet, std::size_t i) {
    if (i == p->themes.size()) return complete(p);
    const std::string theme = p->themes[i];
    store::SweepResult row;
    row.theme = theme;
    if (!figures_ || !figures_->available(library)) {
      set_failure(row, Outcome::runtime_unavailable);
      p->rows.push_back(std::move(row));
      return snippet_step(p, std::move(library), std::move(snippet), i + 1);
    }
    const std::string dir = p->runs.front().dir, png_name = "plot-" + theme + ".png";
    figures_->render_snippet(
        snippet, dir + "/" + png_name, sandbox::SnippetJob{library, theme, true}, p->timeout_s,
        [this, p, i, row, dir, library, snippet, theme](sandbox::FigureResult fr) mutable {
          row.wall_s = fr.wall_s;
          if (!drawn(p, fr, dir, theme, row)) return;
          p->rows.push_back(std::move(row));
          snippet_step(p, std::move(library), std::move(snippet), i + 1);
        });
  }

  // One theme's answer from the FigureRenderer (a figure or a snippet) into its row, by the render
  // path's own table (figure_outcome), the PNG read back under its cap with the renderer's exact
  // canvas. False when the file ends here (the sweep stops, or the renderer failed on this host):
  // p->done has been called.
  bool drawn(const std::shared_ptr<Pending>& p, const sandbox::FigureResult& fr, const std::string& dir,
             const std::string& theme, store::SweepResult& row) {
    if (stop_ || (!fr.ok && outcome_row(figure_outcome(fr.code)).host)) {
      cleanup(p->runs);
      FileOutcome out;
      if (stop_) out.cancelled = true;
      else out.error = "the figure renderer failed on this host: " + fr.code;
      p->done(std::move(out));
      return false;
    }
    if (!fr.ok) {
      set_failure(row, figure_outcome(fr.code), fr.error_class);
      return true;
    }
    Outcome reason = Outcome::ok;
    auto png = read_output(dir, "plot-" + theme + ".png", config_.max_png_bytes, reason);
    if (!png) set_failure(row, reason);
    else classify_png(*png, row, true);
    if (png && row.outcome == store::SweepOutcome::render) p->pngs[theme] = std::move(*png);
    return true;
  }

  void complete(const std::shared_ptr<Pending>& p) {
    cleanup(p->runs);
    FileOutcome out;
    out.themes = std::move(p->rows);
    out.pngs = std::move(p->pngs);
    p->done(std::move(out));
  }

  boost::asio::io_context& io_;
  BareConfig config_;
  ClassVocabulary classes_;
  sandbox::FigureRenderer* figures_;
  Runtime runtime_;
  std::atomic<bool> stop_{false};
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::thread> threads_;
};

}  // namespace

std::unique_ptr<SweepBackend> make_bare_backend(boost::asio::io_context& io, BareConfig config,
                                                ClassVocabulary classes, sandbox::FigureRenderer* figures,
                                                Runtime runtime) {
  return std::make_unique<BareBackend>(io, std::move(config), std::move(classes), figures, std::move(runtime));
}

}  // namespace plotq::runs
