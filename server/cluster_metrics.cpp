#include "server/cluster_metrics.hpp"

#include <string>
#include <vector>

#include "common/metrics.hpp"
#include "server/cluster_node.hpp"

namespace plotq::server {
namespace {

struct ClusterCounters {
  metrics::CounterFamily& claims;
  metrics::CounterFamily& rescued;
  metrics::CounterFamily& hints_sent;
  metrics::CounterFamily& hints_heard;
};

ClusterCounters& m() {
  auto& r = metrics::registry();
  static ClusterCounters x = [&] {
    ClusterCounters c{
        r.counter("plotq_cluster_claims_total", "waiting entries this node claimed from the cluster's queue"),
        r.counter("plotq_cluster_rescued_total", "entries this node's rescue ended: a lost node's running work, an expired wait",
                  {"code"}),
        r.counter("plotq_cluster_hints_sent_total", "hints (NOTIFY) this node sent"),
        r.counter("plotq_cluster_hints_heard_total", "hints from other nodes this node heard"),
    };
    c.claims.with({});
    for (const char* code : {"node_lost", "capacity"}) c.rescued.with({code});  // present at zero
    c.hints_sent.with({});
    c.hints_heard.with({});
    return c;
  }();
  return x;
}

using Read = double (*)(const ClusterNode&);

}  // namespace

void count_cluster_claim() { m().claims.with({}).inc(); }
void count_cluster_rescued(std::string_view code) { m().rescued.with({code}).inc(); }
void count_cluster_hint_sent() { m().hints_sent.with({}).inc(); }
void count_cluster_hint_heard() { m().hints_heard.with({}).inc(); }

void collect_cluster_gauges(const ClusterNode& node) {
  m();
  auto& r = metrics::registry();
  const ClusterNode* n = &node;
  r.collect("plotq_cluster_node", metrics::Type::gauge, "1, labelled with this node's id and epoch", {"node", "epoch"},
            [n] { return std::vector<metrics::Sample>{{{n->id(), std::to_string(n->epoch())}, 1}}; });
  struct Gauge {
    const char* name;
    const char* help;
    Read read;
  };
  static const Gauge gauges[] = {
      {"plotq_cluster_fenced", "1 while this node has fenced itself (no lease: it claims and writes nothing)",
       [](const ClusterNode& c) { return c.fenced() ? 1.0 : 0.0; }},
      {"plotq_cluster_live_nodes", "nodes with a valid lease, as of this node's last rescue round",
       [](const ClusterNode& c) { return double(c.totals().live_nodes); }},
      {"plotq_cluster_slots", "the live nodes' summed slots, as of the last rescue round",
       [](const ClusterNode& c) { return double(c.totals().slots); }},
      {"plotq_cluster_queue_waiting", "entries waiting in the cluster's queue, as of the last rescue round",
       [](const ClusterNode& c) { return double(c.totals().waiting); }},
      {"plotq_cluster_queue_running", "entries running on any node, as of the last rescue round",
       [](const ClusterNode& c) { return double(c.totals().running); }},
  };
  for (const Gauge& g : gauges)
    r.collect(g.name, metrics::Type::gauge, g.help, {},
              [n, read = g.read] { return std::vector<metrics::Sample>{{{}, read(*n)}}; });
}

void drop_cluster_gauges() {
  for (const char* name : {"plotq_cluster_node", "plotq_cluster_fenced", "plotq_cluster_live_nodes", "plotq_cluster_slots",
                           "plotq_cluster_queue_waiting", "plotq_cluster_queue_running"})
    metrics::registry().drop(name);
}

}  // namespace plotq::server
