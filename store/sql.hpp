// One statement, either engine. Repositories write their SQL once, in the subset both engines
// read alike (`?` and `?N` placeholders; PostgreSQL's driver numbers them `$N`), and run it through
// Stmt the way they ran SQLiteCpp's Statement: bind, executeStep / exec, getColumn(i).getX().
// A statement is prepared once per connection and kept (both engines); a Stmt borrows it for its
// lifetime and leaves it reset. Where the engines' SQL must differ, `db.engine()` picks the text.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace plotq::store {

class Db;

enum class Engine { sqlite, postgresql };
std::string_view to_string(Engine e);

namespace detail {
class Cursor;
}

// A column of the statement's current row.
class Column {
 public:
  bool isNull() const;
  std::string getString() const;   // NULL reads as ""
  std::int64_t getInt64() const;   // NULL reads as 0; PostgreSQL's booleans as 0/1
  int getInt() const { return static_cast<int>(getInt64()); }
  double getDouble() const;
  std::string getBlob() const;     // the bytes of a BLOB (SQLite) or bytea (PostgreSQL)
  std::string getName() const;     // the result column's name

 private:
  friend class Stmt;
  Column(const detail::Cursor& c, int i) : c_(c), i_(i) {}
  const detail::Cursor& c_;
  int i_;
};

class Stmt {
 public:
  // Throws the engine's error (guarded() maps it to StoreError) when the SQL does not prepare.
  Stmt(Db& db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // Parameters count from 1, as in SQL.
  void bind(int i);  // NULL
  void bind(int i, std::string_view v);
  void bind(int i, const std::string& v) { bind(i, std::string_view(v)); }
  void bind(int i, const char* v) { bind(i, std::string_view(v)); }
  void bind(int i, double v);
  template <class T>
    requires std::is_integral_v<T>
  void bind(int i, T v) {
    bind_int(i, static_cast<std::int64_t>(v));
  }
  void bind_blob(int i, std::string_view bytes);

  // Runs the statement on first call; each call moves to the next row (false: no more).
  bool executeStep();
  // Runs it to completion; the number of rows it inserted, updated or deleted.
  std::int64_t exec();
  // Runs it for its effect alone, its count not read. Inside a Tx on PostgreSQL it goes out in
  // the same round trip as the next statement that waits for an answer (or the commit), in
  // libpq's pipeline mode: an error it meets is raised there, and fails the transaction as it
  // would here. Elsewhere (SQLite, no transaction) the same as exec().
  void send();
  // Columns count from 0, as in SQLiteCpp.
  Column getColumn(int i) const;
  int columnCount() const;
  // Clears the result and the bindings: the statement can be bound and run again.
  void reset();

 private:
  void bind_int(int i, std::int64_t v);
  std::unique_ptr<detail::Cursor> c_;
};

// A write transaction that does not join (repositories' own): SQLite's BEGIN IMMEDIATE (one
// writer at a time). On PostgreSQL BEGIN plus a lock that says what the transaction checks before
// it writes: Tx(db) takes the store's one write lock (as SQLite has it: migrations, start-up
// clean-ups); Tx(db, scope) only the lock of `scope` (a quota booking locks "quota:<user>", so two
// nodes booking for one user check and write one after the other while other users go on); an
// empty scope takes none (a transaction that only inserts or updates by key). Rolls back unless
// committed. WriteTx (write_tx.hpp) is the one that composes and is timed.
class Tx {
 public:
  explicit Tx(Db& db);
  Tx(Db& db, std::string_view scope);
  ~Tx();
  Tx(const Tx&) = delete;
  Tx& operator=(const Tx&) = delete;
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace plotq::store
