// The retention prune (store/retention.hpp) on both engines (tests/store/engines.hpp: a real SQLite
// file and a PostgreSQL schema of its own): each family goes past its cutoff and not before,
// batches stay bounded, quota counters and the admin views keep every row inside their windows.
// The sweep thumbnails beside a store file are SQLite's alone (the last test).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/env.hpp"
#include "store/datasets.hpp"
#include "store/migrate.hpp"
#include "store/quotas.hpp"
#include "store/retention.hpp"
#include "store/sweep_images.hpp"
#include "tests/retention/fixture.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::retention_test;
using plotq::store::Cutoffs;
using plotq::store::Family;
using plotq::store::RetentionPolicy;
using plotq::store::Tally;
using plotq::store::test::int_of;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;
using plotq::store::test::TempDir;
namespace store = plotq::store;

namespace {

constexpr UnixSeconds kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z
constexpr UnixSeconds kDay = 86'400;

// For each family: one entity a second past its cutoff (goes) and one exactly at it (stays; the
// cutoff is "before"), plus the things no cutoff reaches (running turns, open active sessions).
void populate(Db& db, const Cutoffs& c) {
  run(db, "old-run", "u1", c.ledger - 1);
  run(db, "edge-run", "u1", c.ledger);
  run(db, "new-run", "u2", kNow - 60);

  session(db, "s-turns", "u1", c.turns - 10 * kDay, std::nullopt);
  turn(db, "t-old", "s-turns", "u1", c.turns - 100, c.turns - 1, 3);
  plot(db, "t-old", "light", c.turns - 1);
  plot(db, "t-old", "dark", c.turns - 1);
  turn(db, "t-edge", "s-turns", "u1", c.turns - 100, c.turns, 2);
  plot(db, "t-edge", "light", c.turns);
  turn(db, "t-running", "s-turns", "u1", c.turns - 5 * kDay, std::nullopt, 4);  // never ended: kept

  session(db, "s-idle", "u1", c.idle - 1, std::nullopt);          // no activity at all: closed
  session(db, "s-edge", "u1", c.idle, std::nullopt);              // created at the cutoff: stays open
  session(db, "s-active", "u2", c.idle - 50 * kDay, std::nullopt);  // old, a dataset version today
  dataset(db, "s-active", 2, kNow - 3600);

  session(db, "s-closed-old", "u2", c.datasets - 9 * kDay, c.datasets - 1);
  dataset(db, "s-closed-old", 3, c.datasets - 9 * kDay);
  session(db, "s-closed-edge", "u2", c.datasets - 9 * kDay, c.datasets);
  dataset(db, "s-closed-edge", 2, c.datasets - 9 * kDay);

  answer(db, "a-old", c.idempotency - 1);
  answer(db, "a-edge", c.idempotency);

  sweep(db, "sw-old", c.sweeps - 1, 3);
  sweep(db, "sw-edge", c.sweeps, 2);
}

// Rows whose parent row is gone. SQLite checks its foreign keys per statement and can be made to
// skip them, so the prune's order is checked here; PostgreSQL never lets such a row exist.
std::int64_t dangling(Db& db) {
  if (db.engine() != store::Engine::sqlite) return 0;
  return int_of(db, "SELECT count(*) FROM pragma_foreign_key_check");
}

const Tally kExpected{{"runs", 1},          {"turn_events", 3}, {"turn_plots", 2}, {"sessions", 1},
                      {"dataset_versions", 3}, {"datasets", 1},   {"idempotency", 1}, {"sweep_results", 3},
                      {"sweeps", 1}};

}  // namespace

TEST_CASE("retention: cutoffs are now less each setting", "[retention]") {
  RetentionPolicy p;
  p.ledger_days = 3;
  p.idempotency_hours = 5;
  Cutoffs c = store::cutoffs_at(p, kNow);
  CHECK(c.ledger == kNow - 3 * kDay);
  CHECK(c.turns == kNow - 14 * kDay);
  CHECK(c.idle == kNow - 30 * kDay);
  CHECK(c.datasets == kNow - 30 * kDay);
  CHECK(c.idempotency == kNow - 5 * 3600);
  CHECK(c.sweeps == kNow - 180 * kDay);
  CHECK(c.of(Family::sweeps) == c.sweeps);
}

