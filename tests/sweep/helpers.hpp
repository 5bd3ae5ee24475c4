// Shared helpers for the sweep tests: a temp dir, a migrated database in it, files, and rows.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "store/db.hpp"
#include "store/migrate.hpp"
#include "store/sweeps.hpp"
#include "tests/support/scratch_dir.hpp"

namespace plotq::sweep_test {

struct TempDir : test::ScratchDir {
  TempDir() : ScratchDir("plotq-sweep-test") {}
};

inline std::unique_ptr<store::Db> migrated(const std::string& path) {
  auto db = store::Db::open(path);
  store::migrate(*db);
  return db;
}

// 2026-10-14T09:30:05Z
constexpr store::UnixSeconds kNow = 1791970205;

inline store::Sweep make_sweep(const std::string& label, const std::string& mode = "bare",
                               const std::string& themes = "light") {
  store::Sweep s;
  s.label = label;
  s.mode = mode;
  s.root = "/catalogue";
  s.glob = "plots/*/implementations/python/*.py";
  s.themes = themes;
  s.timeout_s = 60;
  s.jobs = 1;
  s.plotq_version = "test";
  return s;
}

inline store::SweepResult render_row(const std::string& path, const std::string& theme = "light",
                                     char hash = 'a') {
  store::SweepResult r;
  r.path = path;
  r.theme = theme;
  r.sha256 = std::string(64, hash);
  r.library = "matplotlib";
  r.outcome = store::SweepOutcome::render;
  r.reason = "ok";
  r.exit_code = 0;
  r.width = 3200;
  r.height = 1800;
  r.png_bytes = 12345;
  r.wall_s = 1.5;
  r.cpu_s = 1.2;
  r.max_rss_mb = 100;
  return r;
}

inline store::SweepResult fail_row(const std::string& path, const std::string& reason,
                                   std::optional<std::string> cls = std::nullopt,
                                   const std::string& theme = "light", char hash = 'a') {
  store::SweepResult r = render_row(path, theme, hash);
  r.outcome = store::SweepOutcome::fail;
  r.reason = reason;
  r.error_class = cls;
  r.png_bytes.reset();
  r.exit_code = 1;
  return r;
}

}  // namespace plotq::sweep_test
