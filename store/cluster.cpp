#include "store/cluster.hpp"

#include "store/error.hpp"
#include "store/idempotency.hpp"
#include "store/ledger.hpp"
#include "store/sql.hpp"
#include "store/sql_util.hpp"
#include "store/turns.hpp"
#include "store/types.hpp"

namespace plotq::store::cluster {
namespace {

// A PostgreSQL text[] literal: every element quoted, so any id is one element.
std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string int_array(const std::vector<std::int64_t>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + std::to_string(items[i]);
  return out + "}";
}

void require_pg(Db& db, const char* what) {
  if (db.engine() != Engine::postgresql)
    throw StoreError("invalid", std::string(what) + ": a cluster needs PostgreSQL");
}

// The ledger row of a turn's job that a node did not finish: node_lost (failed, never re-run),
// or a refusal (capacity: its wait ran out; cancelled: withdrawn while waiting).
void book(Db& db, const Ended& e, UnixSeconds now) {
  if (e.code == "node_lost") {
    // The node may have booked the job's own row before it was lost: the run ended and its ledger
    // row committed, then its turn's end and its entry's delete did not reach the store (the
    // server went away, the node was cut off). One job, one row: that one stays. The node cannot
    // book it after this: its lease is gone, and a fenced write still in flight holds the node's
    // lock (plotq_fence), which the rescue (a try) and the join wait for.
    Stmt seen(db, "SELECT 1 FROM runs WHERE job_id = ? LIMIT 1");
    seen.bind(1, e.job_id);
    if (seen.executeStep()) return;
  }
  LedgerEntry row;
  row.job_id = e.job_id;
  row.kind = parse_run_kind(e.kind).value_or(RunKind::data);
  row.user_id = e.user_id;
  if (!e.session_id.empty()) row.session_id = e.session_id;
  if (!e.turn_id.empty()) row.turn_id = e.turn_id;
  row.created_at = now;
  row.reason = e.code;
  if (e.code == "node_lost") {
    row.outcome = RunOutcome::failed;
  } else {
    row.outcome = RunOutcome::refused;
    row.refusal_code = e.code;
  }
  // A single render job has a row per theme, as when it runs (its key's kind lists them).
  if (e.turn_id.empty() && row.kind == RunKind::render && !e.key_kind.empty()) {
    std::size_t from = 0;
    for (;;) {
      std::size_t comma = e.key_kind.find(',', from);
      row.theme = e.key_kind.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
      ledger::insert(db, row);
      if (comma == std::string::npos) return;
      from = comma + 1;
    }
  }
  ledger::insert(db, row);
}

// A single job ended by the rescue or a cancel, inside the caller's transaction: node_lost keeps
// that as its key's answer (its code may have run: a retry must not run it again); a refusal
// (capacity, cancelled: nothing ran) forgets the key, so a retry runs. Then its ledger rows.
void end_job_key(Db& db, const Ended& e, UnixSeconds now) {
  if (e.code == "node_lost") {
    Stmt q(db, "UPDATE idempotency SET state = 'done', response = ?, finished_at = ? "
               "WHERE job_id = ? AND kind = ? AND state = 'running'");
    q.bind(1, std::string(R"({"detail":"node_lost"})"));
    q.bind(2, iso_utc(now));
    q.bind(3, e.job_id);
    q.bind(4, e.key_kind);
    q.exec();
  } else {
    idempotency::forget(db, e.job_id, e.key_kind);
  }
  book(db, e, now);
}

// Ends the turns of `ended` (their events after the last stored one, the row done) and books
// their ledger rows, inside the caller's transaction.
void end_all(Db& db, const std::vector<Ended>& ended, UnixSeconds now) {
  for (const auto& e : ended) {
    if (e.turn_id.empty()) {
      end_job_key(db, e, now);
      continue;
    }
    Stmt q(db, "SELECT coalesce((SELECT max(seq) FROM turn_events WHERE turn_id = ?1), 0), "
               "(SELECT status FROM turns WHERE id = ?1)");
    q.bind(1, e.turn_id);
    if (!q.executeStep() || q.getColumn(1).isNull() || q.getColumn(1).getString() == "done") continue;
    std::int64_t last = q.getColumn(0).getInt64();
    std::string outcome = e.code == "cancelled" ? "cancelled" : "error";
    turns::end_with_error(db, {{e.turn_id, last}}, outcome, e.code, now);
    if (!e.job_id.empty()) book(db, e, now);
  }
}

// The key kind a single job's action carries (empty for a turn's).
std::string key_kind_of(const std::string& action) {
  auto j = nlohmann::json::parse(action, nullptr, false);
  return j.is_object() && j.contains("key_kind") && j["key_kind"].is_string() ? j["key_kind"].get<std::string>() : "";
}

Ended ended_from(Stmt& q, int first, const std::string& code) {
  // (the caller's SELECT lists turn_id, user_id, session_id, job_id, kind, action from `first`)
  Ended e{q.getColumn(first).getString(),     q.getColumn(first + 1).getString(),
          q.getColumn(first + 2).getString(), q.getColumn(first + 3).getString(),
          q.getColumn(first + 4).getString(), code, ""};
  if (e.turn_id.empty()) e.key_kind = key_kind_of(q.getColumn(first + 5).getString());
  return e;
}

// Everything (node, epochs before `below`) held: running entries, and turns it admitted that have
// no entry (they were between admission and enqueue). Waiting entries it enqueued stay queued.
std::vector<Ended> lost_work(Db& db, const std::string& node, std::int64_t below) {
  std::vector<Ended> out;
  // No job of these started, so they get no ledger row (empty job id).
  Stmt bare(db, "SELECT t.id, t.user_id, t.session_id, '', "
                "CASE t.action WHEN 'plot' THEN 'render' ELSE 'data' END, '{}' FROM turns t "
                "WHERE t.node = ?1 AND t.node_epoch < ?2 AND t.status <> 'done' "
                "AND NOT EXISTS (SELECT 1 FROM queue_entries q WHERE q.turn_id = t.id)");
  bare.bind(1, node);
  bare.bind(2, below);
  while (bare.executeStep()) out.push_back(ended_from(bare, 0, "node_lost"));
  bare.reset();
  Stmt run(db, "DELETE FROM queue_entries WHERE state = 'running' AND node = ?1 AND epoch < ?2 "
               "RETURNING turn_id, user_id, session_id, job_id, kind, action");
  run.bind(1, node);
  run.bind(2, below);
  while (run.executeStep()) out.push_back(ended_from(run, 0, "node_lost"));
  return out;
}

}  // namespace

std::pair<Lease, std::vector<Ended>> join(Db& db, const std::string& node, int slots, int capacity,
                                          const std::string& address, int lease_ms, UnixSeconds now) {
  require_pg(db, "join the cluster");
  detail::require_id("node id", node);
  return guarded("join the cluster", [&] {
    Tx tx(db, "node:" + node);
    // Waits for a rescue of this node and for any write still fenced by an old epoch of it.
    Stmt wait(db, "SELECT pg_advisory_xact_lock(plotq_node_lock(?))");
    wait.bind(1, node);
    wait.send();
    Stmt q(db,
           "INSERT INTO nodes(id, epoch, state, slots, capacity, address, joined_ms, heartbeat_ms, lease_until_ms) "
           "VALUES (?1, 1, 'live', ?2, ?3, ?4, plotq_now_ms(), plotq_now_ms(), plotq_now_ms() + ?5) "
           "ON CONFLICT (id) DO UPDATE SET epoch = nodes.epoch + 1, state = 'live', slots = excluded.slots, "
           "capacity = excluded.capacity, address = excluded.address, joined_ms = excluded.joined_ms, "
           "heartbeat_ms = excluded.heartbeat_ms, lease_until_ms = excluded.lease_until_ms "
           "RETURNING epoch, lease_until_ms, plotq_now_ms()");
    q.bind(1, node);
    q.bind(2, slots);
    q.bind(3, capacity);
    q.bind(4, address);
    q.bind(5, lease_ms);
    if (!q.executeStep()) throw StoreError("postgresql", "join returned no row");
    Lease l{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()};
    q.reset();
    auto ended = lost_work(db, node, l.epoch);
    end_all(db, ended, now);
    tx.commit();
    return std::make_pair(l, ended);
  });
}

std::optional<Lease> renew(Db& db, const std::string& node, std::int64_t epoch, int lease_ms) {
  return guarded("renew the node's lease", [&]() -> std::optional<Lease> {
    Stmt q(db, "UPDATE nodes SET heartbeat_ms = plotq_now_ms(), lease_until_ms = plotq_now_ms() + ?3 "
               "WHERE id = ?1 AND epoch = ?2 AND state = 'live' AND lease_until_ms > plotq_now_ms() "
               "RETURNING epoch, lease_until_ms, heartbeat_ms");
    q.bind(1, node);
    q.bind(2, epoch);
    q.bind(3, lease_ms);
    if (!q.executeStep()) return std::nullopt;
    return Lease{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()};
  });
}

bool leave(Db& db, const std::string& node, std::int64_t epoch) {
  return guarded("leave the cluster", [&] {
    Stmt q(db, "UPDATE nodes SET state = 'left', lease_until_ms = plotq_now_ms() WHERE id = ? AND epoch = ? "
               "AND state = 'live' AND lease_until_ms > plotq_now_ms()");
    q.bind(1, node);
    q.bind(2, epoch);
    return q.exec() == 1;
  });
}

std::vector<NodeRow> nodes(Db& db) {
  require_pg(db, "list nodes");
  return guarded("list nodes", [&] {
    Stmt q(db, "SELECT n.id, n.epoch, n.state, n.slots, n.capacity, n.address, n.joined_ms, n.heartbeat_ms, "
               "n.lease_until_ms, (SELECT count(*) FROM queue_entries q WHERE q.state = 'running' AND q.node = n.id "
               "AND q.epoch = n.epoch), CASE WHEN n.lease_until_ms > plotq_now_ms() THEN 1 ELSE 0 END "
               "FROM nodes n ORDER BY n.id");
    std::vector<NodeRow> out;
    while (q.executeStep()) {
      NodeRow r;
      r.id = q.getColumn(0).getString();
      r.epoch = q.getColumn(1).getInt64();
      r.state = q.getColumn(2).getString();
      r.slots = q.getColumn(3).getInt64();
      r.capacity = q.getColumn(4).getInt64();
      r.address = q.getColumn(5).getString();
      r.joined_ms = q.getColumn(6).getInt64();
      r.heartbeat_ms = q.getColumn(7).getInt64();
      r.lease_until_ms = q.getColumn(8).getInt64();
      r.running = q.getColumn(9).getInt64();
      r.lease_valid = q.getColumn(10).getInt64() == 1;
      out.push_back(std::move(r));
    }
    return out;
  });
}

nlohmann::json to_json(const NodeRow& n) {
  return {{"id", n.id},           {"epoch", n.epoch},       {"state", n.state},     {"slots", n.slots},
          {"capacity", n.capacity}, {"address", n.address}, {"running", n.running}, {"lease_valid", n.lease_valid},
          {"heartbeat_ms", n.heartbeat_ms}, {"lease_until_ms", n.lease_until_ms}};
}

nlohmann::json to_json(const QueueTotals& q) {
  nlohmann::json j = {{"waiting", q.waiting}, {"running", q.running}, {"slots", q.slots},
                      {"capacity", q.capacity}, {"live_nodes", q.live_nodes}};
  if (q.oldest_wait_ms) j["oldest_wait_s"] = *q.oldest_wait_ms / 1000.0;
  return j;
}

Admitted enqueue(Db& db, const Entry& e, std::int64_t node_epoch) {
  require_pg(db, "enqueue");
  return guarded("enqueue a turn's work", [&] {
    if (e.turn_id.empty()) {
      Stmt key(db, "SELECT 1 FROM idempotency WHERE id = ? AND job_id = ? AND state = 'running' FOR UPDATE");
      key.bind(1, e.key_row);
      key.bind(2, e.job_id);
      if (!key.executeStep()) return Admitted{Enqueued::taken};
    }
    // One admission at a time decides the last places; claims never take this lock.
    Stmt lock(db, "SELECT pg_advisory_xact_lock(hashtextextended('plotq:queue', 0))");
    lock.send();
    Stmt room(db,
              "SELECT coalesce(sum(capacity), 0), coalesce(sum(slots), 0), "
              "(SELECT waiting FROM queue_counts), (SELECT running FROM queue_counts) FROM nodes "
              "WHERE state = 'live' AND lease_until_ms > plotq_now_ms()");
    if (!room.executeStep()) throw StoreError("postgresql", "queue room returned no row");
    std::int64_t cap = room.getColumn(0).getInt64(), slots = room.getColumn(1).getInt64();
    std::int64_t waiting = room.getColumn(2).getInt64(), running = room.getColumn(3).getInt64();
    room.reset();
    bool starts_now = waiting == 0 && running < slots;
    if (!starts_now && waiting >= cap) {
      if (e.turn_id.empty())
        end_job_key(db, Ended{"", e.user_id, e.session_id, e.job_id, e.kind, "capacity", key_kind_of(e.action)},
                    store::now_unix());
      return Admitted{};
    }
    const bool claimed = starts_now && !e.claim_node.empty();
    // One statement: the entry and (a turn's) the turn's row naming its writer. A turn needs no id
    // back, so its statement is sent without waiting (pipelined to the COMMIT): the queue's lock
    // is held for two round trips, the room and the COMMIT.
    Stmt ins(db, "WITH ins AS (INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, "
                 "origin_node, next_seq, enqueued_ms, node, epoch, started_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                 "CASE WHEN ?9 = 1 THEN 'running' ELSE 'waiting' END, ?7, ?8, plotq_now_ms(), "
                 "CASE WHEN ?9 = 1 THEN ?10 END, CASE WHEN ?9 = 1 THEN CAST(?11 AS BIGINT) END, "
                 "CASE WHEN ?9 = 1 THEN plotq_now_ms() END) RETURNING id, coalesce(started_ms, 0) AS started_ms), "
                 "own AS (UPDATE turns SET node = ?7, node_epoch = ?12 WHERE id = ?1) "
                 "SELECT id, started_ms FROM ins");
    if (e.turn_id.empty())
      ins.bind(1);
    else
      ins.bind(1, e.turn_id);
    ins.bind(2, e.user_id);
    ins.bind(3, e.session_id);
    ins.bind(4, e.job_id);
    ins.bind(5, e.kind);
    ins.bind(6, e.action);
    ins.bind(7, e.origin_node);
    ins.bind(8, e.next_seq);
    ins.bind(9, claimed ? 1 : 0);
    ins.bind(10, e.claim_node);
    ins.bind(11, e.claim_epoch);
    ins.bind(12, node_epoch);
    std::int64_t entry = 0, started_ms = 0;
    if (e.turn_id.empty()) {
      if (!ins.executeStep()) throw StoreError("postgresql", "enqueue returned no row");
      entry = ins.getColumn(0).getInt64();
      started_ms = ins.getColumn(1).getInt64();
      ins.reset();
    } else {
      ins.send();
    }
    return Admitted{Enqueued::queued, claimed ? 0 : int(waiting) + 1, claimed ? 0 : int(waiting) + 1, starts_now,
                    entry, claimed, started_ms};
  });
}

std::vector<Claimed> claim(Db& db, const std::string& node, std::int64_t epoch, int n, std::int64_t max_wait_ms) {
  require_pg(db, "claim");
  return guarded("claim waiting work", [&] {
    Tx tx(db, "");
    // MATERIALIZED: the planner must run the locking subquery once, or it may claim past the LIMIT.
    Stmt q(db,
           "WITH next AS MATERIALIZED (SELECT id FROM queue_entries WHERE state = 'waiting' "
           "AND enqueued_ms > plotq_now_ms() - ?4 ORDER BY id LIMIT ?3 FOR UPDATE SKIP LOCKED), "
           "claimed AS (UPDATE queue_entries q SET state = 'running', node = ?1, epoch = ?2, started_ms = plotq_now_ms() "
           "FROM next WHERE q.id = next.id RETURNING q.id, q.turn_id, q.user_id, q.session_id, q.job_id, q.kind, "
           "q.action, q.origin_node, q.next_seq, q.enqueued_ms, q.started_ms), "
           "owned AS (UPDATE turns t SET node = ?1, node_epoch = ?2 FROM claimed c WHERE t.id = c.turn_id) "
           "SELECT * FROM claimed ORDER BY id");
    q.bind(1, node);
    q.bind(2, epoch);
    q.bind(3, n);
    q.bind(4, max_wait_ms);
    std::vector<Claimed> out;
    while (q.executeStep()) {
      Claimed c;
      c.entry = q.getColumn(0).getInt64();
      c.e.turn_id = q.getColumn(1).getString();
      c.e.user_id = q.getColumn(2).getString();
      c.e.session_id = q.getColumn(3).getString();
      c.e.job_id = q.getColumn(4).getString();
      c.e.kind = q.getColumn(5).getString();
      c.e.action = q.getColumn(6).getString();
      c.e.origin_node = q.getColumn(7).getString();
      c.e.next_seq = q.getColumn(8).getInt64();
      c.enqueued_ms = q.getColumn(9).getInt64();
      c.started_ms = q.getColumn(10).getInt64();
      out.push_back(std::move(c));
    }
    tx.commit();
    return out;
  });
}

std::vector<Standing> standings(Db& db, const std::vector<std::string>& turn_ids) {
  if (turn_ids.empty()) return {};
  return guarded("read queue standings", [&] {
    Stmt q(db,
           "WITH w AS (SELECT turn_id, row_number() OVER (ORDER BY id) AS pos, count(*) OVER () AS total "
           "FROM queue_entries WHERE state = 'waiting') "
           "SELECT f.turn_id, q.state, coalesce(w.pos, 0), coalesce(w.total, 0) FROM unnest(?::text[]) AS f(turn_id) "
           "JOIN queue_entries q ON q.turn_id = f.turn_id LEFT JOIN w ON w.turn_id = f.turn_id");
    q.bind(1, text_array(turn_ids));
    std::vector<Standing> out;
    while (q.executeStep())
      out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString() == "running", q.getColumn(2).getInt(),
                     q.getColumn(3).getInt()});
    return out;
  });
}

