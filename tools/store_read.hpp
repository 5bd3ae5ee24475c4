// Opening the store for plotq's read-only listings (quotas, ledger): never creates or migrates.
#pragma once
#include <cstdio>
#include <memory>
#include <string>

#include "store/db.hpp"
#include "store/migrate.hpp"

namespace plotq::cli {

// nullptr when there is nothing to list yet (no file, or a file never migrated). Throws
// MigrationError when the schema is newer than this binary or a migration was edited.
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
  store::verify_applied(*db, store::known_migrations());
  if (v < store::known_schema_version())
    std::fprintf(stderr, "plotq %s: warning: %s is at schema version %d, this binary knows %d; run plotq migrate\n",
                 command, path.c_str(), v, store::known_schema_version());
  return db;
}

}  // namespace plotq::cli
