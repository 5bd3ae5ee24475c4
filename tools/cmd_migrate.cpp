// plotq migrate [--status]: applies pending migrations (the same runner plotqd uses at start).
// Exit 0 with the schema version; 1 with the reason on a MigrationError (edited migration, schema
// newer than this binary) or another store error; 2 on bad arguments.
#include <cstdio>
#include <map>

#include "store/db.hpp"
#include "store/migrate.hpp"
#include "tools/commands.hpp"

namespace plotq::cli {
namespace {

int status(store::Db& db) {
  std::map<int, std::string> applied;
  if (db.table_exists("schema_migrations")) {
    store::Stmt q(db, "SELECT version, applied_at FROM schema_migrations");
    while (q.executeStep()) applied[q.getColumn(0).getInt()] = q.getColumn(1).getString();
  }
  for (const auto& m : store::known_migrations(db.engine())) {
    auto it = applied.find(m.version);
    std::printf("%s.sql  %s\n", m.name.c_str(), it == applied.end() ? "pending" : ("applied " + it->second).c_str());
  }
  store::verify_applied(db, store::known_migrations(db.engine()));
  return 0;
}

}  // namespace

int cmd_migrate(Args args) {
  std::string path = take_db_path(args);
  bool show_status = take_flag(args, "--status");
  if (!args.empty()) {
    std::fprintf(stderr, "plotq migrate: unexpected argument '%s'\nusage: plotq migrate [--status]\n",
                 args[0].c_str());
    return 2;
  }
  try {
    auto db = store::Db::open(path, store::options_from_env());
    if (show_status) return status(*db);
    int before = store::schema_version(*db);
    int v = store::migrate(*db);
    // db->path(): a PostgreSQL target without its password.
    std::printf("%s: schema version %d (%d migration%s applied now)\n", db->path().c_str(), v, v - before,
                v - before == 1 ? "" : "s");
    return 0;
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotq migrate: %s: %s\n", e.code().c_str(), e.what());
    return 1;
  }
}

}  // namespace plotq::cli
