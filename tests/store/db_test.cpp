// Opening a store: SQLite-only but the last test (file and directory modes, pragmas, symlinks,
// read-only opens of a file: PostgreSQL has no file of ours; its connection runs every conformance
// case of engines.hpp).
#include <sqlite3.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "store/db.hpp"
#include "common/env.hpp"
#include "store/error.hpp"
#include "tests/store/helpers.hpp"

using namespace plotq::store;
using plotq::store::test::TempDir;

namespace {

unsigned mode_of(const std::string& p) {
  struct stat st;
  REQUIRE(::stat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::string error_code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.code();
  }
  return "no error";
}

}  // namespace

TEST_CASE("db: open creates the parent directory 0711 and the file 0600") {
  TempDir t;
  std::string path = t.file("var/deeper/plotq.db");
  ::umask(022);
  auto db = Db::open(path);
  CHECK(db->path() == path);
  CHECK(mode_of(t.file("var")) == 0711);
  CHECK(mode_of(t.file("var/deeper")) == 0711);
  CHECK(mode_of(path) == 0600);
  // The WAL files SQLite makes on the first write inherit the database file's mode.
  db->sql().exec("CREATE TABLE x(a)");
  CHECK(mode_of(path + "-wal") == 0600);
  CHECK(mode_of(path + "-shm") == 0600);
}

TEST_CASE("db: an existing file with a looser mode is tightened to 0600") {
  TempDir t;
  std::string path = t.file("plotq.db");
  { std::ofstream(path).flush(); }
  ::chmod(path.c_str(), 0644);
  REQUIRE(mode_of(path) == 0644);
  auto db = Db::open(path);
  CHECK(mode_of(path) == 0600);
}

TEST_CASE("db: pragmas are WAL, synchronous NORMAL or FULL, foreign keys on, busy timeout") {
  TempDir t;
  {
    auto db = Db::open(t.file("a.db"));
    CHECK(db->sql().execAndGet("PRAGMA journal_mode").getString() == "wal");
    CHECK(db->sql().execAndGet("PRAGMA synchronous").getInt() == 1);  // NORMAL
    CHECK(db->sql().execAndGet("PRAGMA foreign_keys").getInt() == 1);
    CHECK(db->sql().execAndGet("PRAGMA busy_timeout").getInt() == 5000);
  }
  {
    Options o;
    o.synchronous_full = true;
    o.busy_timeout_ms = 1234;
    auto db = Db::open(t.file("b.db"), o);
    CHECK(db->sql().execAndGet("PRAGMA synchronous").getInt() == 2);  // FULL
    CHECK(db->sql().execAndGet("PRAGMA busy_timeout").getInt() == 1234);
  }
}

TEST_CASE("db: options come from PLOTQ_DB_* and malformed values are refused") {
  ::setenv("PLOTQ_DB_SYNCHRONOUS_FULL", "1", 1);
  ::setenv("PLOTQ_DB_BUSY_TIMEOUT_MS", "250", 1);
  Options o = options_from_env();
  CHECK(o.synchronous_full);
  CHECK(o.busy_timeout_ms == 250);
  ::setenv("PLOTQ_DB_BUSY_TIMEOUT_MS", "soon", 1);
  CHECK_THROWS_AS(options_from_env(), plotq::ConfigError);
  ::unsetenv("PLOTQ_DB_SYNCHRONOUS_FULL");
  ::unsetenv("PLOTQ_DB_BUSY_TIMEOUT_MS");
  CHECK_FALSE(options_from_env().synchronous_full);
}

TEST_CASE("db: symlinks, directories and unreachable paths are refused with db_open") {
  TempDir t;
  std::string real = t.file("real.db");
  Db::open(real);
  std::string link = t.file("link.db");
  REQUIRE(::symlink(real.c_str(), link.c_str()) == 0);
  CHECK(error_code_of([&] { Db::open(link); }) == "db_open");
  CHECK(error_code_of([&] { Db::open(t.path.string()); }) == "db_open");
  { std::ofstream(t.file("plainfile")).flush(); }
  CHECK(error_code_of([&] { Db::open(t.file("plainfile/x.db")); }) == "db_open");
  CHECK(error_code_of([&] { Db::open(""); }) == "invalid");
}

TEST_CASE("db: read_only never creates a file and cannot write") {
  TempDir t;
  Options ro;
  ro.read_only = true;
  std::string path = t.file("missing.db");
  CHECK(error_code_of([&] { Db::open(path, ro); }) == "db_missing");
  CHECK_FALSE(std::filesystem::exists(path));
  { auto rw = Db::open(path); rw->sql().exec("CREATE TABLE x(a); INSERT INTO x VALUES (1)"); }
  auto db = Db::open(path, ro);
  CHECK(db->sql().execAndGet("SELECT count(*) FROM x").getInt() == 1);
  CHECK_THROWS_AS(db->sql().exec("INSERT INTO x VALUES (2)"), SQLite::Exception);
}

// Either engine's failure classes map to the same codes: the PostgreSQL side of the table
// (SQLSTATEs), beside SQLite's result codes.
TEST_CASE("db: SQLite result codes and PostgreSQL SQLSTATEs map to the same StoreError codes") {
  CHECK(code_for_sqlite(SQLITE_CONSTRAINT_FOREIGNKEY) == "constraint");
  CHECK(code_for_sqlstate("23503") == "constraint");  // foreign_key_violation
  CHECK(code_for_sqlite(SQLITE_CONSTRAINT_CHECK) == "constraint");
  CHECK(code_for_sqlstate("23514") == "constraint");  // check_violation
  CHECK(code_for_sqlite(SQLITE_CONSTRAINT_UNIQUE) == "constraint");
  CHECK(code_for_sqlstate("23505") == "constraint");  // unique_violation
  CHECK(code_for_sqlite(SQLITE_CONSTRAINT_DATATYPE) == "constraint");
  CHECK(code_for_sqlstate("22P02") == "constraint");  // invalid_text_representation: text into a number
  CHECK(code_for_sqlite(SQLITE_BUSY) == "busy");
  CHECK(code_for_sqlstate("55P03") == "busy");  // lock_not_available (lock_timeout)
  CHECK(code_for_sqlstate("57014") == "busy");  // query_canceled (statement_timeout)
  CHECK(code_for_sqlstate("40P01") == "busy");  // deadlock_detected
  CHECK(code_for_sqlite(SQLITE_FULL) == "disk_full");
  CHECK(code_for_sqlstate("53100") == "disk_full");
  CHECK(code_for_sqlstate("08006") == "unreachable");
  CHECK(code_for_sqlstate("42P01") == "postgresql");  // undefined_table: the engine's own class
}

// Switching a new file to WAL takes its exclusive lock without SQLite's busy handler: processes
// opening one fresh file at once (plotqd and plotq migrate) must wait for each other, not fail.
TEST_CASE("db: processes opening one fresh file at once all get it in WAL mode") {
  TempDir t;
  for (int round = 0; round < 30; ++round) {
    const std::string path = t.file("fresh" + std::to_string(round) + ".db");
    auto codes = plotq::store::test::in_children(6, [&](int) {
      auto db = Db::open(path);
      return db->sql().execAndGet("PRAGMA journal_mode").getString() == "wal" ? 0 : 2;
    });
    for (int rc : codes) CHECK(rc == 0);
  }
}
