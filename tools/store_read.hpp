// Opening the store for plotq's read-only listings (quotas, ledger, prune --dry-run, sweep reports):
// never creates or migrates. A SQLite file or a PostgreSQL database (store/target.hpp).
#pragma once
#include <cstdio>
#include <memory>
#include <string>

#include "store/db.hpp"
#include "store/migrate.hpp"

namespace plotq::cli {

// nullptr when there is nothing to list yet (no file, or a file or PostgreSQL database never
// migrated: both list headers only). Throws MigrationError when the schema is newer than this
// binary or a migration was edited, StoreError when the store cannot be opened (unreachable, ...).
inline std::unique_ptr<store::Db> open_for_listing(const std::string& path, const char* command) {
  store::Options o = store::options_from_env();
  o.read_only = true;
  std::unique_ptr<store::Db> db;
  try {
    db = store::Db::open(path, o);
  } catch (const store::StoreError& e) {
    if (e.code() == "db_missing") return nullptr;
    throw;
  }
  int v = store::schema_version(*db);
  if (v == 0) return nullptr;
  const store::Engine e = db->engine();
  store::verify_applied(*db, store::known_migrations(e));
  if (v < store::known_schema_version(e))
    std::fprintf(stderr, "plotq %s: warning: %s is at schema version %d, this binary knows %d; run plotq migrate\n",
                 command, db->path().c_str(), v, store::known_schema_version(e));
  return db;
}

}  // namespace plotq::cli
