// Migration runner. migrations/NNNN_name.sql are embedded into the binary at build time (see
// store/embed_migrations.cmake); nothing is read from disk at run time. Each pending migration is
// applied in its own write transaction (Tx: BEGIN IMMEDIATE, or on PostgreSQL the store's write
// lock, so nodes migrating at once do not collide) and recorded in
// schema_migrations(version, name, checksum = sha256 hex of the file, applied_at).
#pragma once
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/error.hpp"

namespace plotq::store {

// Codes: migration_edited (an applied file's checksum or name differs from the binary's),
// schema_newer (the database has a version this binary does not know), schema_inconsistent
// (applied versions have a gap), migration_failed (a migration's SQL failed; nothing of it stays),
// migration_bad (the embedded list is malformed), schema_behind (require_current_schema).
struct MigrationError : StoreError {
  using StoreError::StoreError;
};

struct Migration {
  int version = 0;       // NNNN
  std::string name;      // "0001_init" (file name without .sql)
  std::string sql;       // the file's bytes
  std::string checksum;  // sha256 hex of sql
};

// The migrations compiled into this binary for an engine, in order (versions 1..N): migrations/
// for SQLite, migrations/postgresql/ for PostgreSQL (numbered on their own).
const std::vector<Migration>& known_migrations(Engine e = Engine::sqlite);
int known_schema_version(Engine e = Engine::sqlite);  // highest migration compiled into the binary

// Applies pending migrations; returns the schema version. Throws MigrationError.
int migrate(Db& db);
// Same with an explicit list (tests use it to simulate later binaries).
int apply_migrations(Db& db, const std::vector<Migration>& known);
// Checks what is applied against `known` without changing anything. Throws MigrationError.
void verify_applied(Db& db, const std::vector<Migration>& known);

int schema_version(Db& db);  // 0 for an empty database
// Throws MigrationError (schema_behind / schema_newer / migration_edited) unless the database is
// exactly at known_schema_version() with unedited migrations: for tools that must not migrate.
void require_current_schema(Db& db);

// Builds a Migration from a file name ("0002_sweep.sql" or "0002_sweep") and its text.
Migration make_migration(const std::string& file_name, std::string sql);

struct Health {
  bool ok = false;
  int schema_version = 0;
  std::string detail;  // "ok" or why not
};
// Cheap (one indexed read), never throws: for GET /healthz.
Health check_health(Db& db);

}  // namespace plotq::store