QueueTotals totals(Db& db) {
  return guarded("read the queue's totals", [&] {
    Stmt q(db,
           "SELECT (SELECT waiting FROM queue_counts), (SELECT running FROM queue_counts), "
           "(SELECT coalesce(sum(slots), 0) FROM nodes WHERE state = 'live' AND lease_until_ms > plotq_now_ms()), "
           "(SELECT coalesce(sum(capacity), 0) FROM nodes WHERE state = 'live' AND lease_until_ms > plotq_now_ms()), "
           "(SELECT count(*) FROM nodes WHERE state = 'live' AND lease_until_ms > plotq_now_ms()), "
           "(SELECT plotq_now_ms() - min(enqueued_ms) FROM queue_entries WHERE state = 'waiting')");
    QueueTotals t;
    if (q.executeStep()) {
      t.waiting = q.getColumn(0).getInt64();
      t.running = q.getColumn(1).getInt64();
      t.slots = q.getColumn(2).getInt64();
      t.capacity = q.getColumn(3).getInt64();
      t.live_nodes = q.getColumn(4).getInt64();
      t.oldest_wait_ms = detail::opt_int(q.getColumn(5));
    }
    return t;
  });
}

std::vector<StoredEvent> events_after(Db& db, const std::vector<std::pair<std::string, std::int64_t>>& after) {
  if (after.empty()) return {};
  return guarded("read events of followed turns", [&] {
    std::vector<std::string> ids;
    std::vector<std::int64_t> seqs;
    for (const auto& [id, seq] : after) {
      ids.push_back(id);
      seqs.push_back(seq);
    }
    Stmt q(db, "SELECT e.turn_id, e.seq, e.event, e.data FROM unnest(?1::text[], ?2::bigint[]) AS f(turn_id, after) "
               "JOIN turn_events e ON e.turn_id = f.turn_id AND e.seq > f.after ORDER BY e.turn_id, e.seq");
    q.bind(1, text_array(ids));
    q.bind(2, int_array(seqs));
    std::vector<StoredEvent> out;
    while (q.executeStep())
      out.push_back({q.getColumn(0).getString(), q.getColumn(1).getInt64(), q.getColumn(2).getString(),
                     q.getColumn(3).getString()});
    return out;
  });
}

