// The cluster's tables (issue 37, migrations/postgresql/0002_cluster.sql): nodes and their leases,
// the one queue of waiting and running turn work, claims, positions, cancels and the rescue of
// what a lost node held. PostgreSQL only (a cluster is many plotqd nodes on one PostgreSQL); every
// time is milliseconds of the database's clock (plotq_now_ms), the one clock all nodes compare.
//
// The rule everything here keeps: model code never runs twice. A claim moves an entry from
// waiting to running under FOR UPDATE SKIP LOCKED, once; nothing moves it back. A running entry of
// a node that lost its lease is ended node_lost, never handed to another node.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"

namespace plotq::store::cluster {

struct Lease {
  std::int64_t epoch = 0;
  std::int64_t until_ms = 0;  // database clock
  std::int64_t now_ms = 0;    // database clock when it was granted
};

struct NodeRow {
  std::string id;
  std::int64_t epoch = 0;
  std::string state;  // live | lost | left
  std::int64_t slots = 0, capacity = 0;
  std::string address;
  std::int64_t joined_ms = 0, heartbeat_ms = 0, lease_until_ms = 0;
  std::int64_t running = 0;  // entries it runs now
  bool lease_valid = false;  // lease_until_ms is still ahead of the database's clock
};

// What a lost node (or a node's own earlier epoch) left, and how it ended.
struct Ended {
  std::string turn_id, user_id, session_id, job_id, kind;
  std::string code;  // node_lost | capacity | cancelled
  std::string key_kind;  // a single job's idempotency kind (turn_id empty)
};

// Joins (or rejoins) the cluster: the node's row gets the next epoch and a fresh lease. Whatever
// its earlier epochs still held (a restart after kill -9, a rejoin after a pause) ends node_lost in
// the same transaction. Not fenced (it is what makes the fence pass).
std::pair<Lease, std::vector<Ended>> join(Db& db, const std::string& node, int slots, int capacity,
                                          const std::string& address, int lease_ms, UnixSeconds now);
// Renews the lease; nullopt when it had already run out or the node was marked lost: the node
// must fence itself and join again.
std::optional<Lease> renew(Db& db, const std::string& node, std::int64_t epoch, int lease_ms);
// A clean stop: the row says left, its lease ends now. Only while the lease is still held (false
// otherwise: a lost node's work is left to the rescue, which looks for live rows).
bool leave(Db& db, const std::string& node, std::int64_t epoch);
std::vector<NodeRow> nodes(Db& db);
// A node as /v1/status and `plotq nodes --json` show it.
nlohmann::json to_json(const NodeRow& n);

// A turn's sandbox work, or a single job (/run-data, /render: turn_id empty), as the node that took
// it enqueues it. Both wait in one FIFO.
struct Entry {
  std::string turn_id, user_id, session_id, job_id, kind;  // kind: data | render
  // JSON. A turn's: {kind, code, library, themes}. A single job's: the request as its runner reads
  // it, with `key_kind`, the kind of its idempotency key (which its end writes).
  std::string action;
  std::string origin_node;
  std::int64_t next_seq = 1;  // the seq of the turn's next event (the admitting node wrote those before)
  std::int64_t key_row = 0;   // a single job's idempotency row as its claim made it
  // When set: if the entry starts now (nothing waits, a slot is free), it is admitted already
  // claimed by this node and epoch (the node has a free slot: it runs where it was sent).
  std::string claim_node;
  std::int64_t claim_epoch = 0;
};
enum class Enqueued { queued, capacity, taken };
struct Admitted {
  Enqueued verdict = Enqueued::capacity;
  int position = 0, waiting = 0;  // when queued: its place (1 = next) and the waiting count with it
  bool starts_now = false;        // nothing waited before it and a slot was free somewhere
  std::int64_t entry = 0;         // a single job, when queued: its row
  bool claimed = false;           // admitted claimed by Entry::claim_node (it runs there now)
  std::int64_t started_ms = 0;    // when claimed: its start (database clock)
};
// Inside the caller's transaction: admits the entry unless the queue is full (waiting entries >=
// the live nodes' summed capacity, unless nothing waits and a slot is free), under the queue's
// advisory lock so two nodes never both admit the last place. The room is read from queue_counts
// (kept by triggers), so an admission costs the same with ten or ten thousand waiting. A turn's
// row now names `node`. A single job: its key's row must still be the one its request claimed
// (locked, so a take-over waits for this admission), else `taken` and nothing is written; one
// refused for capacity has its key forgotten and its refused ledger rows booked here.
Admitted enqueue(Db& db, const Entry& e, std::int64_t node_epoch);

struct Claimed {
  std::int64_t entry = 0;
  Entry e;
  std::int64_t enqueued_ms = 0, started_ms = 0;
};
// Claims up to n of the oldest waiting entries that have not waited max_wait_ms (MATERIALIZED CTE +
// FOR UPDATE SKIP LOCKED + UPDATE .. RETURNING: two nodes never claim one entry, and the LIMIT is
// never exceeded). One transaction (fenced when the node's Db has a WriteFence).
std::vector<Claimed> claim(Db& db, const std::string& node, std::int64_t epoch, int n, std::int64_t max_wait_ms);

// Where the given turns stand in the queue: waiting with position (1 = next) and the global count,
// or running (position 0); turns with no entry are left out.
struct Standing {
  std::string turn_id;
  bool running = false;
  int position = 0, waiting = 0;
};
std::vector<Standing> standings(Db& db, const std::vector<std::string>& turn_ids);
// The global queue now: waiting and running entries, and the live nodes' slots and capacity.
struct QueueTotals {
  std::int64_t waiting = 0, running = 0, slots = 0, capacity = 0, live_nodes = 0;
  std::optional<std::int64_t> oldest_wait_ms;
};
QueueTotals totals(Db& db);
nlohmann::json to_json(const QueueTotals& q);

struct StoredEvent {
  std::string turn_id;
  std::int64_t seq = 0;
  std::string name, data;
};
// The events of each (turn, after) with seq > after, by turn then seq.
std::vector<StoredEvent> events_after(Db& db, const std::vector<std::pair<std::string, std::int64_t>>& after);

// A cancel on any node: a waiting entry is withdrawn and its turn ended cancelled (one
// transaction, with its refused ledger row); a running one is marked, and the node running it
// kills it (cancel_requests).
enum class CancelResult { withdrawn, requested, none };
CancelResult cancel(Db& db, const std::string& turn_id, UnixSeconds now);
// Work this node runs whose cancel was asked for on another node: a turn (turn_id) or a single
// job (turn_id empty, its job_id).
struct CancelRequest {
  std::string turn_id, job_id;
};
std::vector<CancelRequest> cancel_requests(Db& db, const std::string& node, std::int64_t epoch);

// One node at a time (pg_try_advisory_xact_lock; others skip): live nodes whose lease ran out
// are marked lost, their running entries and their turns without an entry end node_lost (with a
// node_lost ledger row; a single job's key keeps node_lost as its answer, so a retry never runs
// it again); waiting entries stay in their place; entries that waited max_wait_ms end capacity
// (refused ledger row; found oldest first by enqueued_ms, the scan stops at the first that may
// still wait). One transaction; returns what it ended (empty when another node held the lock).
std::vector<Ended> rescue(Db& db, std::int64_t max_wait_ms, UnixSeconds now);

// Inside the transaction that stores a claimed turn's end: its entry goes (fenced by node, epoch).
void finish_entry(Db& db, const std::string& turn_id, const std::string& node, std::int64_t epoch);

// ---- single jobs (/run-data, /render) ----
// Their answer is their idempotency row, kept cluster-wide: the claimant runs the job, books its
// ledger rows and keeps the answer (or forgets the key) in one transaction with end_job; the node
// that took the request waits for it (job_outcomes). A lost claimant's job is never run again:
// the rescue keeps node_lost as its key's answer.

// Inside the claimant's end transaction: no verdict, the entry goes (the answer is kept); a
// verdict (a host error or a refusal: the key was forgotten, a retry runs again), the entry ends
// with it for the node that took the request. Only the claimant's own running entry (node,
// epoch): otherwise bad_state (the rescue ended it), which refuses the whole transaction.
void end_job(Db& db, std::int64_t entry, const std::string& node, std::int64_t epoch, const std::string& verdict);

struct AwaitedJob {
  std::int64_t entry = 0;  // 0: no entry of this node's (its key was taken over): the key alone
  std::string job_id, key_kind;
};
struct JobOutcome {
  enum class State { pending, verdict, answer };
  std::int64_t entry = 0;
  State state = State::pending;
  std::string text;  // verdict: the error code; answer: the kept answer (JSON)
};
// For the node that took the requests: each job still waits or runs (pending), ended with a
// verdict (read once: the entry goes), or ended with a kept answer. A job whose entry and key are
// both gone (nothing that ended it kept anything) reads as verdict `internal`.
std::vector<JobOutcome> job_outcomes(Db& db, const std::vector<AwaitedJob>& jobs);

// A request that finds a single job's key running: takes the key over (deletes it; the caller
// claims it again) only when no entry of the job waits or runs and the key was claimed at or
// before `claimed_by` (a node enqueues within its lease of claiming, or is fenced): the key's node
// went away between the two, so its code never ran. Under the key's row lock, so an enqueue still
// in flight is either seen here or refused there (`taken`: it then waits for this run's answer).
bool take_over_key(Db& db, const std::string& job_id, const std::string& kind, UnixSeconds claimed_by);

// POST /render/{job_id}/cancel on any node: the job id's waiting entries end cancelled (key
// forgotten, a refused ledger row), its running ones are marked for their node. How many.
int cancel_job(Db& db, const std::string& job_id, UnixSeconds now);

// An ended single job's verdict is kept this long for the node that took its request; after it
// that node is gone (it reads each within a poll) and the rescue deletes it.
inline constexpr std::int64_t kVerdictKeepMs = 60'000;

}  // namespace plotq::store::cluster
