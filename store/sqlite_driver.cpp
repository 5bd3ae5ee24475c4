// The SQLite driver: cursors over statements prepared once per connection (SQLITE_PREPARE_PERSISTENT)
// and kept until it closes. Errors are thrown as SQLite::Exception with the extended code, which
// guarded() maps to the store's codes (error.cpp).
#include "store/sqlite_driver.hpp"

#include <sqlite3.h>

#include <map>

#include <SQLiteCpp/Exception.h>

namespace plotq::store::detail {
namespace {

struct Prepared {
  sqlite3_stmt* q = nullptr;
  bool busy = false;  // a live cursor has it: a second user of the same SQL prepares its own
};

class SqliteCursor final : public Cursor {
 public:
  SqliteCursor(sqlite3* db, sqlite3_stmt* q, bool* busy) : db_(db), q_(q), busy_(busy) {}
  ~SqliteCursor() override {
    sqlite3_reset(q_);
    sqlite3_clear_bindings(q_);
    if (busy_) *busy_ = false;
    else sqlite3_finalize(q_);
  }
  void bind_null(int i) override { check(sqlite3_bind_null(q_, i)); }
  void bind_int(int i, std::int64_t v) override { check(sqlite3_bind_int64(q_, i, v)); }
  void bind_real(int i, double v) override { check(sqlite3_bind_double(q_, i, v)); }
  void bind_text(int i, std::string_view v) override {
    check(sqlite3_bind_text64(q_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_blob(int i, std::string_view v) override {
    check(sqlite3_bind_blob64(q_, i, v.data(), v.size(), SQLITE_TRANSIENT));
  }
  bool step() override {
    if (done_) return false;
    int rc = sqlite3_step(q_);
    if (rc == SQLITE_ROW) return true;
    done_ = true;
    if (rc == SQLITE_DONE) return false;
    throw SQLite::Exception(db_, sqlite3_reset(q_));
  }
  std::int64_t run() override {
    while (step()) {
    }
    return sqlite3_changes64(db_);
  }
  void reset() override {
    sqlite3_reset(q_);
    sqlite3_clear_bindings(q_);
    done_ = false;
  }
  int columns() const override { return sqlite3_column_count(q_); }
  bool is_null(int i) const override { return sqlite3_column_type(q_, i) == SQLITE_NULL; }
  std::string text(int i) const override {
    auto* p = reinterpret_cast<const char*>(sqlite3_column_text(q_, i));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(q_, i))) : std::string();
  }
  std::int64_t int64(int i) const override { return sqlite3_column_int64(q_, i); }
  double real(int i) const override { return sqlite3_column_double(q_, i); }
  std::string blob(int i) const override {
    auto* p = static_cast<const char*>(sqlite3_column_blob(q_, i));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(q_, i))) : std::string();
  }
  std::string name(int i) const override {
    const char* n = sqlite3_column_name(q_, i);
    return n ? n : "";
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw SQLite::Exception(db_, rc);
  }
  sqlite3* db_;
  sqlite3_stmt* q_;
  bool* busy_;  // the cache's flag, or null for a private statement
  bool done_ = false;
};

class SqliteConn final : public Conn {
 public:
  explicit SqliteConn(sqlite3* db) : db_(db) {}
  ~SqliteConn() override {
    for (auto& [sql, p] : cache_) sqlite3_finalize(p.q);
  }
  Engine engine() const override { return Engine::sqlite; }

  std::unique_ptr<Cursor> prepare(std::string_view sql) override {
    auto it = cache_.find(sql);
    if (it != cache_.end() && !it->second.busy) {
      it->second.busy = true;
      return std::make_unique<SqliteCursor>(db_, it->second.q, &it->second.busy);
    }
    sqlite3_stmt* q = nullptr;
    bool keep = it == cache_.end();
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), keep ? SQLITE_PREPARE_PERSISTENT : 0,
                                &q, nullptr);
    if (rc != SQLITE_OK) throw SQLite::Exception(db_, rc);
    if (!q) throw SQLite::Exception("empty statement", SQLITE_MISUSE);
    if (!keep) return std::make_unique<SqliteCursor>(db_, q, nullptr);
    auto& p = cache_.emplace(std::string(sql), Prepared{q, true}).first->second;
    return std::make_unique<SqliteCursor>(db_, q, &p.busy);
  }

  void exec_script(std::string_view sql) override {
    std::string s(sql);
    int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) throw SQLite::Exception(db_, rc);
  }
  bool in_transaction() override { return sqlite3_get_autocommit(db_) == 0; }
  void begin_write(std::optional<std::string_view>) override { exec_script("BEGIN IMMEDIATE"); }
  void commit() override { exec_script("COMMIT"); }
  void rollback() noexcept override {
    // SQLite may have rolled back by itself (SQLITE_FULL, SQLITE_IOERR); only an open one is ended.
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  bool table_exists(std::string_view name) override {
    auto c = prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?");
    c->bind_text(1, name);
    return c->step();
  }

 private:
  sqlite3* db_;
  std::map<std::string, Prepared, std::less<>> cache_;
};

}  // namespace

std::unique_ptr<Conn> sqlite_conn(sqlite3* db) { return std::make_unique<SqliteConn>(db); }

}  // namespace plotq::store::detail
