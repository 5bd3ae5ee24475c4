// This plotqd as one node of a cluster on one PostgreSQL (issue 37, docs/scale-out.md). Owns the
// node's lease (a heartbeat thread with a connection of its own, so a busy pool never delays a
// renewal), the node's self-fence, and the loop's cluster rounds: claim waiting work while a local
// slot is free, read the events of turns this node streams but another node runs, send their
// positions, pass on cancels asked for elsewhere, and rescue what lost nodes held.
//
// Who writes a turn's events: the node that admitted it until its work is enqueued, then the node
// that claimed it. Every other node that holds a stream of it is a follower (Turn::follower).
// Loop thread only, except the heartbeat thread's own members (atomics, its Db).
#pragma once
#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "server/app.hpp"
#include "server/cluster_config.hpp"
#include "server/cluster_hints.hpp"
#include "server/job_registry.hpp"
#include "server/turn.hpp"
#include "server/turn_wire.hpp"
#include "store/cluster.hpp"
#include "store/db.hpp"

namespace plotq::server {

class TurnService;
struct TurnAction;

// A queue entry's action (its JSON, written by ClusterNode::enqueue) read back by the claimant.
TurnAction action_from_json(const std::string& text);

class ClusterNode {
 public:
  ClusterNode(App& app, TurnService& svc);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  // Joins before plotqd serves (a blocking store call, at start only); throws StoreError. `bound`:
  // the address plotqd listens on, the row's address unless PLOTQ_NODE_ADDRESS names another.
  void join(const std::string& bound);
  // The heartbeat thread and the loop's rounds.
  void start();
  // A clean stop: the rounds end, the row says left (its running work was ended by the shutdown).
  void stop();

  const std::string& id() const { return id_; }
  std::int64_t epoch() const { return epoch_; }
  bool fenced() const { return fenced_; }

  // A turn's action goes to the cluster's queue: its daily run booked and its entry inserted in
  // one transaction (refusals end the turn here); then this node follows it.
  void enqueue(const std::shared_ptr<Turn>& t, const TurnAction& action);
  // Streams a turn another node runs: its events are read from the store after t->delivered().
  void follow(const std::shared_ptr<Turn>& t, bool active);
  // POST cancel of a turn this node does not run: "cancelled" (it was waiting: ended now),
  // "cancelling" (the node running it kills it) or "done".
  void cancel(const std::string& turn_id, std::function<void(std::string)> answer);
  // A turn this node claimed has ended: its entry goes.
  void finished(const Turn& t);

  // A single job (/run-data, /render) whose key this node claimed goes to the cluster's queue
  // (a refusal answers its waiters here); this node then waits for its end, wherever it runs
  // (jobs_round), and answers them. (server/cluster_jobs.cpp)
  void enqueue_job(const std::shared_ptr<RunningJob>& job, const std::string& kind, nlohmann::json spec);
  // POST /render/{job_id}/cancel of a job this node neither took nor runs: how many were
  // withdrawn or asked to stop.
  void cancel_job(const std::string& job_id, std::function<void(int)> answer);

  // GET /v1/status's "cluster" (the last round's view; no store call).
  nlohmann::json status_json() const;
  // The cluster's queue as of the last rescue round (its metrics).
  const store::cluster::QueueTotals& totals() const { return totals_; }

 private:
  struct Followed {
    std::weak_ptr<Turn> turn;
    bool active = false;  // not waiting (running elsewhere, or its entry gone): its events are read
    int position = 0, waiting = 0;
    std::chrono::steady_clock::time_point sent{};
    std::chrono::steady_clock::time_point gap_since{};  // waiting for an event its writer has not stored yet
  };
  void round();           // every PLOTQ_CLUSTER_POLL_MS
  void claim_round();
  void events_round();
  void standings_round();
  void rescue_round();    // every PLOTQ_CLUSTER_RESCUE_S: rescue, cancel requests, the status view
  void jobs_round();      // the single jobs this node took the requests of: ended yet? (server/cluster_jobs.cpp)
  void run_claimed_job(const store::cluster::Claimed& c, std::int64_t epoch);  // (server/cluster_jobs.cpp)
  void drop_awaited(std::string_view code);  // fenced: their waiters retry elsewhere
  int free_slots() const;  // local slots this node may claim for now
  // Hints (store/hints.hpp): what this node tells the others, merged on the hints thread into at
  // most one NOTIFY per PLOTQ_CLUSTER_NOTIFY_MS; and what it hears from them, acted on at once.
  // (server/cluster_hints.cpp)
  void hint(bool queue, const std::string& turn);
  void hinted(Hint h);
  void hints_loop();
  void arm();
  void fence_self(const char* why);
  void rejoined(store::cluster::Lease lease);
  void heartbeat_loop();
  std::string status_frame(int position, int waiting) const;

  App& app_;
  TurnService& svc_;
  const ClusterConfig& cfg_;
  std::string id_;
  std::string address_;
  std::int64_t epoch_ = 0;
  bool fenced_ = false;
  bool stopped_ = false;
  bool claiming_ = false, reading_ = false, standing_ = false, rescuing_ = false, awaiting_ = false;
  bool claim_again_ = false, read_again_ = false;  // a hint came while a round was in flight
  // Turns this node claimed whose entry is not yet gone from the store: a slot counts as taken
  // until then, so the table never shows a node running more than its slots.
  int claimed_live_ = 0;
  std::unordered_map<std::string, Followed> followed_;
  // Single jobs this node took the requests of that wait or run in the cluster, by entry.
  struct Awaited {
    std::weak_ptr<RunningJob> job;
    std::string job_id, key_kind;
  };
  std::unordered_map<std::int64_t, Awaited> awaited_;  // (negative: a key another request took over)
  std::int64_t taken_seq_ = 0;
  boost::asio::steady_timer timer_;
  std::chrono::steady_clock::time_point next_standings_{}, next_rescue_{};
  std::shared_ptr<store::WriteFence> fence_;
  // The last round's view for /status.
  std::vector<store::cluster::NodeRow> nodes_;
  store::cluster::QueueTotals totals_;

  // Heartbeat thread: renews the lease, or joins again after a fence.
  std::unique_ptr<store::Db> beat_db_;  // the heartbeat's own connection (no fence)
  std::thread heartbeat_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool quit_ = false;
  std::atomic<std::int64_t> lease_deadline_ns_{0};  // steady clock: renewed in time until then
  std::atomic<bool> lost_{false};                    // a renewal found the lease gone
  std::atomic<bool> want_join_{false};               // fenced: join again with a new epoch
  std::atomic<std::int64_t> beat_epoch_{0};

  // Hints thread: its own connection (LISTEN), woken by wake_fd_ when there is something to send.
  std::thread hinter_;
  int wake_fd_ = -1;
  bool hint_queue_ = false;                // under mu_: work waits that this node will not claim itself
  std::vector<std::string> hint_turns_;    // under mu_: turns run here with newly stored events
};

}  // namespace plotq::server
