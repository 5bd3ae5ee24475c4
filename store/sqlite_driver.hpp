// The SQLite driver (internal to store/): a Conn over an open sqlite3 handle (Db owns the handle).
#pragma once
#include <memory>

#include "store/driver.hpp"

struct sqlite3;

namespace plotq::store::detail {

std::unique_ptr<Conn> sqlite_conn(sqlite3* db);

}  // namespace plotq::store::detail
