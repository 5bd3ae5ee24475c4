// The PostgreSQL driver (internal to store/): a Conn over one libpq connection.
#pragma once
#include <memory>
#include <string>

#include "store/db.hpp"
#include "store/driver.hpp"

struct pg_conn;

namespace plotq::store::detail {

// Connects to `target` (a URI or conninfo, store/target.hpp) and sets the session: UTC,
// statement_timeout, lock_timeout, application_name. Throws StoreError unreachable (the server
// cannot be reached: refused, unknown host, timed out) or db_open (it refused us: authentication,
// no such database).
std::unique_ptr<Conn> pg_connect(const std::string& target, const Options& o);

// The same connection as a bare libpq handle (for store/hints.cpp's LISTEN connection); the
// caller owns it (PQfinish). Throws as pg_connect does.
pg_conn* pg_open(const std::string& target, const Options& o);

// PostgreSQL's error: the SQLSTATE (five characters) and the server's message.
struct PgError : std::runtime_error {
  PgError(std::string state, const std::string& message) : std::runtime_error(message), sqlstate(std::move(state)) {}
  std::string sqlstate;
};

}  // namespace plotq::store::detail
