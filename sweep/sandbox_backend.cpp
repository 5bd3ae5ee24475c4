// Sandbox mode's backend: each file is one RenderRequest through runs::Renderer, the in-process
// path of POST /render (plot or figure mode by the library table), and each theme
// drawn is a ledger row of kind sweep.
#include <map>

#include "common/log.hpp"
#include "runs/outcome.hpp"
#include "runs/ledger_row.hpp"
#include "runs/render_job.hpp"
#include "sweep/backends.hpp"
#include "store/ledger.hpp"

namespace plotq::runs {
namespace {

class SandboxBackend : public SweepBackend {
 public:
  SandboxBackend(Renderer& renderer, store::Db* ledger, std::string prefix)
      : renderer_(renderer), ledger_(ledger), prefix_(std::move(prefix)) {}

  Outcome support(const std::string& library) override { return renderer_.support(library); }

  void start(const SweepTask& task, const std::vector<std::string>& themes, double timeout_s,
             std::function<void(FileOutcome)> done) override {
    std::uint64_t id = next_id_++;
    RenderRequest req;
    req.job_id = prefix_ + "-" + std::to_string(id);
    req.source = task.source;
    req.library = task.file.library;
    req.themes = themes;
    req.timeout_s = timeout_s;
    // A snippet's page has no files: a data.csv beside a JavaScript file is not handed to it.
    if (render_mode(req.library) != RenderMode::snippet) req.data_csv = task.data_csv;
    std::string job_id = req.job_id, library = req.library;
    handles_[id] = renderer_.render(std::move(req), [this, id, themes, job_id, library, done = std::move(done)](RenderResult r) {
      handles_.erase(id);
      FileOutcome out;
      for (const auto& theme : themes) {
        store::SweepResult row;
        row.theme = theme;
        auto it = r.outputs.find(theme);
        if (it == r.outputs.end()) {
          set_failure(row, Outcome::harness_error);
          out.themes.push_back(std::move(row));
          continue;
        }
        ThemeRun& run = it->second;
        if (ledger_) book(job_id, library, run);
        if (outcome_row(run.outcome).host && out.error.empty())
          out.error = "the render path failed on this host in theme " + theme + ": " + std::string(to_string(run.outcome)) +
                      (run.message.empty() ? "" : " (" + run.message + ")");
        apply_theme_run(run, row);
        row.theme = theme;
        if (row.outcome == store::SweepOutcome::render && run.png) out.pngs[theme] = std::move(*run.png);
        out.themes.push_back(std::move(row));
      }
      if (cancelling_) {
        out.cancelled = true;  // our own Ctrl-C: not an error, not recorded
        out.error.clear();
      }
      done(std::move(out));
    });
  }

  void cancel_all() override {
    cancelling_ = true;
    auto handles = handles_;  // cancel() may complete a render and erase it
    for (auto& [id, h] : handles) h.cancel();
  }

 private:
  void book(const std::string& job_id, const std::string& library, const ThemeRun& run) {
    try {
      RunWho who{job_id, "sweep", std::nullopt, std::nullopt, runtime_id(renderer_.runtime_for(library)), {}};
      store::ledger::insert(*ledger_, ledger_row(who, store::RunKind::sweep, run.job, run.outcome, 0, run.theme));
    } catch (const std::exception& e) {
      log_event("ledger_write_failed", {{"job_id", job_id}, {"error", typeid(e).name()}});
    }
  }

  Renderer& renderer_;
  store::Db* ledger_;
  std::string prefix_;
  bool cancelling_ = false;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, RenderHandle> handles_;
};

}  // namespace

std::unique_ptr<SweepBackend> make_sandbox_backend(Renderer& renderer, store::Db* ledger, std::string job_prefix) {
  return std::make_unique<SandboxBackend>(renderer, ledger, std::move(job_prefix));
}

}  // namespace plotq::runs
