// plotq sweep --server URL: the sweep's third backend, POST /render on a running plotqd (blocking
// tools/http_client calls on a worker thread per file in flight). Here, not in sweep/, because it
// needs the CLI's HTTP client. Against a cluster (GET /status names its live nodes) each file goes
// to the node with the most free slots, so a sweep uses every node's slots; a node that stops
// answering is left out and its file sent to another with the same job id (run once: the
// idempotency table is the cluster's).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "sweep/runner.hpp"

namespace plotq::cli {

class ServerBackend : public runs::SweepBackend {
 public:
  ServerBackend(boost::asio::io_context& io, std::string url, std::string prefix)
      : io_(io), url_(std::move(url)), prefix_(std::move(prefix)) {}
  ~ServerBackend() override;

  // A library not in the table is refused here as in process; whether this server's runtime can
  // draw the others (runtime_unavailable) it answers itself.
  runs::Outcome support(const std::string& library) override;
  void start(const runs::SweepTask& task, const std::vector<std::string>& themes, double timeout_s,
             std::function<void(runs::FileOutcome)> done) override;
  void cancel_all() override;

 private:
  struct Node {
    std::string url;
    int slots = 1;
    std::atomic<int> in_flight{0};  // files sent to it now
    std::atomic<bool> down{false};
  };
  void find_nodes();
  Node* pick();  // the node with the most free slots, down ones last
  runs::FileOutcome call(Node*& node, const std::string& body, const std::vector<std::string>& themes, double timeout_s);

  boost::asio::io_context& io_;
  std::string url_;
  std::vector<std::unique_ptr<Node>> nodes_;  // found at the first file
  std::string prefix_;
  std::atomic<bool> stop_{false};
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::thread> threads_;
  std::map<std::uint64_t, std::pair<std::string, Node*>> running_;  // job id, where it was sent
};

// The runtime a sweep's files run on: the configured interpreter's manifest (bare and sandbox
// mode run the same one), or what a server's GET /status says it runs. nullopt: unknown.
// A glob that can match JavaScript snippets (runs::sweep_languages) names the JavaScript runtime
// (runtime/js) instead, and one that can match both the first 12 hex of sha256("<python id>+<js
// id>"): either runtime changing is then a changed runtime, in the schema's 12-hex shape.
std::optional<std::string> sweep_runtime_id(const std::optional<std::string>& server, const std::string& glob);

}  // namespace plotq::cli