CancelResult cancel(Db& db, const std::string& turn_id, UnixSeconds now) {
  require_pg(db, "cancel");
  return guarded("cancel a queued turn", [&] {
    Tx tx(db, "turn:" + turn_id);
    Stmt out(db, "DELETE FROM queue_entries WHERE turn_id = ? AND state = 'waiting' "
                 "RETURNING turn_id, user_id, session_id, job_id, kind, action");
    out.bind(1, turn_id);
    if (out.executeStep()) {
      std::vector<Ended> ended{ended_from(out, 0, "cancelled")};
      out.reset();
      end_all(db, ended, now);
      tx.commit();
      return CancelResult::withdrawn;
    }
    out.reset();
    Stmt mark(db, "UPDATE queue_entries SET cancel_requested = 1 WHERE turn_id = ? AND state = 'running'");
    mark.bind(1, turn_id);
    CancelResult r = mark.exec() > 0 ? CancelResult::requested : CancelResult::none;
    tx.commit();
    return r;
  });
}

std::vector<CancelRequest> cancel_requests(Db& db, const std::string& node, std::int64_t epoch) {
  return guarded("read cancel requests", [&] {
    Stmt q(db, "SELECT turn_id, job_id FROM queue_entries WHERE state = 'running' AND node = ? AND epoch = ? "
               "AND cancel_requested = 1");
    q.bind(1, node);
    q.bind(2, epoch);
    std::vector<CancelRequest> out;
    while (q.executeStep()) out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString()});
    return out;
  });
}

