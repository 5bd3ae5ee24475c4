// The migration runner on both engines (engines.hpp): order, checksums, edited and renamed files,
// newer schemas, gaps, a failing migration rolled back, health. Each engine runs its own list
// (known_migrations(engine): migrations/ and migrations/postgresql/). The tests of SQLite's own
// migration history (foreign_keys=off rebuilds, 0004, 0005) stay SQLite-only below.
#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <sstream>

#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include "common/sha256.hpp"
#include "store/migrate.hpp"
#include "store/sessions.hpp"
#include "store/turns.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using plotq::store::test::in_children;
using plotq::store::test::int_of;
using plotq::store::test::kNow;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;
using plotq::store::test::TempDir;

namespace {

std::string migration_error_code(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const MigrationError& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return "no error";
}

int count(Db& db, const std::string& sql) { return int(int_of(db, sql)); }

std::vector<Migration> with_extra(Engine e, std::vector<std::pair<std::string, std::string>> extra) {
  std::vector<Migration> list = known_migrations(e);
  for (auto& [name, sql] : extra) list.push_back(make_migration(name, sql));
  return list;
}
std::vector<Migration> with_extra(std::vector<std::pair<std::string, std::string>> extra) {
  return with_extra(Engine::sqlite, std::move(extra));
}

std::string name_at(int version, const std::string& suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d_%s", version, suffix.c_str());
  return buf;
}
std::string next_name(const std::string& suffix, Engine e = Engine::sqlite) {
  return name_at(known_schema_version(e) + 1, suffix);
}

// Each engine's folder of migration files.
std::string migrations_dir(Engine e) {
  return std::string(PLOTQ_SOURCE_DIR) + (e == Engine::sqlite ? "/migrations/" : "/migrations/postgresql/");
}

// schema_migrations as one text, to compare before and after.
std::string applied_rows(Db& db) {
  Stmt q(db, "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version");
  std::string out;
  while (q.executeStep())
    out += q.getColumn(0).getString() + q.getColumn(1).getString() + q.getColumn(2).getString() +
           q.getColumn(3).getString() + "|";
  return out;
}

bool view_exists(Db& db, const std::string& name) {
  if (db.engine() == Engine::sqlite)
    return count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name = '" + name + "'") == 1;
  return count(db, "SELECT count(*) FROM information_schema.views WHERE table_schema = current_schema() AND "
                   "table_name = '" + name + "'") == 1;
}

}  // namespace

TEMPLATE_TEST_CASE("migrate: the binary embeds each engine's migration files byte for byte", "[engines]", OnSqlite,
                   OnPostgres) {
  const Engine e = TestType::engine;
  const auto& list = known_migrations(e);
  REQUIRE(list.size() >= 1);
  CHECK(list[0].version == 1);
  CHECK(list[0].name == "0001_init");
  CHECK(known_schema_version(e) == int(list.size()));
  for (const auto& m : list) {
    std::ifstream f(migrations_dir(e) + m.name + ".sql", std::ios::binary);
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    CHECK(ss.str() == m.sql);
    CHECK(m.checksum == plotq::sha256_hex(ss.str()));
  }
}

TEMPLATE_TEST_CASE("migrate: a fresh database gets every migration, recorded with its checksum", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  CHECK(schema_version(*db) == 0);
  CHECK(migrate(*db) == known_schema_version(db->engine()));
  CHECK(schema_version(*db) == known_schema_version(db->engine()));
  Stmt q(*db, "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version");
  for (const auto& m : known_migrations(db->engine())) {
    REQUIRE(q.executeStep());
    CHECK(q.getColumn(0).getInt() == m.version);
    CHECK(q.getColumn(1).getString() == m.name);
    CHECK(q.getColumn(2).getString() == m.checksum);
    CHECK(parse_utc(q.getColumn(3).getString()).has_value());
  }
  CHECK_FALSE(q.executeStep());
  for (const char* table : {"users", "sessions", "turns", "turn_events", "runs", "datasets", "dataset_versions",
                            "quota_days", "quota_minutes", "quota_limits", "strikes", "idempotency"})
    CHECK(db->table_exists(table));
  for (const char* view : {"v_quota_today", "v_quota_days", "v_runs_recent", "v_ledger_by_user_today",
                           "v_sessions_open", "v_datasets", "v_turns_active"}) {
    INFO(view);
    CHECK(view_exists(*db, view));
    CHECK(count(*db, std::string("SELECT count(*) FROM ") + view) == 0);  // the view compiles and runs
  }
}

