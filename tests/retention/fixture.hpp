// Rows of every retention family at chosen times, written with plain SQL into a real store (the
// repositories stamp "now" or refuse back-dated writes; the prune only reads the columns set here).
// The same SQL on both engines (a PNG literal is each engine's own).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "store/db.hpp"
#include "store/sql.hpp"
#include "store/time.hpp"

namespace plotq::retention_test {

using store::Db;
using store::UnixSeconds;
using store::iso_utc;

inline void exec(Db& db, const std::string& sql) { db.exec(sql); }

inline std::string q(const std::string& s) { return "'" + s + "'"; }
inline std::string t(UnixSeconds at) { return q(iso_utc(at)); }

inline void user(Db& db, const std::string& id, UnixSeconds at) {
  exec(db, "INSERT INTO users(id, created_at) VALUES (" + q(id) + ", " + t(at) + ") ON CONFLICT DO NOTHING");
}

inline void session(Db& db, const std::string& id, const std::string& who, UnixSeconds created,
                    std::optional<UnixSeconds> closed = std::nullopt) {
  user(db, who, created);
  exec(db, "INSERT INTO sessions(id, user_id, created_at, closed_at, close_reason) VALUES (" + q(id) + ", " + q(who) +
               ", " + t(created) + ", " + (closed ? t(*closed) + ", 'user'" : std::string("NULL, NULL")) + ")");
}

// A turn with `events` events (created at `created`); done when `ended` is set.
inline void turn(Db& db, const std::string& id, const std::string& sess, const std::string& who, UnixSeconds created,
                 std::optional<UnixSeconds> ended, int events) {
  exec(db, "INSERT INTO turns(id, session_id, user_id, created_at, text_chars, status, outcome, ended_at) VALUES (" +
               q(id) + ", " + q(sess) + ", " + q(who) + ", " + t(created) + ", 5, " +
               (ended ? "'done', 'ok', " + t(*ended) : std::string("'running', NULL, NULL")) + ")");
  for (int i = 1; i <= events; ++i)
    exec(db, "INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES (" + q(id) + ", " +
                 std::to_string(i) + ", 'status', '{\"n\":" + std::to_string(i) + "}', " + t(created) + ")");
}

inline void plot(Db& db, const std::string& turn_id, const std::string& theme, UnixSeconds at) {
  exec(db, "INSERT INTO turn_plots(turn_id, theme, width, height, bytes, png, created_at) VALUES (" + q(turn_id) +
               ", " + q(theme) + ", 10, 10, 12, " +
               (db.engine() == store::Engine::sqlite ? "x'89504E470D0A1A0A00000000'"
                                                      : "'\\x89504E470D0A1A0A00000000'::bytea") +
               ", " + t(at) + ")");
}

inline void run(Db& db, const std::string& job, const std::string& who, UnixSeconds at) {
  user(db, who, at);
  exec(db, "INSERT INTO runs(job_id, kind, user_id, created_at, outcome, wall_s) VALUES (" + q(job) + ", 'data', " +
               q(who) + ", " + t(at) + ", 'ok', 0.5)");
}

// `versions` versions, each derived from the one before.
inline void dataset(Db& db, const std::string& sess, int versions, UnixSeconds at) {
  exec(db, "INSERT INTO datasets(session_id, created_at) VALUES (" + q(sess) + ", " + t(at) + ")");
  for (int v = 1; v <= versions; ++v)
    exec(db, "INSERT INTO dataset_versions(session_id, version, source, csv, parent_version, rows, cols, bytes, "
             "created_at) VALUES (" +
                 q(sess) + ", " + std::to_string(v) + ", 'paste', 'a\n1\n', " +
                 (v == 1 ? std::string("NULL") : std::to_string(v - 1)) + ", 1, 1, 4, " + t(at) + ")");
}

inline void answer(Db& db, const std::string& job, UnixSeconds finished) {
  exec(db, "INSERT INTO idempotency(job_id, kind, fingerprint, state, response, created_at, finished_at) VALUES (" +
               q(job) + ", 'data', '" + std::string(64, 'a') + "', 'done', '{}', " + t(finished) + ", " + t(finished) +
               ")");
}

inline void sweep(Db& db, const std::string& label, UnixSeconds updated, int files) {
  exec(db, "INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) "
           "VALUES (" +
               q(label) + ", 'bare', '/x', '*.py', 'light', 10, 1, 'test', " + t(updated) + ", " + t(updated) + ")");
  for (int i = 0; i < files; ++i)
    exec(db, "INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, wall_s, cpu_s, "
             "created_at) VALUES ((SELECT id FROM sweeps WHERE label = " +
                 q(label) + "), 'f" + std::to_string(i) + ".py', 'light', '" + std::string(64, 'b') +
                 "', 'matplotlib', 'fail', 'timeout', 1, 1, " + t(updated) + ")");
}

inline std::int64_t rows(Db& db, const std::string& table, const std::string& where = "TRUE") {
  store::Stmt st(db, "SELECT count(*) FROM " + table + " WHERE " + where);
  st.executeStep();
  return st.getColumn(0).getInt64();
}

// The first column of every row, joined with ',' (SQLite's group_concat, PostgreSQL's string_agg).
inline std::string joined(Db& db, const std::string& sql) {
  store::Stmt st(db, sql);
  std::string out;
  while (st.executeStep()) out += (out.empty() ? "" : ",") + st.getColumn(0).getString();
  return out;
}

// Rows around the real clock for the default settings (plotqd and plotq read the clock): what goes
// is in kLiveExpected, everything else stays.
inline void populate_live(Db& db, UnixSeconds now) {
  constexpr UnixSeconds d = 86'400;
  for (int i = 0; i < 5; ++i) run(db, "old-" + std::to_string(i), "alice", now - 100 * d - i);
  run(db, "new-0", "alice", now - 3600);
  run(db, "new-1", "bob", now - 60);
  session(db, "s-live", "alice", now - 25 * d);
  turn(db, "t-old", "s-live", "alice", now - 21 * d, now - 20 * d, 4);
  plot(db, "t-old", "light", now - 20 * d);
  turn(db, "t-new", "s-live", "alice", now - 3700, now - 3600, 2);
  plot(db, "t-new", "dark", now - 3600);
  session(db, "s-idle", "bob", now - 40 * d);
  session(db, "s-closed", "bob", now - 60 * d, now - 40 * d);
  dataset(db, "s-closed", 3, now - 50 * d);
  dataset(db, "s-live", 1, now - 3600);
  answer(db, "a-old-0", now - 2 * d);
  answer(db, "a-old-1", now - 3 * d);
  answer(db, "a-new", now - 60);
  sweep(db, "sw-old", now - 200 * d, 3);
  sweep(db, "sw-new", now - 3600, 2);
}
inline const std::map<std::string, std::int64_t> kLiveExpected{
    {"runs", 5},          {"turn_events", 4}, {"turn_plots", 1},   {"sessions", 1},      {"dataset_versions", 3},
    {"datasets", 1},      {"idempotency", 2}, {"sweep_results", 3}, {"sweeps", 1}};
inline const char* const kTables[] = {"runs", "turn_events", "turn_plots", "sessions", "dataset_versions",
                                      "datasets", "idempotency", "sweep_results", "sweeps"};

}  // namespace plotq::retention_test
