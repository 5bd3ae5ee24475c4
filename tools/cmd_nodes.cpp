// plotq nodes [--json]: the nodes of a cluster on the PostgreSQL store (docs/scale-out.md): each
// node's epoch, state, lease, slots and running work, and the cluster's queue. Read-only.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "store/cluster.hpp"
#include "store/db.hpp"
#include "store/error.hpp"
#include "store/migrate.hpp"
#include "store/target.hpp"
#include "tools/commands.hpp"
#include "tools/text_table.hpp"

namespace plotq::cli {

namespace {
constexpr const char* kUsage = "usage: plotq nodes [--json]   (PLOTQ_DB or --db: a PostgreSQL store)\n";
}

int cmd_nodes(Args args) {
  try {
    std::string path = take_db_path(args);
    bool json = take_flag(args, "--json");
    if (take_flag(args, "--help")) {
      std::printf("%s", kUsage);
      return 0;
    }
    if (!args.empty()) {
      std::fprintf(stderr, "plotq nodes: unexpected argument '%s'\n%s", args[0].c_str(), kUsage);
      return 2;
    }
    if (store::engine_of(path) != store::Engine::postgresql) {
      std::fprintf(stderr, "plotq nodes: a cluster lives on PostgreSQL; %s is a SQLite file (one node)\n",
                   store::redacted(path).c_str());
      return 2;
    }
    store::Options o = store::options_from_env();
    o.read_only = true;
    auto db = store::Db::open(path, o);
    store::require_current_schema(*db);
    auto nodes = store::cluster::nodes(*db);
    auto q = store::cluster::totals(*db);
    if (json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& n : nodes) out.push_back(store::cluster::to_json(n));
      nlohmann::json body = {{"nodes", out}, {"queue", store::cluster::to_json(q)}};
      std::printf("%s\n", body.dump(2).c_str());
      return 0;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& n : nodes)
      rows.push_back({n.id, std::to_string(n.epoch), n.state == "live" && !n.lease_valid ? "expired" : n.state,
                      std::to_string(n.running) + "/" + std::to_string(n.slots), std::to_string(n.capacity), n.address});
    print_table(stdout, {"NODE", "EPOCH", "STATE", "RUNNING", "CAPACITY", "ADDRESS"}, rows);
    std::printf("queue: %lld waiting, %lld running; %lld live nodes, %lld slots, capacity %lld\n",
                static_cast<long long>(q.waiting), static_cast<long long>(q.running),
                static_cast<long long>(q.live_nodes), static_cast<long long>(q.slots),
                static_cast<long long>(q.capacity));
    return 0;
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotq nodes: %s: %s\n", e.code().c_str(), e.what());
    return 1;
  }
}

}  // namespace plotq::cli
