// Store errors carry a fixed code so callers map them to HTTP answers and CLI exit codes without
// parsing messages. Vocabulary (see docs/store.md, "Error codes"):
//   db_open      the file could not be created/opened (permissions, not a regular file, symlink)
//   db_missing   a read-only open of a file that does not exist
//   busy         the database stayed locked longer than busy_timeout
//   constraint   a row broke a constraint (foreign key, CHECK, UNIQUE, NOT NULL)
//   not_found    the row a call names does not exist
//   bad_state    the row exists but is in the wrong state for the call (e.g. finishing a done turn)
//   invalid      an argument the store cannot use (malformed day, empty id)
//   fenced       PostgreSQL, a cluster node: it holds no lease (plotq_fence); nothing written
//   unreachable  PostgreSQL: the server cannot be reached (refused, down, the connection lost);
//                the driver reconnects with a backoff, the caller may retry later
//   disk_full, io, corrupt, sqlite, postgresql   the underlying engine's failure class
//   migration_*, schema_*            see MigrationError in store/migrate.hpp
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

#include <SQLiteCpp/Exception.h>

namespace plotq::store {

struct StoreError : std::runtime_error {
  StoreError(std::string code, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const noexcept { return code_; }

 private:
  std::string code_;
};

// The store code for a SQLite (extended) result code, e.g. SQLITE_CONSTRAINT_FOREIGNKEY -> "constraint".
std::string code_for_sqlite(int extended_code);

// The store code for a PostgreSQL SQLSTATE, e.g. 23505 (unique_violation) -> "constraint".
std::string code_for_sqlstate(std::string_view sqlstate);

// Rethrows a SQLite exception as a StoreError whose message says what the store was doing.
[[noreturn]] void rethrow_sqlite(const SQLite::Exception& e, std::string_view what);

// A PostgreSQL error (pg_driver.hpp's PgError) as StoreError; any other runtime_error is rethrown.
[[noreturn]] void rethrow_engine(const std::runtime_error& e, std::string_view what);

// The store code of a caught exception: a StoreError's code, "sqlite" for a raw SQLite one, else
// "unknown". For log lines of callers that catch everything a store call may throw.
std::string code_of(const std::exception& e);

// Runs f, turning either engine's exceptions into StoreError. Every repository entry goes through it.
template <class F>
auto guarded(std::string_view what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const SQLite::Exception& e) {
    rethrow_sqlite(e, what);
  } catch (const StoreError&) {
    throw;
  } catch (const std::runtime_error& e) {
    rethrow_engine(e, what);
  }
}

}  // namespace plotq::store