TEMPLATE_TEST_CASE("migrate: running again applies nothing and changes nothing", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  migrate(*db);
  std::string before = applied_rows(*db);
  CHECK(migrate(*db) == known_schema_version(db->engine()));
  auto again = st.open();
  CHECK(migrate(*again) == known_schema_version(db->engine()));
  CHECK(applied_rows(*again) == before);
}

TEMPLATE_TEST_CASE("migrate: an edited applied migration is refused with the file named", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  migrate(*db);
  // Simulate editing 0001_init.sql after it landed: the stored checksum no longer matches.
  db->exec("UPDATE schema_migrations SET checksum = '" + std::string(64, 'a') + "' WHERE version = 1");
  std::string msg;
  CHECK(migration_error_code([&] { migrate(*db); }, &msg) == "migration_edited");
  CHECK(msg.find("0001_init.sql") != std::string::npos);
  CHECK(msg.find("edited") != std::string::npos);
  CHECK(migration_error_code([&] { require_current_schema(*db); }) == "migration_edited");
  // A renamed file is an edit too.
  db->exec("UPDATE schema_migrations SET checksum = (SELECT '" + known_migrations(db->engine())[0].checksum +
           "'), name = '0001_start' WHERE version = 1");
  CHECK(migration_error_code([&] { migrate(*db); }) == "migration_edited");
}

TEMPLATE_TEST_CASE("migrate: a database newer than the binary is refused and left alone", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  migrate(*db);
  const Engine e = db->engine();
  int next = known_schema_version(e) + 1;
  db->exec("INSERT INTO schema_migrations VALUES (" + std::to_string(next) + ", '" + next_name("future", e) +
           "', '" + std::string(64, 'b') + "', '2030-01-01T00:00:00Z')");
  std::string msg;
  CHECK(migration_error_code([&] { migrate(*db); }, &msg) == "schema_newer");
  CHECK(msg.find("newer than this binary") != std::string::npos);
  CHECK(count(*db, "SELECT count(*) FROM schema_migrations") == next);
  Health h = check_health(*db);
  CHECK_FALSE(h.ok);
  CHECK(h.detail == "schema_newer");
  CHECK(h.schema_version == next);
}

TEMPLATE_TEST_CASE("migrate: a gap in the applied versions is refused as inconsistent", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  const Engine e = db->engine();
  const int n = known_schema_version(e);
  auto later = with_extra(e, {{name_at(n + 1, "a"), "CREATE TABLE gap_a (x BIGINT);"},
                              {name_at(n + 2, "b"), "CREATE TABLE gap_b (x BIGINT);"}});
  REQUIRE(apply_migrations(*db, later) == n + 2);
  db->exec("DELETE FROM schema_migrations WHERE version = " + std::to_string(n + 1));
  std::string msg;
  CHECK(migration_error_code([&] { apply_migrations(*db, later); }, &msg) == "schema_inconsistent");
  CHECK(msg.find("no row for version " + std::to_string(n + 1)) != std::string::npos);
  CHECK(migration_error_code([&] { verify_applied(*db, later); }) == "schema_inconsistent");
  CHECK(count(*db, "SELECT count(*) FROM schema_migrations") == n + 1);  // left alone
}

TEMPLATE_TEST_CASE("migrate: a later binary applies only its new migration, in its own transaction", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  migrate(*db);
  const Engine e = db->engine();
  // The same table in each engine's words (an integer key the engine numbers itself).
  const std::string notes = e == Engine::sqlite
                                ? "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL) STRICT;\n"
                                : "CREATE TABLE notes (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                                  "body TEXT NOT NULL);\n";
  auto later = with_extra(e, {{next_name("notes", e), notes + "INSERT INTO notes(body) VALUES ('hello');"}});
  CHECK(apply_migrations(*db, later) == known_schema_version(e) + 1);
  CHECK(count(*db, "SELECT count(*) FROM notes") == 1);
  // The current binary now sees a newer database.
  CHECK(migration_error_code([&] { migrate(*db); }) == "schema_newer");
}

