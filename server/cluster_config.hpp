// The settings of a cluster node (issue 37, docs/scale-out.md): many plotqd on one PostgreSQL.
#pragma once
#include <string>

namespace plotq::server {

struct ClusterConfig {
  bool on = false;         // PLOTQ_CLUSTER: join a cluster (needs PLOTQ_DB on PostgreSQL)
  std::string node_id;     // PLOTQ_NODE_ID: this node's name; empty = hostname-pid
  std::string address;     // PLOTQ_NODE_ADDRESS: where operators reach it (shown by `plotq nodes`); empty = PLOTQ_LISTEN
  double lease_s = 10;     // PLOTQ_NODE_LEASE_S: a node that cannot renew within this fences itself
  double heartbeat_s = 2;  // PLOTQ_NODE_HEARTBEAT_S: the lease is renewed this often
  int poll_ms = 40;        // PLOTQ_CLUSTER_POLL_MS: look for waiting work, and for events of turns run elsewhere
  int notify_ms = 5;       // PLOTQ_CLUSTER_NOTIFY_MS: at most one hint (NOTIFY) per this interval; 0 = poll only
  double rescue_s = 1;     // PLOTQ_CLUSTER_RESCUE_S: how often a node looks for lost nodes and expired waits
};

}  // namespace plotq::server