TEST_CASE("retention: a ledger kept less than 2 days is refused (the views read the last day)", "[retention]") {
  ::setenv("PLOTQ_RETAIN_LEDGER_DAYS", "1", 1);
  CHECK_THROWS_AS(store::retention_from_env(), plotq::ConfigError);
  ::setenv("PLOTQ_RETAIN_LEDGER_DAYS", "2", 1);
  CHECK(store::retention_from_env().ledger_days == 2);
  ::unsetenv("PLOTQ_RETAIN_LEDGER_DAYS");
}

TEMPLATE_TEST_CASE("retention: every family goes past its cutoff and not before", "[retention][engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  Cutoffs c = store::cutoffs_at(RetentionPolicy{}, kNow);
  populate(*db, c);

  CHECK(store::pending(*db, c) == kExpected);
  CHECK(store::prune_all(*db, c, 500, kNow) == kExpected);
  CHECK(store::pending(*db, c).empty());
  CHECK(store::prune_all(*db, c, 500, kNow).empty());  // a second prune finds nothing

  CHECK(joined(*db, "SELECT job_id FROM runs ORDER BY job_id") == "edge-run,new-run");
  // The ended turn lost its events and plots; its row stays (the ledger names turns) and is marked.
  CHECK(rows(*db, "turns") == 3);
  CHECK(rows(*db, "turn_events", "turn_id = 't-old'") == 0);
  CHECK(rows(*db, "turn_plots", "turn_id = 't-old'") == 0);
  CHECK(rows(*db, "turns", "events_pruned_at IS NOT NULL") == 1);
  CHECK(rows(*db, "turn_events", "turn_id = 't-edge'") == 2);
  CHECK(rows(*db, "turn_plots", "turn_id = 't-edge'") == 1);
  CHECK(rows(*db, "turn_events", "turn_id = 't-running'") == 4);
  // Idle: closed with the schema's reason, at now; the others stay open.
  CHECK(joined(*db, "SELECT close_reason || ' ' || closed_at FROM sessions WHERE id = 's-idle'") ==
        "idle " + iso_utc(kNow));
  CHECK(rows(*db, "sessions", "closed_at IS NULL") == 3);
  // Datasets: only the session closed before the cutoff lost its versions.
  CHECK(rows(*db, "dataset_versions", "session_id = 's-closed-old'") == 0);
  CHECK(rows(*db, "datasets", "session_id = 's-closed-old'") == 0);
  CHECK(rows(*db, "dataset_versions", "session_id = 's-closed-edge'") == 2);
  CHECK(rows(*db, "dataset_versions", "session_id = 's-active'") == 2);
  CHECK(rows(*db, "sessions", "id = 's-closed-old'") == 1);  // the session row stays
  CHECK(joined(*db, "SELECT job_id FROM idempotency") == "a-edge");
  CHECK(joined(*db, "SELECT label FROM sweeps") == "sw-edge");
  CHECK(rows(*db, "sweep_results") == 2);
  CHECK(dangling(*db) == 0);

  // A day later the edge rows are past their cutoffs too (the idle-closed session's dataset waits
  // for the datasets cutoff from its close).
  Cutoffs later = store::cutoffs_at(RetentionPolicy{}, kNow + kDay);
  Tally next = store::prune_all(*db, later, 500, kNow + kDay);
  CHECK(next.at("runs") == 1);
  CHECK(next.at("turn_events") == 2);
  CHECK(next.at("dataset_versions") == 2);
  CHECK(next.at("idempotency") == 1);
  CHECK(next.at("sweeps") == 1);
  CHECK(next.at("sessions") == 1);  // s-edge is idle now
}