TEMPLATE_TEST_CASE("migrate: a failing migration leaves nothing of itself behind", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  migrate(*db);
  const Engine e = db->engine();
  auto bad = with_extra(e, {{next_name("broken", e), "CREATE TABLE half (a INTEGER);\nINSERT INTO half VALUES (1);\n"
                                                     "INSERT INTO no_such_table VALUES (1);"}});
  std::string msg;
  CHECK(migration_error_code([&] { apply_migrations(*db, bad); }, &msg) == "migration_failed");
  CHECK(msg.find(next_name("broken", e) + ".sql") != std::string::npos);
  CHECK_FALSE(db->table_exists("half"));
  CHECK(schema_version(*db) == known_schema_version(e));
  CHECK_FALSE(db->in_transaction());  // the connection is usable again
  CHECK(migrate(*db) == known_schema_version(e));
}

// Nodes (or plotq and plotqd) migrating one fresh store at once: each migration is applied once,
// the others wait for the write lock and then find it applied.
TEMPLATE_TEST_CASE("migrate: several processes migrating one fresh store at once apply each migration once",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const std::string target = st.target();
  auto codes = in_children(4, [&](int) {
    Options o;
    o.busy_timeout_ms = 30000;
    o.lock_timeout_ms = 30000;
    auto db = Db::open(target, o);
    return migrate(*db) == known_schema_version(TestType::engine) ? 0 : 2;
  });
  const auto failed = std::count_if(codes.begin(), codes.end(), [](int rc) { return rc != 0; });
  CHECK(failed == 0);
  auto db = st.open();
  CHECK(count(*db, "SELECT count(*) FROM schema_migrations") == known_schema_version(TestType::engine));
  CHECK_NOTHROW(require_current_schema(*db));
}

// SQLite only: PRAGMA foreign_keys and the 12-step table rebuild are SQLite's (PostgreSQL alters a
// table in place, with its foreign keys on).
TEST_CASE("migrate: a migration marked foreign_keys=off can rebuild a table, checked before commit") {
  TempDir t;
  auto db = Db::open(t.file("p.db"));
  migrate(*db);
  db->sql().exec("INSERT INTO users(id, created_at) VALUES ('u', '2026-01-01T00:00:00Z');"
                 "INSERT INTO sessions(id, user_id, created_at) VALUES ('s', 'u', '2026-01-01T00:00:00Z')");
  // Rebuild users (the SQLite 12-step way: views that name the table are dropped and made again);
  // sessions keeps pointing at it.
  std::string rebuild =
      "-- plotq:foreign_keys=off\n"
      "DROP VIEW v_runs_recent;\n"
      "CREATE TABLE users_new (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, label TEXT, email TEXT) STRICT;\n"
      "INSERT INTO users_new(id, created_at, label) SELECT id, created_at, label FROM users;\n"
      "DROP TABLE users;\nALTER TABLE users_new RENAME TO users;\n"
      "CREATE VIEW v_runs_recent AS SELECT r.*, u.label FROM runs r JOIN users u ON u.id = r.user_id;\n";
  CHECK(apply_migrations(*db, with_extra({{next_name("rebuild"), rebuild}})) == known_schema_version() + 1);
  CHECK(count(*db, "SELECT count(*) FROM users WHERE id = 'u'") == 1);
  CHECK(db->sql().execAndGet("PRAGMA foreign_keys").getInt() == 1);  // back on

  // The same kind of migration that drops a referenced row is refused and rolled back.
  TempDir t2;
  auto db2 = Db::open(t2.file("p.db"));
  migrate(*db2);
  db2->sql().exec("INSERT INTO users(id, created_at) VALUES ('u', '2026-01-01T00:00:00Z');"
                  "INSERT INTO sessions(id, user_id, created_at) VALUES ('s', 'u', '2026-01-01T00:00:00Z')");
  std::string dangling = "-- plotq:foreign_keys=off\nDELETE FROM users;\n";
  CHECK(migration_error_code([&] { apply_migrations(*db2, with_extra({{next_name("drop"), dangling}})); }) ==
        "migration_failed");
  CHECK(count(*db2, "SELECT count(*) FROM users") == 1);
  CHECK(db2->sql().execAndGet("PRAGMA foreign_keys").getInt() == 1);
}

