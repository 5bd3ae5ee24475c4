// The cluster's hints (issue 37, docs/scale-out.md): LISTEN/NOTIFY on a connection of its own,
// used by one thread. A hint only says "look now": a node that misses one (its connection down, a
// hint sent while it reconnected) finds the same work at its next poll. NOTIFY takes a
// database-wide lock through the commit that sends it, so hints are never sent per event: the
// caller merges what happened over an interval into one (server/cluster_node.cpp).
//
// The channel is named after the connection's schema, so clusters on one database (a schema each)
// do not wake each other.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "store/db.hpp"

struct pg_conn;

namespace plotq::store {

class Hints {
 public:
  // Connects to `target` (PostgreSQL only) and listens. Throws StoreError (unreachable, db_open).
  static std::unique_ptr<Hints> open(const std::string& target, const Options& o);
  ~Hints();
  Hints(const Hints&) = delete;
  Hints& operator=(const Hints&) = delete;

  // Waits until a hint from another session arrives, `wake_fd` becomes readable or `timeout`
  // passes; returns the payloads that arrived (its own hints are skipped). Throws StoreError
  // unreachable when the connection is lost (open another).
  std::vector<std::string> wait(int wake_fd, std::chrono::milliseconds timeout);
  // Sends one hint (its own transaction: never inside a write's).
  void send(const std::string& payload);
  const std::string& channel() const { return channel_; }

  // The longest payload PostgreSQL takes (its limit is 8000 bytes).
  static constexpr std::size_t kMaxPayload = 7900;

 private:
  explicit Hints(pg_conn* c) : c_(c) {}
  pg_conn* c_;
  std::string channel_;
};

}  // namespace plotq::store
