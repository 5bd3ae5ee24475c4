// The sweep driver: draws a list of files through a SweepBackend with up to `jobs` files in
// flight, and records each finished file (all its themes in one transaction) in the store. Runs
// on one io_context thread; the Db is used only there. stop() (Ctrl-C) launches nothing more and
// cancels what runs: cancelled files are not recorded, so `--resume` draws them again.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "runs/outcome.hpp"
#include "sweep/files.hpp"
#include "common/theme.hpp"
#include "store/db.hpp"
#include "store/sweeps.hpp"

namespace plotq::runs {

struct FileOutcome {
  bool cancelled = false;  // stopped before it finished: not recorded
  std::string error;       // the backend could not run it at all (server gone): the sweep stops
  std::vector<store::SweepResult> themes;  // outcome fields; path/sha256/library are filled in by the runner
  std::map<std::string, std::string> pngs;  // theme -> the PNG of a render (RunnerOptions::keep_images)
};

// One way of drawing a file: the render path in process, a plotqd over HTTP, or bare Python.
class SweepBackend {
 public:
  virtual ~SweepBackend() = default;
  // ok, or the reason every theme of such a file fails with before anything runs
  // (runtime_unavailable, invalid_library). Same answer in every mode for the same machine.
  virtual Outcome support(const std::string& library) = 0;
  // Draws every theme of the task; `done` runs once, on the io_context, never inside start().
  virtual void start(const SweepTask& task, const std::vector<std::string>& themes, double timeout_s,
                     std::function<void(FileOutcome)> done) = 0;
  // Stops every started file; their done() still comes (cancelled, or finished anyway).
  virtual void cancel_all() = 0;
};

struct SweepCounts {
  std::size_t total = 0;    // files in the sweep
  std::size_t skipped = 0;  // already recorded by an earlier session (resume)
  std::size_t done = 0;     // recorded in this session
  std::size_t renders = 0;  // rows (file x theme) of this session
  std::size_t fails = 0;
  double elapsed_s = 0;     // this session's wall time so far
};

// After each recorded file: the counts and the file's rows (path filled in).
using FileRecorded = std::function<void(const SweepCounts&, const std::vector<store::SweepResult>&)>;

struct RunnerOptions {
  std::vector<std::string> themes = {std::string(kThemes[0]), std::string(kThemes[1])};
  double timeout_s = 60;
  int jobs = 1;
  // Optional: true while the render path of such a file is still warming up (its zygote or
  // Chromium starting). The runner then draws the next file that is not held first, so that no
  // file waits for a warm-up while others could run; held files keep their order and run when
  // nothing else is left (the launcher starts what they need on demand).
  std::function<bool(const SweepFile&)> hold;
  // Optional: after a file is recorded, its renders' PNGs (theme -> bytes), for the report's
  // thumbnails (sweep/images.hpp). Not called for a file that could not be recorded.
  std::function<void(const std::string& rel_path, std::map<std::string, std::string> pngs)> keep_images;
};

class SweepRunner {
 public:
  SweepRunner(boost::asio::io_context& io, store::Db& db, std::int64_t sweep_id, SweepBackend& backend,
              RunnerOptions options, FileRecorded on_file = nullptr);
  // Draws `pending` (files not yet recorded) in order (but see RunnerOptions::hold); total/skipped
  // are for the counts only.
  // on_finished runs once on the io_context when every started file came back.
  void start(std::vector<SweepFile> pending, std::size_t total, std::size_t skipped,
             std::function<void()> on_finished);
  void stop();                        // no more launches; cancel the running files
  bool stopped() const;               // stop() was called (or an error stopped it)
  const std::string& error() const;   // why the sweep stopped by itself (store or backend error)
  const SweepCounts& counts() const;

 private:
  struct State;
  std::shared_ptr<State> s_;
};

}  // namespace plotq::runs
