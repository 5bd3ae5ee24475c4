// sweeps, sweep_results: catalogue sweeps (migrations/0002_sweeps.sql). A Sweep is one labelled
// replay of a folder of plot files; a SweepResult is one file drawn in one theme.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"
#include "store/types.hpp"

namespace plotq::store {

struct Sweep {
  std::int64_t id = 0;  // assigned by create
  std::string label;    // 1..64 of [A-Za-z0-9._-]
  std::string mode;     // sandbox | bare
  std::optional<std::string> server_url;  // sandbox mode against a running plotqd
  std::string root;                       // absolute directory
  std::string glob;
  std::optional<std::string> libraries;  // comma list filter; nullopt = all
  std::string themes;                    // "light", "dark", "light,dark" or "dark,light"
  double timeout_s = 60;
  int jobs = 1;
  std::string state = "running";  // running | interrupted | done
  int files_total = 0;
  double elapsed_s = 0;
  std::optional<std::int64_t> pid;
  std::string plotq_version;
  // The runtime the files ran on (runs/runtime.hpp: 12 hex), nullopt when unknown. A resume
  // must run on the same one.
  std::optional<std::string> runtime_id;
  UnixSeconds created_at = 0;
  UnixSeconds updated_at = 0;
  std::optional<UnixSeconds> finished_at;  // set exactly when done
};

struct SweepResult {
  std::string path;  // relative to the sweep's root
  std::string theme;
  std::string sha256;
  std::string library;
  SweepOutcome outcome = SweepOutcome::render;
  std::string reason = "ok";       // ok, or the fixed reason (plot_error, no_output, canvas_size, ...)
  std::optional<std::string> error_class;  // set exactly when reason == plot_error
  std::string reason_class;  // read back: error_class for plot_error, else reason (ignored on write)
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<int> width, height;
  std::optional<std::int64_t> png_bytes;  // set exactly when outcome == render
  std::optional<std::string> canvas;      // renders: "exact" (3200x1800 or 2400x2400 within 16 px) or "off"
  std::optional<std::string> detail;      // plotq's own short note, <= 200 chars
  double wall_s = 0;
  double cpu_s = 0;
  std::optional<double> max_rss_mb;
  UnixSeconds created_at = 0;  // set by record_file
};

namespace sweeps {

// Inserts the sweep (state running, elapsed 0); returns its id. A taken label: "constraint".
std::int64_t create(Db& db, const Sweep& sweep, UnixSeconds now);
std::optional<Sweep> find(Db& db, const std::string& label);
std::vector<Sweep> list(Db& db);  // newest first

// A (re)started session: state running, finished_at cleared, files_total/jobs/pid as given.
// "not_found" for an unknown id.
void begin_session(Db& db, std::int64_t sweep_id, int files_total, int jobs, std::int64_t pid,
                   UnixSeconds now);
// Ends a session: state interrupted or done (finished_at = now when done), elapsed_s += add.
// "invalid" for another state, "not_found" for an unknown id.
void end_session(Db& db, std::int64_t sweep_id, const std::string& state, double add_elapsed_s,
                 UnixSeconds now);

// Records every theme of one file in one transaction (all or nothing). A row that breaks the
// schema ("constraint") or a file recorded twice ("constraint") leaves nothing behind.
void record_file(Db& db, std::int64_t sweep_id, const std::vector<SweepResult>& themes, UnixSeconds now);

// Every row of a sweep, ordered by path then theme.
std::vector<SweepResult> results(Db& db, std::int64_t sweep_id);
// Paths that have a row (a file is recorded whole, so these are the finished files).
std::vector<std::string> finished_paths(Db& db, std::int64_t sweep_id);

// Removes a sweep and its rows; false when no such label.
bool remove(Db& db, const std::string& label);

bool valid_label(const std::string& label);

}  // namespace sweeps
}  // namespace plotq::store
