// plotq check [--quick] [--json]: is the store a whole plotq store? The checks plotqd runs before it
// serves a file (store/integrity.hpp), here in full by default: integrity_check and
// foreign_key_check instead of quick_check; --quick is exactly plotqd's start check. Read-only: the
// file and its -wal are never written. Exit 0 when whole, 1 with one line per problem, 2 on bad
// arguments. A store that does not exist is reported and exits 1 (there is nothing to check).
// On PostgreSQL (--db a URI or conninfo) there is no file to read: the check connects, reads the
// schema version and checks the applied migrations against this binary's; a database never
// migrated is reported as db_missing, as a missing file is. The server keeps its own pages whole.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "store/integrity.hpp"
#include "store/migrate.hpp"
#include "store/target.hpp"
#include "tools/commands.hpp"

namespace plotq::cli {
namespace {

// The migrations recorded in the file against this binary's (only for a file that passed the
// other checks): an edited migration or a newer schema is a problem too.
void check_migrations(store::IntegrityReport& r) {
  try {
    store::Options o;
    o.read_only = true;
    auto db = store::Db::open(r.path, o);
    store::verify_applied(*db, store::known_migrations(db->engine()));
  } catch (const store::StoreError& e) {
    r.problems.push_back({e.code(), e.what()});
  }
}

// plotq check on PostgreSQL: connect, the schema version, the applied migrations.
store::IntegrityReport check_pg(const std::string& target) {
  store::IntegrityReport r;
  r.path = store::redacted(target);
  r.exists = true;
  try {
    store::Options o = store::options_from_env();
    o.read_only = true;
    auto db = store::Db::open(target, o);
    if (store::schema_version(*db) == 0) {
      r.exists = false;
      r.problems.push_back({"db_missing", "no plotq store in " + r.path + " (never migrated: run plotq migrate)"});
      return r;
    }
    store::verify_applied(*db, store::known_migrations(db->engine()));
  } catch (const store::StoreError& e) {
    r.problems.push_back({e.code(), e.what()});
  }
  return r;
}

}  // namespace

int cmd_check(Args args) {
  std::string path = take_db_path(args);
  bool quick = take_flag(args, "--quick");
  bool json = take_flag(args, "--json");
  if (!args.empty()) {
    std::fprintf(stderr, "plotq check: unexpected argument '%s'\nusage: plotq check [--quick] [--json]\n",
                 args[0].c_str());
    return 2;
  }
  store::IntegrityReport r;
  if (store::engine_of(path) == store::Engine::postgresql) {
    r = check_pg(path);
  } else {
    r = store::check_store_file(path, quick ? store::CheckDepth::quick : store::CheckDepth::full);
    if (!r.exists) r.problems.push_back({"db_missing", "no database at " + path});
    if (r.ok()) check_migrations(r);
  }
  if (json) {
    nlohmann::json problems = nlohmann::json::array();
    for (const auto& p : r.problems) problems.push_back({{"code", p.code}, {"detail", p.detail}});
    nlohmann::json out = {{"path", r.path}, {"ok", r.ok()}, {"depth", quick ? "quick" : "full"}, {"problems", problems}};
    std::printf("%s\n", out.dump(2).c_str());
  } else if (r.ok()) {
    std::printf("%s: ok (%s check)\n", r.path.c_str(), quick ? "quick" : "full");
  } else {
    std::fputs(store::describe(r).c_str(), stdout);
  }
  return r.ok() ? 0 : 1;
}

}  // namespace plotq::cli