std::vector<Ended> rescue(Db& db, std::int64_t max_wait_ms, UnixSeconds now) {
  require_pg(db, "rescue");
  return guarded("rescue lost work", [&] {
    Tx tx(db, "");
    Stmt lead(db, "SELECT pg_try_advisory_xact_lock(hashtextextended('plotq:rescue', 0))");
    if (!lead.executeStep() || lead.getColumn(0).getInt64() != 1) return std::vector<Ended>{};
    lead.reset();
    // A node whose fenced write is still in flight holds its lock (plotq_fence, shared): the try
    // fails and it is rescued at the next round, after that write.
    Stmt dead(db, "SELECT id, epoch FROM nodes WHERE state = 'live' AND lease_until_ms <= plotq_now_ms()");
    std::vector<std::pair<std::string, std::int64_t>> lost;
    while (dead.executeStep()) lost.emplace_back(dead.getColumn(0).getString(), dead.getColumn(1).getInt64());
    dead.reset();
    std::vector<Ended> ended;
    for (const auto& [node, epoch] : lost) {
      Stmt mine(db, "SELECT pg_try_advisory_xact_lock(plotq_node_lock(?))");
      mine.bind(1, node);
      if (!mine.executeStep() || !mine.getColumn(0).getInt64()) continue;
      mine.reset();
      Stmt mark(db, "UPDATE nodes SET state = 'lost' WHERE id = ? AND epoch = ? AND state = 'live' "
                    "AND lease_until_ms <= plotq_now_ms()");
      mark.bind(1, node);
      mark.bind(2, epoch);
      if (mark.exec() != 1) continue;
      auto more = lost_work(db, node, epoch + 1);
      ended.insert(ended.end(), more.begin(), more.end());
    }
    // Oldest first by enqueued_ms (its partial index): the scan ends at the first entry that may
    // still wait, however long the queue. A turn's entry goes (its end is its events); a single
    // job's ends with its verdict for the node that took the request.
    Stmt expired(db, "WITH gone AS MATERIALIZED (SELECT id FROM queue_entries WHERE state = 'waiting' "
                     "AND enqueued_ms <= plotq_now_ms() - ?1 FOR UPDATE SKIP LOCKED), "
                     "gone_turns AS (DELETE FROM queue_entries q USING gone WHERE q.id = gone.id AND q.turn_id IS NOT NULL "
                     "RETURNING q.turn_id, q.user_id, q.session_id, q.job_id, q.kind, q.action), "
                     "gone_jobs AS (UPDATE queue_entries q SET state = 'ended', verdict = 'capacity', ended_ms = plotq_now_ms() "
                     "FROM gone WHERE q.id = gone.id AND q.turn_id IS NULL "
                     "RETURNING q.turn_id, q.user_id, q.session_id, q.job_id, q.kind, q.action) "
                     "SELECT * FROM gone_turns UNION ALL SELECT * FROM gone_jobs");
    expired.bind(1, max_wait_ms);
    while (expired.executeStep()) ended.push_back(ended_from(expired, 0, "capacity"));
    expired.reset();
    // Verdicts nobody read: the node that took those requests went away.
    Stmt unread(db, "DELETE FROM queue_entries WHERE state = 'ended' AND ended_ms < plotq_now_ms() - ?");
    unread.bind(1, kVerdictKeepMs);
    unread.exec();
    // A running entry whose turn is done was left behind by its node: the turn's end was stored,
    // the entry's delete (ClusterNode::finished, a store call of its own after it) failed, e.g. on
    // a connection still in a reconnect backoff after an outage. Left, it would hold one of the
    // cluster's slots in every admission (starts_now counts running entries) and in the totals
    // until the node's epoch ends, which for a healthy node is never.
    Stmt stale(db, "DELETE FROM queue_entries q USING turns t WHERE q.turn_id = t.id AND q.state = 'running' "
                   "AND t.status = 'done'");
    stale.exec();
    end_all(db, ended, now);
    tx.commit();
    return ended;
  });
}

