// A cluster node's metrics (docs/metrics.md "Cluster"): counters bumped where the work happens
// (claims, rescues, hints), gauges read from the node at scrape time.
#pragma once
#include <string_view>

namespace plotq::server {

class ClusterNode;

void count_cluster_claim();
void count_cluster_rescued(std::string_view code);  // node_lost | capacity
void count_cluster_hint_sent();
void count_cluster_hint_heard();
// The gauges of `node` (this process's one node), read on the loop when scraped.
void collect_cluster_gauges(const ClusterNode& node);
void drop_cluster_gauges();  // the node is going away

}  // namespace plotq::server
