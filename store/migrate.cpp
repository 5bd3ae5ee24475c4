#include "store/migrate.hpp"

#include "store/sql.hpp"

#include <map>
#include <regex>

#include "common/sha256.hpp"
#include "store/time.hpp"

namespace plotq::store {
namespace detail {
std::vector<std::pair<std::string, std::string>> embedded_migrations();     // generated: migrations/
std::vector<std::pair<std::string, std::string>> embedded_pg_migrations();  // migrations/postgresql/
}

namespace {

// The same table on both engines; SQLite's is STRICT (PostgreSQL's types are strict already).
std::string create_table_sql(Engine e) {
  std::string sql = std::string("CREATE TABLE IF NOT EXISTS schema_migrations (") +
                    (e == Engine::sqlite ? " version INTEGER" : " version BIGINT") +
                    " PRIMARY KEY CHECK (version >= 1),"
                    " name TEXT NOT NULL,"
                    " checksum TEXT NOT NULL CHECK (length(checksum) = 64),"
                    " applied_at TEXT NOT NULL"
                    ")";
  return e == Engine::sqlite ? sql + " STRICT" : sql;
}

// A migration whose text holds this line runs with foreign keys off (needed to rebuild a table);
// the runner checks PRAGMA foreign_key_check before it commits.
constexpr const char* kForeignKeysOff = "-- plotq:foreign_keys=off";

struct Applied {
  int version;
  std::string name;
  std::string checksum;
};

std::map<int, Applied> read_applied(Db& s) {
  std::map<int, Applied> out;
  if (!s.table_exists("schema_migrations")) return out;
  Stmt q(s, "SELECT version, name, checksum FROM schema_migrations ORDER BY version");
  while (q.executeStep()) {
    int v = q.getColumn(0).getInt();
    out[v] = {v, q.getColumn(1).getString(), q.getColumn(2).getString()};
  }
  return out;
}

void check_list(const std::vector<Migration>& known) {
  for (size_t i = 0; i < known.size(); ++i) {
    const Migration& m = known[i];
    if (m.version != int(i) + 1)
      throw MigrationError("migration_bad", "migration " + m.name + ": expected version " +
                                                std::to_string(i + 1) + " (no gaps or duplicates)");
    if (m.checksum != sha256_hex(m.sql))
      throw MigrationError("migration_bad", "migration " + m.name + ": checksum does not match its text");
  }
}

void check_applied(const std::map<int, Applied>& applied, const std::vector<Migration>& known) {
  int expect = 1;
  for (const auto& [v, a] : applied) {
    if (v > int(known.size()))
      throw MigrationError(
          "schema_newer", "database schema version " + std::to_string(applied.rbegin()->first) +
                              " (" + applied.rbegin()->second.name +
                              ") is newer than this binary knows (" + std::to_string(known.size()) +
                              "); use a newer plotq/plotqd build");
    if (v != expect)
      throw MigrationError("schema_inconsistent", "schema_migrations has no row for version " +
                                                      std::to_string(expect) + " but has version " +
                                                      std::to_string(v));
    ++expect;
    const Migration& m = known[v - 1];
    if (a.name != m.name)
      throw MigrationError("migration_edited", "migration " + std::to_string(v) + " was applied as " +
                                                   a.name + ".sql but this binary has " + m.name +
                                                   ".sql; migrations are never renamed");
    if (a.checksum != m.checksum)
      throw MigrationError("migration_edited",
                           "migration " + m.name + ".sql was edited after it was applied (checksum " +
                               a.checksum.substr(0, 12) + "... in the database, " +
                               m.checksum.substr(0, 12) +
                               "... in this binary); restore the file and add a new migration instead");
  }
}

// Each migration in its own write transaction: on PostgreSQL that holds the store's write lock
// (sql.hpp's Tx), so two nodes migrating at once apply each migration once, one after the other.
void apply_one(Db& db, const Migration& m) {
  Db& s = db;
  bool fk_off = db.engine() == Engine::sqlite && m.sql.find(kForeignKeysOff) != std::string::npos;
  auto fk_on_quietly = [&] {
    try {
      s.exec("PRAGMA foreign_keys=ON");
    } catch (const std::exception&) {
    }
  };
  try {
    if (fk_off) s.exec("PRAGMA foreign_keys=OFF");  // no effect inside a transaction: set before
    Tx tx(s);
    // Another process may have applied it between our check and our lock.
    auto applied = read_applied(s);
    if (applied.count(m.version)) {
      if (fk_off) s.exec("PRAGMA foreign_keys=ON");
      return;
    }
    s.exec(m.sql);
    if (fk_off) {
      Stmt fkc(s, "PRAGMA foreign_key_check");
      if (fkc.executeStep())
        throw MigrationError("migration_failed", "migration " + m.name +
                                                     ".sql leaves rows that break a foreign key in table " +
                                                     fkc.getColumn(0).getString());
    }
    Stmt ins(s, "INSERT INTO schema_migrations(version, name, checksum, applied_at) VALUES (?,?,?,?)");
    ins.bind(1, m.version);
    ins.bind(2, m.name);
    ins.bind(3, m.checksum);
    ins.bind(4, iso_utc(now_unix()));
    ins.exec();
    tx.commit();
  } catch (const StoreError&) {
    if (fk_off) fk_on_quietly();
    throw;
  } catch (const std::runtime_error& e) {  // the engine's own error (SQLite::Exception, PgError)
    if (fk_off) fk_on_quietly();
    throw MigrationError("migration_failed", "migration " + m.name + ".sql failed and was rolled back: " + e.what());
  }
  if (fk_off) s.exec("PRAGMA foreign_keys=ON");
}

}  // namespace

Migration make_migration(const std::string& file_name, std::string sql) {
  static const std::regex kName(R"(^([0-9]{4})_([a-z0-9_]+?)(\.sql)?$)");
  std::smatch mt;
  if (!std::regex_match(file_name, mt, kName))
    throw MigrationError("migration_bad", "migration file " + file_name + ": name must be NNNN_lower_snake.sql");
  Migration m;
  m.version = std::stoi(mt[1].str());
  m.name = mt[1].str() + "_" + mt[2].str();
  m.checksum = sha256_hex(sql);
  m.sql = std::move(sql);
  return m;
}

const std::vector<Migration>& known_migrations(Engine e) {
  auto load = [](const std::vector<std::pair<std::string, std::string>>& files) {
    std::vector<Migration> v;
    for (auto& [file, sql] : files) v.push_back(make_migration(file, sql));
    check_list(v);
    return v;
  };
  static const std::vector<Migration> sqlite = load(detail::embedded_migrations());
  static const std::vector<Migration> pg = load(detail::embedded_pg_migrations());
  return e == Engine::postgresql ? pg : sqlite;
}

int known_schema_version(Engine e) { return int(known_migrations(e).size()); }

int schema_version(Db& db) {
  return guarded("read schema version", [&] {
    Db& s = db;
    if (!s.table_exists("schema_migrations")) return 0;
    Stmt q(s, "SELECT coalesce(max(version), 0) FROM schema_migrations");
    return q.executeStep() ? q.getColumn(0).getInt() : 0;
  });
}

void verify_applied(Db& db, const std::vector<Migration>& known) {
  check_list(known);
  auto applied = guarded("read schema_migrations", [&] { return read_applied(db); });
  check_applied(applied, known);
}

int apply_migrations(Db& db, const std::vector<Migration>& known) {
  check_list(known);
  Db& s = db;
  guarded("create schema_migrations", [&] {
    Tx tx(s);
    s.exec(create_table_sql(db.engine()));
    tx.commit();
  });
  verify_applied(db, known);
  for (const Migration& m : known) {
    if (m.version <= schema_version(db)) continue;
    apply_one(db, m);
  }
  verify_applied(db, known);
  return schema_version(db);
}

int migrate(Db& db) { return apply_migrations(db, known_migrations(db.engine())); }

void require_current_schema(Db& db) {
  verify_applied(db, known_migrations(db.engine()));
  int v = schema_version(db);
  if (v < known_schema_version(db.engine()))
    throw MigrationError("schema_behind", "database " + db.path() + " is at schema version " +
                                              std::to_string(v) + ", this binary needs " +
                                              std::to_string(known_schema_version(db.engine())) +
                                              "; run plotq migrate");
}

Health check_health(Db& db) {
  Health h;
  try {
    h.schema_version = schema_version(db);
    int known = known_schema_version(db.engine());
    if (h.schema_version == known) {
      h.ok = true;
      h.detail = "ok";
    } else if (h.schema_version < known) {
      h.detail = "schema_behind";
    } else {
      h.detail = "schema_newer";
    }
  } catch (const StoreError& e) {
    h.detail = e.code();
  } catch (const std::exception& e) {
    h.detail = "sqlite";
  }
  return h;
}

}  // namespace plotq::store