void finish_entry(Db& db, const std::string& turn_id, const std::string& node, std::int64_t epoch) {
  // guarded: a failure is a store code (unreachable, fenced), not `internal`.
  guarded("finish a claimed entry", [&] {
    Stmt q(db, "DELETE FROM queue_entries WHERE turn_id = ? AND node = ? AND epoch = ?");
    q.bind(1, turn_id);
    q.bind(2, node);
    q.bind(3, epoch);
    q.send();
  });
}

void end_job(Db& db, std::int64_t entry, const std::string& node, std::int64_t epoch, const std::string& verdict) {
  require_pg(db, "end a job");
  if (verdict.empty()) {
    Stmt q(db, "DELETE FROM queue_entries WHERE id = ? AND state = 'running' AND node = ? AND epoch = ?");
    q.bind(1, entry);
    q.bind(2, node);
    q.bind(3, epoch);
    if (q.exec() != 1) throw StoreError("bad_state", "job entry " + std::to_string(entry) + " is not this node's");
    return;
  }
  Stmt q(db, "UPDATE queue_entries SET state = 'ended', verdict = ?, ended_ms = plotq_now_ms() "
             "WHERE id = ? AND state = 'running' AND node = ? AND epoch = ?");
  q.bind(1, verdict);
  q.bind(2, entry);
  q.bind(3, node);
  q.bind(4, epoch);
  if (q.exec() != 1) throw StoreError("bad_state", "job entry " + std::to_string(entry) + " is not this node's");
}

