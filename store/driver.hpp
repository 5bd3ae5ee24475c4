// The two drivers' common shape (internal to store/): a connection that prepares cursors and runs
// scripts and transactions. sqlite_driver.cpp speaks to SQLite through its C API; pg_driver.cpp
// to PostgreSQL through libpq. Repositories never see this: they use Stmt, Tx and WriteTx.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "store/sql.hpp"

namespace plotq::store::detail {

// A prepared statement borrowed from its connection's cache, with its bindings and current row.
class Cursor {
 public:
  virtual ~Cursor() = default;
  virtual void bind_null(int i) = 0;
  virtual void bind_int(int i, std::int64_t v) = 0;
  virtual void bind_real(int i, double v) = 0;
  virtual void bind_text(int i, std::string_view v) = 0;
  virtual void bind_blob(int i, std::string_view v) = 0;
  virtual bool step() = 0;
  virtual std::int64_t run() = 0;  // to completion; rows changed
  // Runs it when nothing needs its answer (see Stmt::send): SQLite at once, PostgreSQL inside a
  // transaction in the same round trip as the next statement that waits.
  virtual void send() { run(); }
  virtual void reset() = 0;
  virtual int columns() const = 0;
  virtual bool is_null(int i) const = 0;
  virtual std::string text(int i) const = 0;
  virtual std::int64_t int64(int i) const = 0;
  virtual double real(int i) const = 0;
  virtual std::string blob(int i) const = 0;
  virtual std::string name(int i) const = 0;
};

class Conn {
 public:
  virtual ~Conn() = default;
  virtual Engine engine() const = 0;
  virtual std::unique_ptr<Cursor> prepare(std::string_view sql) = 0;
  // Statements without parameters, several separated by `;` (migrations, pragmas).
  virtual void exec_script(std::string_view sql) = 0;
  virtual bool in_transaction() = 0;
  // See Tx: nullopt = the store's write lock, "" = none, else the lock of that scope (PostgreSQL).
  virtual void begin_write(std::optional<std::string_view> scope) = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  virtual bool table_exists(std::string_view name) = 0;
};

}  // namespace plotq::store::detail
