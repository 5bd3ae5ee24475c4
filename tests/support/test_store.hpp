// The store an integration test gives plotqd (its PLOTQ_DB) and reads back through the store API.
//   default                          a SQLite file in the test's temp dir
//   PLOTQ_TEST_ENGINE=postgresql     a schema of its own on PLOTQ_TEST_PG (a libpq conninfo or URI;
//                                    `tools/pg.sh run` sets it), reached with search_path, dropped
//                                    at the end
// With PLOTQ_TEST_ENGINE=postgresql and no PLOTQ_TEST_PG the test prints PLOTQ-SKIP and exits 77:
// CTest reports it skipped (the pg. registrations set SKIP_REGULAR_EXPRESSION), and a registration
// that forgot the property fails rather than passes. Header-only; the test target links plotq_store.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "store/db.hpp"
#include "store/ids.hpp"
#include "store/sql.hpp"
#include "tests/support/test_client.hpp"

namespace plotq::test {

// The engine PLOTQ_TEST_ENGINE names: "" or "sqlite" (the default), "postgresql".
inline store::Engine test_engine() {
  const char* e = std::getenv("PLOTQ_TEST_ENGINE");
  const std::string v = e ? e : "";
  if (v.empty() || v == "sqlite") return store::Engine::sqlite;
  if (v == "postgresql") return store::Engine::postgresql;
  throw std::runtime_error("PLOTQ_TEST_ENGINE must be sqlite or postgresql, not " + v);
}

class TestStore {
 public:
  // `name`: the SQLite file's name in dir (a test with two stores gives two names).
  explicit TestStore(const TempDir& dir, const std::string& name = "plotq.db") {
    if (test_engine() == store::Engine::sqlite) {
      target_ = dir.file(name);
      return;
    }
    const char* pg = std::getenv("PLOTQ_TEST_PG");
    if (!pg || !*pg) {
      std::printf("PLOTQ-SKIP: PLOTQ_TEST_ENGINE=postgresql without PLOTQ_TEST_PG (run under tools/pg.sh run)\n");
      std::fflush(stdout);
      std::_Exit(77);
    }
    server_ = pg;
    schema_ = "it_" + store::new_id(8);
    store::Db::open(server_)->exec("CREATE SCHEMA " + schema_);
    target_ = with_search_path(server_, schema_);
  }
  ~TestStore() {
    if (schema_.empty()) return;
    try {
      store::Db::open(server_)->exec("SET client_min_messages = warning; DROP SCHEMA " + schema_ + " CASCADE");
    } catch (const std::exception&) {
    }
  }
  TestStore(const TestStore&) = delete;
  TestStore& operator=(const TestStore&) = delete;

  // What PLOTQ_DB (or `plotq --db`) gets.
  const std::string& target() const { return target_; }
  // The target as one shell word (run_cli's args): a conninfo has spaces and single quotes; no
  // target made here has `"`, `$`, `\` or a backquote.
  std::string shell_word() const { return "\"" + target_ + "\""; }
  bool postgres() const { return !schema_.empty(); }
  std::unique_ptr<store::Db> open() const { return store::Db::open(target_); }

  // One integer from the store (e.g. a count): the first column of the first row, 0 when none.
  std::int64_t scalar(const std::string& sql) const {
    auto db = open();
    store::Stmt q(*db, sql);
    return q.executeStep() ? q.getColumn(0).getInt64() : 0;
  }

 private:
  // libpq's options parameter sets search_path per connection: every connection plotqd and the
  // test open sees only this schema (a URI takes it as a query parameter, '=' escaped).
  static std::string with_search_path(const std::string& server, const std::string& schema) {
    if (server.rfind("postgresql://", 0) == 0 || server.rfind("postgres://", 0) == 0)
      return server + (server.find('?') == std::string::npos ? "?" : "&") + "options=-csearch_path%3D" + schema;
    return server + " options='-csearch_path=" + schema + "'";
  }

  std::string server_;
  std::string schema_;
  std::string target_;
};

}  // namespace plotq::test