std::vector<JobOutcome> job_outcomes(Db& db, const std::vector<AwaitedJob>& jobs) {
  require_pg(db, "read jobs' outcomes");
  if (jobs.empty()) return {};
  return guarded("read jobs' outcomes", [&] {
    std::vector<std::int64_t> entries;
    std::vector<std::string> ids, kinds;
    for (const auto& j : jobs) {
      entries.push_back(j.entry);
      ids.push_back(j.job_id);
      kinds.push_back(j.key_kind);
    }
    // One statement for every job this node waits for, in their order: the entry (still queued or
    // running, or ended with its verdict), else the key's kept answer.
    Stmt q(db, "SELECT q.state, q.verdict, i.state, i.response "
               "FROM unnest(?1::bigint[], ?2::text[], ?3::text[]) WITH ORDINALITY AS f(entry, job_id, kind, n) "
               "LEFT JOIN queue_entries q ON q.id = f.entry "
               "LEFT JOIN idempotency i ON i.job_id = f.job_id AND i.kind = f.kind ORDER BY f.n");
    q.bind(1, int_array(entries));
    q.bind(2, text_array(ids));
    q.bind(3, text_array(kinds));
    std::vector<JobOutcome> out;
    std::vector<std::int64_t> read;
    for (std::size_t i = 0; q.executeStep() && i < jobs.size(); ++i) {
      JobOutcome o;
      o.entry = jobs[i].entry;
      if (!q.getColumn(0).isNull()) {
        if (q.getColumn(0).getString() == "ended") {
          o.state = JobOutcome::State::verdict;
          o.text = q.getColumn(1).getString();
          read.push_back(o.entry);
        }  // waiting or running: pending
      } else if (q.getColumn(2).isNull()) {
        // (a key alone: the run that took it over kept nothing, a retry runs it)
        o.state = JobOutcome::State::verdict;
        o.text = jobs[i].entry > 0 ? "internal" : "unavailable";
      } else if (q.getColumn(2).getString() == "done") {
        o.state = JobOutcome::State::answer;
        o.text = q.getColumn(3).getString();
      }  // running: a retry's new claim of the same key; its answer comes the same way
      out.push_back(std::move(o));
    }
    q.reset();
    if (!read.empty()) {  // an ended entry is read once
      Stmt del(db, "DELETE FROM queue_entries WHERE id = ANY(?::bigint[]) AND state = 'ended'");
      del.bind(1, int_array(read));
      del.exec();
    }
    return out;
  });
}

