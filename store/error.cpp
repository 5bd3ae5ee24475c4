#include "store/error.hpp"

#include <sqlite3.h>

#include "store/pg_driver.hpp"

namespace plotq::store {

std::string code_for_sqlite(int extended_code) {
  switch (extended_code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "busy";
    case SQLITE_CONSTRAINT:
      return "constraint";
    case SQLITE_FULL:
      return "disk_full";
    case SQLITE_IOERR:
      return "io";
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "corrupt";
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return "db_open";
    default:
      return "sqlite";
  }
}

void rethrow_sqlite(const SQLite::Exception& e, std::string_view what) {
  int ext = e.getExtendedErrorCode();
  // SQLiteCpp's own errors (e.g. a column type mismatch) have code -1.
  std::string code = ext < 0 ? "sqlite" : code_for_sqlite(ext);
  throw StoreError(code, std::string(what) + ": " + e.what());
}

std::string code_for_sqlstate(std::string_view s) {
  auto cls = s.substr(0, 2);
  // plotq_fence (migrations/postgresql/0002_cluster.sql): this node holds no lease.
  if (s == "PQF01") return "fenced";
  if (cls == "23") return "constraint";
  // A value the column's type cannot hold (text into a number, out of range, too long, bytes that
  // are not UTF-8): SQLite's STRICT tables refuse the first ones as SQLITE_CONSTRAINT_DATATYPE.
  if (s == "22P02" || s == "22003" || s == "22001" || s == "22021" || s == "22P05") return "constraint";
  if (s == "40001" || s == "40P01" || s == "55P03" || s == "57014") return "busy";
  if (s == "53100") return "disk_full";
  if (cls == "53" || cls == "58") return "io";
  if (s == "XX001" || s == "XX002") return "corrupt";
  if (cls == "08" || s == "57P01" || s == "57P02" || s == "57P03") return "unreachable";
  // 25006: a write in a read-only session (a read-only open), as SQLITE_READONLY.
  if (cls == "28" || s == "3D000" || s == "42501" || s == "25006") return "db_open";
  return "postgresql";
}

void rethrow_engine(const std::runtime_error& e, std::string_view what) {
  if (auto* pg = dynamic_cast<const detail::PgError*>(&e))
    throw StoreError(code_for_sqlstate(pg->sqlstate), std::string(what) + ": " + e.what());
  throw;
}

std::string code_of(const std::exception& e) {
  if (auto* se = dynamic_cast<const StoreError*>(&e)) return se->code();
  if (auto* pg = dynamic_cast<const detail::PgError*>(&e)) return code_for_sqlstate(pg->sqlstate);
  if (auto* sq = dynamic_cast<const SQLite::Exception*>(&e)) return code_for_sqlite(sq->getExtendedErrorCode());
  return "unknown";
}

}  // namespace plotq::store
