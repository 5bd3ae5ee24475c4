// One conformance suite, two engines (River's driver suite): a store test written once as
//   TEMPLATE_TEST_CASE("users: ...", "[engines]", OnSqlite, OnPostgres) { StoreUnderTest<TestType> st; ... }
// runs on a fresh SQLite file and on a fresh PostgreSQL schema (PLOTQ_TEST_PG, a libpq conninfo:
// tools/pg.sh run sets it). A behaviour that differs between the engines fails the test.
//
// Without PLOTQ_TEST_PG a PostgreSQL case exits 77, which CTest reports as skipped
// (SKIP_RETURN_CODE in tests/store/CMakeLists.txt): never passed. Catch2 names the cases
// "<name> - OnSqlite" and "<name> - OnPostgres": run the SQLite cases alone by hand with
// `store_tests '~*OnPostgres'`.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "store/db.hpp"
#include "store/ids.hpp"
#include "store/migrate.hpp"
#include "store/error.hpp"
#include "store/sql.hpp"
#include "tests/store/helpers.hpp"

namespace plotq::store::test {

struct OnSqlite {
  static constexpr Engine engine = Engine::sqlite;
};
struct OnPostgres {
  static constexpr Engine engine = Engine::postgresql;
};

// PLOTQ_TEST_PG, or exits 77 (skipped) when there is none.
inline std::string test_pg_or_skip() {
  const char* pg = std::getenv("PLOTQ_TEST_PG");
  if (pg && *pg) return pg;
  std::fprintf(stderr, "SKIPPED: PLOTQ_TEST_PG is not set (run under tools/pg.sh run)\n");
  std::fflush(stderr);
  std::_Exit(77);
}

// A store of its own for one test: a SQLite file in a temp dir, or a schema of its own on the test
// server (dropped when the test ends). target() opens more connections to the same store.
template <class E>
class StoreUnderTest {
 public:
  StoreUnderTest() {
    if constexpr (E::engine == Engine::sqlite) {
      target_ = dir_.file("p.db");
    } else {
      server_ = test_pg_or_skip();
      schema_ = "t_" + new_id(8);
      auto admin = Db::open(server_);
      admin->exec("CREATE SCHEMA " + schema_);
      target_ = server_ + " options='-csearch_path=" + schema_ + "'";
    }
  }
  ~StoreUnderTest() {
    if (schema_.empty()) return;
    try {
      auto admin = Db::open(server_);
      admin->exec("SET client_min_messages = warning; DROP SCHEMA " + schema_ + " CASCADE");  // no NOTICE per table
    } catch (const std::exception&) {
    }
  }
  StoreUnderTest(const StoreUnderTest&) = delete;
  StoreUnderTest& operator=(const StoreUnderTest&) = delete;

  const std::string& target() const { return target_; }
  std::unique_ptr<Db> open(Options o = {}) const { return Db::open(target_, o); }
  std::unique_ptr<Db> migrated(Options o = {}) const {
    auto db = open(o);
    migrate(*db);
    return db;
  }
  TempDir& dir() { return dir_; }

 private:
  TempDir dir_;  // SQLite's file; scratch space for either
  std::string server_;
  std::string schema_;
  std::string target_;
};

// The first column of the first row of a query (0 / "" when there is none), on either engine.
inline std::int64_t int_of(Db& db, const std::string& sql) {
  Stmt q(db, sql);
  return q.executeStep() ? q.getColumn(0).getInt64() : 0;
}
inline std::string text_of(Db& db, const std::string& sql) {
  Stmt q(db, sql);
  return q.executeStep() ? q.getColumn(0).getString() : std::string();
}

// Runs SQL as an admin would (no repository in between): "" when it was accepted, else the
// StoreError code either engine's failure maps to (a refused row is "constraint" on both).
inline std::string raw(Db& db, const std::string& sql) {
  try {
    guarded("raw SQL", [&] { db.exec(sql); });
  } catch (const StoreError& e) {
    return e.code();
  }
  return "";
}

}  // namespace plotq::store::test