bool take_over_key(Db& db, const std::string& job_id, const std::string& kind, UnixSeconds claimed_by) {
  require_pg(db, "take over a key");
  return guarded("take over an orphan key", [&] {
    Tx tx(db, "idempotency:" + job_id + "/" + kind);
    Stmt key(db, "SELECT 1 FROM idempotency WHERE job_id = ? AND kind = ? AND state = 'running' AND created_at <= ? "
                 "FOR UPDATE");
    key.bind(1, job_id);
    key.bind(2, kind);
    key.bind(3, iso_utc(claimed_by));
    if (!key.executeStep()) return false;
    key.reset();
    Stmt live(db, "SELECT 1 FROM queue_entries WHERE job_id = ? AND turn_id IS NULL AND state IN ('waiting', 'running')");
    live.bind(1, job_id);
    if (live.executeStep()) return false;
    live.reset();
    idempotency::forget(db, job_id, kind);
    tx.commit();
    return true;
  });
}

int cancel_job(Db& db, const std::string& job_id, UnixSeconds now) {
  require_pg(db, "cancel a job");
  return guarded("cancel a queued job", [&] {
    Tx tx(db, "job:" + job_id);
    Stmt out(db, "UPDATE queue_entries SET state = 'ended', verdict = 'cancelled', ended_ms = plotq_now_ms() "
                 "WHERE job_id = ? AND turn_id IS NULL AND state = 'waiting' "
                 "RETURNING turn_id, user_id, session_id, job_id, kind, action");
    out.bind(1, job_id);
    std::vector<Ended> ended;
    while (out.executeStep()) ended.push_back(ended_from(out, 0, "cancelled"));
    out.reset();
    end_all(db, ended, now);
    Stmt mark(db, "UPDATE queue_entries SET cancel_requested = 1 WHERE job_id = ? AND turn_id IS NULL "
                  "AND state = 'running'");
    mark.bind(1, job_id);
    int n = static_cast<int>(ended.size() + mark.exec());
    tx.commit();
    return n;
  });
}

}  // namespace plotq::store::cluster
