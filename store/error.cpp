#include "store/error.hpp"

#include <sqlite3.h>

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

std::string code_of(const std::exception& e) {
  if (auto* se = dynamic_cast<const StoreError*>(&e)) return se->code();
  if (auto* sq = dynamic_cast<const SQLite::Exception*>(&e)) return code_for_sqlite(sq->getExtendedErrorCode());
  return "unknown";
}

}  // namespace plotq::store