TEMPLATE_TEST_CASE("retention: each step writes at most a batch - and a batch ending mid-entity leaves it whole", "[retention][engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  Cutoffs c = store::cutoffs_at(RetentionPolicy{}, kNow);
  db->exec("BEGIN");
  for (int i = 0; i < 1'050; ++i) run(*db, "r" + std::to_string(i), "u", c.ledger - 1 - i);
  session(*db, "s", "u", c.datasets - 9 * kDay, c.datasets - 1);
  turn(*db, "long", "s", "u", c.turns - 9, c.turns - 1, 250);
  dataset(*db, "s", 230, c.datasets - 9 * kDay);
  sweep(*db, "big", c.sweeps - 1, 240);
  db->exec("COMMIT");

  constexpr int kBatch = 100;
  for (Family f : {Family::ledger, Family::turns, Family::datasets, Family::sweeps}) {
    std::int64_t before = store::total(store::pending(*db, c));
    int steps = 0;
    std::int64_t done = 0;
    for (;;) {
      auto r = store::prune_step(*db, f, c, kBatch, kNow);
      ++steps;
      // Rows deleted per step: a batch at most (a turn's 2 plots and one mark ride on its last step).
      CHECK(store::total(r.rows) <= kBatch + 2);
      done += store::total(r.rows);
      // A version's parent is older: what is left of a half-pruned dataset still holds together.
      CHECK(dangling(*db) == 0);
      if (!r.more) break;
      REQUIRE(steps < 100);
    }
    CAPTURE(store::to_string(f));
    CHECK(steps >= 3);
    CHECK(before - store::total(store::pending(*db, c)) == done);
  }
  CHECK(rows(*db, "runs") == 0);
  CHECK(rows(*db, "turn_events") == 0);
  CHECK(rows(*db, "dataset_versions") == 0);
  CHECK(rows(*db, "sweep_results") == 0);
  CHECK(rows(*db, "turns", "events_pruned_at IS NOT NULL") == 1);
  CHECK(rows(*db, "sessions", "data_pruned_at IS NOT NULL") == 1);
}

namespace {

// Every row of a view as one line, in the view's order.
std::vector<std::string> view(Db& db, const std::string& name) {
  store::Stmt q(db, "SELECT * FROM " + name);
  std::vector<std::string> out;
  while (q.executeStep()) {
    std::string line;
    for (int i = 0; i < q.columnCount(); ++i) line += (q.getColumn(i).isNull() ? "NULL" : q.getColumn(i).getString()) + "|";
    out.push_back(line);
  }
  return out;
}

std::vector<std::string> without(std::vector<std::string> rows, const std::string& needle) {
  std::erase_if(rows, [&](const std::string& r) { return r.find(needle) != std::string::npos; });
  return rows;
}

}  // namespace

TEMPLATE_TEST_CASE("retention: quota counters and the admin views keep every row inside their windows", "[retention][engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  // The views read the real clock ('now'): the rows are placed around it, the prune runs at the
  // shortest retention each setting allows.
  const UnixSeconds now = store::now_unix();
  RetentionPolicy shortest;
  shortest.ledger_days = shortest.turn_events_days = shortest.session_idle_days = 2;
  shortest.datasets_days = shortest.sweeps_days = 1;
  shortest.idempotency_hours = 1;
  Cutoffs c = store::cutoffs_at(shortest, now);

  const std::string today = store::utc_day(now), yesterday = store::utc_day(now - kDay);
  for (const char* who : {"alice", "bob"}) {
    user(*db, who, now - 40 * kDay);
    for (const auto& day : {today, yesterday, store::utc_day(now - 30 * kDay)})
      exec(*db, std::string("INSERT INTO quota_days VALUES ('") + who + "', 'messages', '" + day + "', 7), ('" + who +
                    "', 'data_runs', '" + day + "', 3)");
    exec(*db, std::string("INSERT INTO quota_minutes VALUES ('") + who + "', 'messages', '" + store::utc_minute(now) +
                  "', 2)");
    exec(*db, std::string("INSERT INTO strikes(user_id, kind, at) VALUES ('") + who + "', 'attack', " + t(now - 10) + ")");
  }
  exec(*db, "INSERT INTO quota_limits VALUES ('messages_per_day', 50, " + t(now) + ")");
  // Ledger: rows of the last day (the views' window) and of long ago.
  for (int i = 0; i < 20; ++i) run(*db, "recent-" + std::to_string(i), i % 2 ? "alice" : "bob", now - i * 3000);
  for (int i = 0; i < 30; ++i) run(*db, "old-" + std::to_string(i), "alice", now - 5 * kDay - i * 60);
  // Turns: one ended an hour ago with plots (v_turn_plots_recent), one running (v_turns_active),
  // one ended long ago.
  session(*db, "s-live", "alice", now - kDay);
  turn(*db, "t-recent", "s-live", "alice", now - 3700, now - 3600, 5);
  plot(*db, "t-recent", "light", now - 3600);
  turn(*db, "t-running", "s-live", "alice", now - 60, std::nullopt, 2);
  session(*db, "s-old", "bob", now - 20 * kDay, now - 10 * kDay);
  turn(*db, "t-old", "s-old", "bob", now - 20 * kDay, now - 19 * kDay, 6);
  plot(*db, "t-old", "dark", now - 19 * kDay);
  dataset(*db, "s-live", 2, now - 600);
  dataset(*db, "s-old", 4, now - 20 * kDay);
  session(*db, "s-idle", "bob", now - 9 * kDay);
  sweep(*db, "sw-new", now - 3600, 2);
  sweep(*db, "sw-old", now - 9 * kDay, 2);

  const char* windowed[] = {"v_quota_today", "v_quota_days", "v_runs_recent", "v_ledger_by_user_today",
                            "v_turn_plots_recent", "v_turns_active"};
  std::map<std::string, std::vector<std::string>> before;
  for (const char* v : windowed) before[v] = view(*db, v);
  for (const char* v : {"v_sessions_open", "v_datasets", "v_sweeps", "v_sweep_reasons"}) before[v] = view(*db, v);
  auto usage_before = store::quotas::usage(*db, today, now);
  REQUIRE(before["v_runs_recent"].size() == 20);
  REQUIRE(before["v_turn_plots_recent"].size() == 1);
  REQUIRE(usage_before.size() == 2);

  Tally pruned = store::prune_all(*db, c, 7, now);
  CHECK(pruned.at("runs") == 30);
  CHECK(pruned.at("turn_events") == 6);
  CHECK(pruned.at("dataset_versions") == 4);
  CHECK(pruned.at("sessions") == 1);
  CHECK(pruned.at("sweeps") == 1);

  for (const char* v : windowed) {
    CAPTURE(v);
    CHECK(view(*db, v) == before[v]);
  }
  // Views without a window lose exactly the pruned entities' rows.
  CHECK(view(*db, "v_sessions_open") == without(before["v_sessions_open"], "s-idle|"));
  CHECK(view(*db, "v_datasets") == without(before["v_datasets"], "s-old|"));
  CHECK(view(*db, "v_sweeps") == without(before["v_sweeps"], "sw-old|"));
  CHECK(view(*db, "v_sweep_reasons") == without(before["v_sweep_reasons"], "sw-old|"));
  auto usage_after = store::quotas::usage(*db, today, now);
  REQUIRE(usage_after.size() == usage_before.size());
  for (std::size_t i = 0; i < usage_after.size(); ++i) {
    CHECK(usage_after[i].messages == usage_before[i].messages);
    CHECK(usage_after[i].messages_this_minute == usage_before[i].messages_this_minute);
    CHECK(usage_after[i].data_runs == usage_before[i].data_runs);
    CHECK(usage_after[i].strikes == usage_before[i].strikes);
  }
  // A daily quota is booked against quota_days, which the prune never touches.
  CHECK(store::quotas::counts(*db, "alice", store::Counter::messages, now).day == 7);
}

TEMPLATE_TEST_CASE("retention: a paste into a closed session keeps its dataset until the paste is old too", "[retention][engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  Cutoffs c = store::cutoffs_at(RetentionPolicy{}, kNow);
  session(*db, "s", "u", c.datasets - 9 * kDay, c.datasets - 1);
  dataset(*db, "s", 2, c.datasets - 9 * kDay);
  session(*db, "s-pasted", "u", c.datasets - 9 * kDay, c.datasets - 1);
  dataset(*db, "s-pasted", 1, c.datasets - 9 * kDay);
  store::NewDatasetVersion paste{"s-pasted", store::DatasetSource::paste, "a\n2\n", std::nullopt, 1, 1, 1};
  store::datasets::add_next_version(*db, paste, kNow - 3600);  // a closed session can still paste

  CHECK(store::prune_all(*db, c, 100, kNow) == Tally{{"dataset_versions", 2}, {"datasets", 1}});
  CHECK(rows(*db, "dataset_versions", "session_id = 's-pasted'") == 2);
  // Pasted into again after its dataset went: the new version is the prune's again, once old.
  paste.session_id = "s";
  paste.parent_version.reset();
  store::datasets::add_next_version(*db, paste, kNow);
  CHECK(rows(*db, "sessions", "id = 's' AND data_pruned_at IS NULL") == 1);
  CHECK(store::pending(*db, c).empty());
  Cutoffs later = store::cutoffs_at(RetentionPolicy{}, kNow + 31 * kDay);
  CHECK(store::prune_all(*db, later, 100, kNow + 31 * kDay) == Tally{{"dataset_versions", 3}, {"datasets", 2}});
}

// SQLite only: the thumbnails live beside the store's file (store/sweep_images.hpp); a PostgreSQL
// store has no file to put them beside.
TEST_CASE("retention: a pruned sweep's thumbnails go with it - a kept one's stay and a directory no sweep has goes", "[retention]") {
  namespace fs = std::filesystem;
  TempDir dir;
  auto db = store::test::migrated(dir.file("plotq.db"));
  Cutoffs c = store::cutoffs_at(RetentionPolicy{}, kNow);
  sweep(*db, "sw-old", c.sweeps - 1, 2);
  sweep(*db, "sw-edge", c.sweeps, 2);
  auto id_of = [&](const char* label) {
    return db->sql().execAndGet(std::string("SELECT id FROM sweeps WHERE label = '") + label + "'").getInt64();
  };
  const std::int64_t old_id = id_of("sw-old"), edge_id = id_of("sw-edge");
  auto thumb = [&](std::int64_t id) {
    fs::create_directories(store::sweep_images_dir(db->path(), id));
    std::ofstream(store::sweep_images_dir(db->path(), id) + "/0123456789abcdef-light.png") << "png";
  };
  thumb(old_id);
  thumb(edge_id);
  thumb(edge_id + 100);  // a crash between a sweep's rows and its files: no row names it
  // A link in the root is removed as a link: what it points at stays.
  fs::create_directories(dir.file("elsewhere"));
  std::ofstream(dir.file("elsewhere/keep.txt")) << "keep";
  fs::create_directory_symlink(dir.file("elsewhere"), store::sweep_images_root(db->path()) + "/999");
  const std::string old_dir = store::sweep_images_dir(db->path(), old_id);

  CHECK(store::pending(*db, c).at("sweeps") == 1);
  CHECK(fs::exists(old_dir));  // a dry run touches no file
  CHECK(store::prune_all(*db, c, 500, kNow).at("sweeps") == 1);
  CHECK_FALSE(fs::exists(old_dir));
  CHECK(fs::exists(store::sweep_images_dir(db->path(), edge_id) + "/0123456789abcdef-light.png"));
  CHECK_FALSE(fs::exists(store::sweep_images_dir(db->path(), edge_id + 100)));
  CHECK_FALSE(fs::exists(fs::symlink_status(store::sweep_images_root(db->path()) + "/999")));
  CHECK(fs::exists(dir.file("elsewhere/keep.txt")));
  // Nothing left to prune: the kept sweep's directory survives every later pass.
  CHECK(store::prune_all(*db, c, 500, kNow).empty());
  CHECK(store::remove_orphan_sweep_images(*db) == 0);
  CHECK(fs::exists(store::sweep_images_dir(db->path(), edge_id)));
}
