#include "server/errors.hpp"

#include <sqlite3.h>

#include "store/error.hpp"

namespace plotq::server {

const ErrorCode* find_error(std::string_view code) {
  for (const ErrorCode& e : kErrorCodes)
    if (e.code == code) return &e;
  return nullptr;
}

std::string_view store_failure_code(const std::exception& e) {
  if (auto* se = dynamic_cast<const store::StoreError*>(&e); se && se->code() == "disk_full") return "storage_full";
  if (auto* sq = dynamic_cast<const SQLite::Exception*>(&e); sq && (sq->getErrorCode() & 0xff) == SQLITE_FULL)
    return "storage_full";
  return "store_unavailable";
}

std::string_view store_failure_code(std::string_view store_code) {
  return store_code == "disk_full" ? "storage_full" : "store_unavailable";
}

std::string error_body(std::string_view code) {
  // Codes are [a-z_] only, so no escaping is needed.
  std::string s = "{\"detail\":\"";
  s.append(code);
  s += "\"}";
  return s;
}

}  // namespace plotq::server