TEMPLATE_TEST_CASE("migrate: malformed migration lists are refused", "[engines]", OnSqlite, OnPostgres) {
  CHECK(migration_error_code([] { make_migration("1_init.sql", ""); }) == "migration_bad");
  CHECK(migration_error_code([] { make_migration("0001-init.sql", ""); }) == "migration_bad");
  StoreUnderTest<TestType> st;
  auto db = st.open();
  std::vector<Migration> gap = {make_migration("0001_a", "CREATE TABLE a(x BIGINT);"),
                                make_migration("0003_c", "CREATE TABLE c(x BIGINT);")};
  CHECK(migration_error_code([&] { apply_migrations(*db, gap); }) == "migration_bad");
  CHECK(schema_version(*db) == 0);
}

TEMPLATE_TEST_CASE("migrate: health says ok only at the binary's schema", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  Health h = check_health(*db);
  CHECK_FALSE(h.ok);
  CHECK(h.schema_version == 0);
  CHECK(h.detail == "schema_behind");
  CHECK(migration_error_code([&] { require_current_schema(*db); }) == "schema_behind");
  migrate(*db);
  h = check_health(*db);
  CHECK(h.ok);
  CHECK(h.schema_version == known_schema_version(db->engine()));
  CHECK(h.detail == "ok");
  CHECK_NOTHROW(require_current_schema(*db));
}

