// plotq prune --dry-run|--now [--json]: the retention prune by hand (store/retention.hpp, the same
// functions plotqd's background job calls, with the same PLOTQ_RETAIN_* settings from the
// environment). --dry-run opens the file read-only and prints, per table, the rows a prune would
// delete now (sessions: the ones it would close as idle); --now deletes them, batch after batch,
// beside a running plotqd (each batch one short write transaction; busy_timeout waits for plotqd).
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/env.hpp"
#include "store/db.hpp"
#include "store/migrate.hpp"
#include "store/retention.hpp"
#include "store/target.hpp"
#include "store/time.hpp"
#include "tools/commands.hpp"
#include "tools/store_read.hpp"
#include "tools/text_table.hpp"

namespace plotq::cli {
namespace {

constexpr const char* kUsage = "usage: plotq prune --dry-run|--now [--json]\n";

// Every table the prune touches, with its family, so the listing is the same shape every time.
struct TableRow {
  const char* table;
  store::Family family;
  const char* what;
};
constexpr TableRow kTables[] = {
    {"runs", store::Family::ledger, "ledger rows"},
    {"turn_events", store::Family::turns, "events of ended turns"},
    {"turn_plots", store::Family::turns, "plots of ended turns"},
    {"sessions", store::Family::idle, "idle sessions closed (not deleted)"},
    {"dataset_versions", store::Family::datasets, "versions of closed sessions"},
    {"datasets", store::Family::datasets, "datasets of closed sessions"},
    {"idempotency", store::Family::idempotency, "expired retry answers"},
    {"sweep_results", store::Family::sweeps, "results of old sweeps"},
    {"sweeps", store::Family::sweeps, "old sweeps"},
};

std::int64_t rows_of(const store::Tally& t, const char* table) {
  auto it = t.find(table);
  return it == t.end() ? 0 : it->second;
}

void print(const store::Tally& t, const store::Cutoffs& c, bool dry, bool json) {
  if (json) {
    nlohmann::json tables = nlohmann::json::object(), cutoffs = nlohmann::json::object();
    for (const auto& r : kTables) tables[r.table] = rows_of(t, r.table);
    for (store::Family f : store::kFamilies) cutoffs[std::string(store::to_string(f))] = store::iso_utc(c.of(f));
    nlohmann::json out{{"mode", dry ? "dry_run" : "now"}, {"tables", tables}, {"cutoffs", cutoffs},
                       {"total", store::total(t)}};
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : kTables)
    rows.push_back({r.table, std::to_string(rows_of(t, r.table)), std::string(store::to_string(r.family)),
                    store::iso_utc(c.of(r.family)), r.what});
  print_table(stdout, {"table", dry ? "would_go" : "pruned", "family", "before", "what"}, rows);
}

// The store to prune, or nullptr when there is none (nothing to prune, and none is made): no file,
// or a PostgreSQL database never migrated.
std::unique_ptr<store::Db> open_for_prune(const std::string& path) {
  if (store::engine_of(path) == store::Engine::sqlite && !std::filesystem::exists(path)) return nullptr;
  auto db = store::Db::open(path, store::options_from_env());
  if (db->engine() == store::Engine::postgresql && store::schema_version(*db) == 0) return nullptr;
  return db;
}

}  // namespace

int cmd_prune(Args args) {
  try {
    std::string path = take_db_path(args);
    bool dry = take_flag(args, "--dry-run");
    bool now_flag = take_flag(args, "--now");
    bool json = take_flag(args, "--json");
    if (take_flag(args, "--help")) {
      std::printf("%s", kUsage);
      return 0;
    }
    if (!args.empty() || dry == now_flag) {
      std::fprintf(stderr, "plotq prune: %s\n%s",
                   !args.empty() ? ("unexpected argument '" + args[0] + "'").c_str()
                                 : "exactly one of --dry-run and --now",
                   kUsage);
      return 2;
    }
    store::RetentionPolicy policy;
    try {
      policy = store::retention_from_env();
    } catch (const ConfigError& e) {
      std::fprintf(stderr, "plotq prune: %s\n", e.what());
      return 2;
    }
    store::UnixSeconds now = store::now_unix();
    store::Cutoffs cutoffs = store::cutoffs_at(policy, now);
    store::Tally t;
    if (dry) {
      if (auto db = open_for_listing(path, "prune")) t = store::pending(*db, cutoffs);
    } else if (auto db = open_for_prune(path)) {
      store::require_current_schema(*db);
      t = store::prune_all(*db, cutoffs, policy.batch, now);
    }
    print(t, cutoffs, dry, json);
    return 0;
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotq prune: %s: %s\n", e.code().c_str(), e.what());
    return 1;
  }
}

}  // namespace plotq::cli
