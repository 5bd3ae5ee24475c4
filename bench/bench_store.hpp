// The store a benchmark gives plotqd (its PLOTQ_DB), per engine, so that one command measures
// SQLite and PostgreSQL side by side (issue 32's ratios):
//   sqlite      a fresh file in the bench's temp dir (plotqd's default engine)
//   postgresql  a fresh database on the server that --pg or PLOTQ_TEST_PG names (a libpq conninfo,
//               as `tools/pg.sh run` sets it), dropped at the end
// Header-only; the bench links plotq_store.
#pragma once
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/ids.hpp"
#include "store/sql.hpp"
#include "tests/support/test_client.hpp"

namespace plotq::bench {

// "sqlite,postgresql" -> {"sqlite", "postgresql"}; refuses any other word.
inline std::vector<std::string> parse_engines(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= list.size()) {
    std::size_t comma = list.find(',', at);
    std::string e = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (e != "sqlite" && e != "postgresql") throw std::runtime_error("--engines takes sqlite and/or postgresql, not " + e);
    out.push_back(e);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// The PostgreSQL server: --pg's value, else PLOTQ_TEST_PG; a conninfo (key=value words), since the
// bench adds its own dbname= to it (libpq takes the last of a repeated key).
inline std::string pg_server(const std::string& flag) {
  std::string s = flag;
  if (s.empty())
    if (const char* e = std::getenv("PLOTQ_TEST_PG")) s = e;
  if (s.empty()) throw std::runtime_error("postgresql needs --pg CONNINFO or PLOTQ_TEST_PG (run under tools/pg.sh run)");
  if (s.find("://") != std::string::npos) throw std::runtime_error("--pg takes a conninfo (host=... user=...), not a URI");
  return s;
}

class BenchStore {
 public:
  BenchStore(const std::string& engine, const plotq::test::TempDir& dir, const std::string& pg_flag) : engine_(engine) {
    if (engine == "sqlite") {
      target_ = dir.file("bench-" + store::new_id(6) + ".db");
      return;
    }
    server_ = pg_server(pg_flag);
    db_ = "bench_" + store::new_id(8);
    store::Db::open(server_)->exec("CREATE DATABASE " + db_);
    target_ = server_ + " dbname=" + db_;
  }
  ~BenchStore() {
    if (db_.empty()) return;
    try {
      store::Db::open(server_)->exec("DROP DATABASE IF EXISTS " + db_ + " WITH (FORCE)");
    } catch (const std::exception&) {
    }
  }
  BenchStore(const BenchStore&) = delete;
  BenchStore& operator=(const BenchStore&) = delete;

  const std::string& engine() const { return engine_; }
  const std::string& target() const { return target_; }  // PLOTQ_DB
  bool postgres() const { return !db_.empty(); }

  // PostgreSQL: transactions committed in this database so far (pg_stat_database; a backend
  // reports its counts when idle, at most about a second late: the caller waits before reading).
  long long pg_commits() const {
    auto db = store::Db::open(server_);
    db->exec("SELECT pg_stat_clear_snapshot()");
    store::Stmt q(*db, "SELECT xact_commit FROM pg_stat_database WHERE datname = ?");
    q.bind(1, db_);
    return q.executeStep() ? q.getColumn(0).getInt64() : -1;
  }

 private:
  std::string engine_, target_, server_, db_;
};

}  // namespace plotq::bench