// SQLite only (this and 0005 below): SQLite's own migration history; PostgreSQL's 0001 starts at the
// schema these reach.
// 0004 rebuilds turn_events as a rowid table (a broadcast's rows are appended instead of landing on
// as many pages as there are waiting turns). A database at 0003 with events keeps every one of
// them, in order, with the same key, checks and foreign key, and the view that reads them.
TEST_CASE("migrate: 0004 turns turn_events into a rowid table and keeps every event, key and check") {
  TempDir t;
  auto db = Db::open(t.file("p.db"));
  std::vector<Migration> upto3(known_migrations().begin(), known_migrations().begin() + 3);
  REQUIRE(upto3.back().name == "0003_turn_plots");
  REQUIRE(apply_migrations(*db, upto3) == 3);
  auto table_sql = [&] {
    return db->sql().execAndGet("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'turn_events'").getString();
  };
  CHECK(table_sql().find("WITHOUT ROWID") != std::string::npos);

  sessions::create(*db, "s", "alice", kNow);
  for (const char* id : {"t2", "t1"}) {
    turns::create(*db, {id, "s", "alice", 1, TurnAction::none}, kNow);
    for (int i = 0; i < 3; ++i) turns::append_event(*db, id, "status", "{\"n\":" + std::to_string(i) + "}", kNow);
  }
  const std::string before =
      db->sql().execAndGet("SELECT group_concat(turn_id || seq || event || data || created_at, '|') FROM "
                           "(SELECT * FROM turn_events ORDER BY turn_id, seq)").getString();

  CHECK(migrate(*db) == known_schema_version());
  CHECK(table_sql().find("WITHOUT ROWID") == std::string::npos);
  CHECK(count(*db, "SELECT count(rowid) FROM turn_events") == 6);  // a rowid table now
  CHECK(db->sql().execAndGet("SELECT group_concat(turn_id || seq || event || data || created_at, '|') FROM "
                             "(SELECT * FROM turn_events ORDER BY turn_id, seq)").getString() == before);
  // The key, the checks and the foreign key hold as before.
  auto refused = [&](const std::string& values) {  // the constraint's message, "" when stored
    try {
      db->sql().exec("INSERT INTO turn_events VALUES (" + values + ")");
    } catch (const SQLite::Exception& e) {
      return e.getErrorCode() == SQLITE_CONSTRAINT ? std::string(e.what()) : "other: " + std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(refused("'t1', 3, 'status', '{}', '2026-11-29T00:00:00Z'"), Catch::Contains("UNIQUE constraint failed: turn_events.turn_id, turn_events.seq"));
  CHECK_THAT(refused("'nope', 1, 'status', '{}', '2026-11-29T00:00:00Z'"), Catch::Contains("FOREIGN KEY constraint failed"));
  CHECK_THAT(refused("'t1', 4, 'status', 'not json', '2026-11-29T00:00:00Z'"), Catch::Contains("json_valid(data)"));
  CHECK_THAT(refused("'t1', 4, 'Bad', '{}', '2026-11-29T00:00:00Z'"), Catch::Contains("CHECK constraint failed"));
  // Stores keep appending after the migrated rows, and a resume reads them in seq order.
  turns::append_event(*db, "t1", "done", "{}", kNow);
  auto evs = turns::events_after(*db, "t1", 1);
  REQUIRE(evs.size() == 3);
  CHECK(evs[0].seq == 2);
  CHECK(evs[2].seq == 4);
  CHECK(evs[2].event == "done");
  // The view reading it was made again, and deleting a turn still takes its events.
  CHECK(count(*db, "SELECT events FROM v_turns_active WHERE turn_id = 't1'") == 4);
  db->sql().exec("DELETE FROM turns WHERE id = 't2'");
  CHECK(count(*db, "SELECT count(*) FROM turn_events WHERE turn_id = 't2'") == 0);
}

// 0005 adds runs.runtime_id, sweeps.runtime_id and sweep_results.canvas. A database at 0004 keeps
// its rows: renders recorded before are exact (another size was a canvas_size failure then),
// failures have no canvas, older rows no runtime id; the views show the new columns.
TEST_CASE("migrate: 0005 records the runtime id and the canvas, and marks older renders exact") {
  TempDir t;
  auto db = Db::open(t.file("p.db"));
  std::vector<Migration> upto4(known_migrations().begin(), known_migrations().begin() + 4);
  REQUIRE(upto4.back().name == "0004_turn_events_rowid");
  REQUIRE(apply_migrations(*db, upto4) == 4);
  db->sql().exec(
      "INSERT INTO users(id, created_at) VALUES ('u', '2026-01-01T00:00:00Z');"
      "INSERT INTO runs(job_id, kind, user_id, created_at, outcome) VALUES ('j', 'render', 'u', '2026-01-01T00:00:00Z', 'ok');"
      "INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) "
      "VALUES ('s', 'bare', '/c', '*.py', 'light', 60, 1, 'v', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');"
      "INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, width, height, png_bytes, "
      "wall_s, cpu_s, created_at) VALUES (1, 'a.py', 'light', '" + std::string(64, 'a') + "', 'matplotlib', 'render', "
      "'ok', 3200, 1800, 10, 1, 1, '2026-01-01T00:00:00Z');"
      "INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, width, height, detail, "
      "wall_s, cpu_s, created_at) VALUES (1, 'b.py', 'light', '" + std::string(64, 'b') + "', 'matplotlib', 'fail', "
      "'canvas_size', 800, 600, '800x600', 1, 1, '2026-01-01T00:00:00Z');");
  CHECK(migrate(*db) == known_schema_version());
  CHECK(db->sql().execAndGet("SELECT canvas FROM sweep_results WHERE path = 'a.py'").getString() == "exact");
  CHECK(db->sql().execAndGet("SELECT canvas IS NULL FROM sweep_results WHERE path = 'b.py'").getInt() == 1);
  CHECK(db->sql().execAndGet("SELECT runtime_id IS NULL FROM runs").getInt() == 1);
  CHECK(db->sql().execAndGet("SELECT runtime_id IS NULL FROM sweeps").getInt() == 1);
  CHECK(count(*db, "SELECT renders_off_canvas FROM v_sweeps WHERE label = 's'") == 0);
  CHECK(count(*db, "SELECT off_canvas FROM v_sweep_canvas WHERE label = 's'") == 0);
  CHECK(count(*db, "SELECT renders FROM v_sweep_canvas WHERE label = 's'") == 1);
  CHECK(count(*db, "SELECT count(runtime_id) FROM v_runs_recent") == 0);
  // The checks: a canvas only on a render and only exact|off; a runtime id only 12 lower-case hex.
  auto refused = [&](const std::string& sql) {
    try {
      db->sql().exec(sql);
    } catch (const SQLite::Exception& e) {
      return e.getErrorCode() == SQLITE_CONSTRAINT;
    }
    return false;
  };
  CHECK(refused("UPDATE sweep_results SET canvas = 'off' WHERE path = 'b.py'"));
  CHECK(refused("UPDATE sweep_results SET canvas = 'wide' WHERE path = 'a.py'"));
  CHECK_FALSE(refused("UPDATE sweep_results SET canvas = 'off' WHERE path = 'a.py'"));
  CHECK(count(*db, "SELECT renders_off_canvas FROM v_sweeps WHERE label = 's'") == 1);
  CHECK(refused("UPDATE runs SET runtime_id = 'ABCDEF012345'"));
  CHECK(refused("UPDATE sweeps SET runtime_id = '0123'"));
  CHECK_FALSE(refused("UPDATE sweeps SET runtime_id = '257f08b63c84'"));
}
