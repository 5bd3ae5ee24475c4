// What a PLOTQ_DB / `plotq --db` value names (pure functions, fuzzed: fuzz/db_target.cpp).
//
//   ./var/plotq.db, /srv/plotq.db          a SQLite file (the default engine)
//   postgresql://u:pw@host:5432/plotq?...  a PostgreSQL URI (also postgres://)
//   host=/run/pg dbname=plotq              a libpq conninfo: `keyword=value` pairs
//
// A value is a conninfo when it starts with a libpq keyword followed by `=` (so a SQLite file whose
// name looks like `dbname=x` must be written `./dbname=x`). The password a PostgreSQL target may
// carry is never printed: redacted() is the form every log line, error, /status and --help uses.
#pragma once
#include <string>
#include <string_view>

#include "store/sql.hpp"

namespace plotq::store {

Engine engine_of(std::string_view target);

// The target with every password replaced by `***`: a URI's `user:password@` and its `password=`
// query parameter, a conninfo's `password=` value (quoted or not). SQLite paths come back as
// they are. Never throws; a malformed PostgreSQL target loses everything after the first thing it
// cannot read rather than risk printing a secret.
std::string redacted(std::string_view target);

}  // namespace plotq::store
