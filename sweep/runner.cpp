#include "sweep/runner.hpp"

#include <algorithm>
#include <chrono>

#include <boost/asio/post.hpp>

#include "sweep/outcome.hpp"
#include "store/error.hpp"
#include "store/time.hpp"

namespace plotq::runs {

struct SweepRunner::State : std::enable_shared_from_this<SweepRunner::State> {
  boost::asio::io_context& io;
  store::Db& db;
  std::int64_t sweep_id;
  SweepBackend& backend;
  RunnerOptions options;
  FileRecorded on_file;
  std::vector<SweepFile> pending;
  std::size_t next = 0;
  std::size_t in_flight = 0;
  bool stopped = false;
  bool finished = false;
  std::string error;
  SweepCounts counts;
  std::chrono::steady_clock::time_point started;
  std::function<void()> on_finished;

  State(boost::asio::io_context& i, store::Db& d, std::int64_t id, SweepBackend& b, RunnerOptions o, FileRecorded f)
      : io(i), db(d), sweep_id(id), backend(b), options(std::move(o)), on_file(std::move(f)) {}

  void update_elapsed() {
    counts.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }

  void fail(std::string why) {
    if (error.empty()) error = std::move(why);
    stop();
  }

  void stop() {
    if (stopped) return;
    stopped = true;
    if (in_flight > 0) backend.cancel_all();
  }

  // Records one file: every theme, in the order asked, with the task's identity.
  void record(const SweepTask& task, std::vector<store::SweepResult> rows,
              std::map<std::string, std::string> pngs = {}) {
    for (auto& r : rows) {
      r.path = task.file.rel_path;
      r.sha256 = task.sha256;
      r.library = task.file.library;
    }
    try {
      store::sweeps::record_file(db, sweep_id, rows, store::now_unix());
    } catch (const store::StoreError& e) {
      fail("store " + e.code() + ": " + e.what());
      return;
    }
    if (options.keep_images && !pngs.empty()) options.keep_images(task.file.rel_path, std::move(pngs));
    ++counts.done;
    for (const auto& r : rows) (r.outcome == store::SweepOutcome::render ? counts.renders : counts.fails) += 1;
    update_elapsed();
    if (on_file) on_file(counts, rows);
  }

  // Every theme fails with the same reason, nothing ran.
  // reason: the library's support (an Outcome's name) or the file's own refusal (sweep/files.hpp).
  void record_refused(const SweepTask& task, std::string_view reason) {
    std::vector<store::SweepResult> rows;
    for (const auto& theme : options.themes) {
      store::SweepResult r;
      r.theme = theme;
      set_failure_named(r, reason);
      rows.push_back(std::move(r));
    }
    record(task, std::move(rows));
  }

  void file_done(const SweepTask& task, FileOutcome out) {
    --in_flight;
    if (!out.error.empty()) {
      fail(task.file.rel_path + ": " + out.error);
    } else if (!out.cancelled) {
      bool complete = out.themes.size() == options.themes.size();
      for (std::size_t i = 0; complete && i < out.themes.size(); ++i)
        complete = out.themes[i].theme == options.themes[i];
      if (!complete) fail(task.file.rel_path + ": the backend answered other themes than asked");
      else record(task, std::move(out.themes), std::move(out.pngs));
    }
    launch();
  }

  // Moves the first file that is not held to position `next` (the others keep their order).
  void skip_held() {
    if (!options.hold || !options.hold(pending[next])) return;
    for (std::size_t j = next + 1; j < pending.size(); ++j) {
      if (!options.hold(pending[j])) {
        std::rotate(pending.begin() + static_cast<std::ptrdiff_t>(next), pending.begin() + static_cast<std::ptrdiff_t>(j),
                    pending.begin() + static_cast<std::ptrdiff_t>(j) + 1);
        return;
      }
    }
  }

  void launch() {
    while (!stopped && in_flight < static_cast<std::size_t>(options.jobs) && next < pending.size()) {
      skip_held();
      SweepTask task = load_sweep_task(pending[next], next);
      ++next;
      if (task.refused) {
        record_refused(task, *task.refused);
        continue;
      }
      Outcome support = backend.support(task.file.library);
      if (support != Outcome::ok) {
        record_refused(task, to_string(support));
        continue;
      }
      ++in_flight;
      auto self = shared_from_this();
      SweepTask copy = task;
      backend.start(task, options.themes, options.timeout_s,
                    [self, copy = std::move(copy)](FileOutcome out) { self->file_done(copy, std::move(out)); });
    }
    maybe_finish();
  }

  void maybe_finish() {
    if (finished || in_flight > 0) return;
    if (!stopped && next < pending.size()) return;
    finished = true;
    update_elapsed();
    auto self = shared_from_this();
    boost::asio::post(io, [self] {
      if (self->on_finished) self->on_finished();
    });
  }
};

SweepRunner::SweepRunner(boost::asio::io_context& io, store::Db& db, std::int64_t sweep_id, SweepBackend& backend,
                         RunnerOptions options, FileRecorded on_file)
    : s_(std::make_shared<State>(io, db, sweep_id, backend, std::move(options), std::move(on_file))) {
  if (s_->options.jobs < 1) s_->options.jobs = 1;
}

void SweepRunner::start(std::vector<SweepFile> pending, std::size_t total, std::size_t skipped,
                        std::function<void()> on_finished) {
  s_->pending = std::move(pending);
  s_->counts.total = total;
  s_->counts.skipped = skipped;
  s_->on_finished = std::move(on_finished);
  s_->started = std::chrono::steady_clock::now();
  s_->launch();
}

void SweepRunner::stop() {
  s_->stop();
  s_->maybe_finish();
}

bool SweepRunner::stopped() const { return s_->stopped; }
const std::string& SweepRunner::error() const { return s_->error; }
const SweepCounts& SweepRunner::counts() const { return s_->counts; }

}  // namespace plotq::runs
