#include "store/retention.hpp"

#include "store/sql.hpp"
#include "store/sql.hpp"

#include <functional>
#include <vector>

#include "common/settings.hpp"
#include "store/error.hpp"
#include "store/idempotency.hpp"
#include "store/sweep_images.hpp"

namespace plotq::store {

void register_settings(Settings& s, RetentionPolicy& p) {
  // Two days at least: v_runs_recent, v_ledger_by_user_today and `plotq ledger`'s default read the
  // last 24 hours / the UTC day, which must never lose a row to the prune. Quotas are counted in
  // quota_days, not from the ledger, so no longer window binds this.
  s.add("PLOTQ_RETAIN_LEDGER_DAYS", &p.ledger_days,
        "days a ledger row (runs) is kept; older ones are pruned (>= 2: the admin views read the last day)")
      .range(2, 36'600);
  s.add("PLOTQ_RETAIN_TURN_EVENTS_DAYS", &p.turn_events_days,
        "days after a chat turn ended that its SSE events and plots are kept for replays; then pruned")
      .range(1, 36'600);
  s.add("PLOTQ_RETAIN_SESSION_IDLE_DAYS", &p.session_idle_days,
        "days without a turn or dataset change after which an open session is closed (reason idle)")
      .range(1, 36'600);
  s.add("PLOTQ_RETAIN_DATASETS_DAYS", &p.datasets_days,
        "days after a session closed that its dataset versions are kept; then pruned")
      .range(1, 36'600);
  // Declared here, not in store/db.cpp, since the retention prune deletes the expired answers;
  // the name stays what deployments already set.
  s.add("PLOTQ_IDEMPOTENCY_KEEP_HOURS", &p.idempotency_hours,
        "hours a /run-data or /render answer is kept for its retries (a retry within them never runs the code again)")
      .range(1, 24 * 366);
  s.add("PLOTQ_RETAIN_SWEEPS_DAYS", &p.sweeps_days,
        "days after its last update that a catalogue sweep and its results are kept (plotq sweep diff baselines)")
      .range(1, 36'600);
  s.add("PLOTQ_RETAIN_BATCH", &p.batch,
        "rows one prune transaction deletes at most (the write lock is held for one batch)")
      .range(1, 100'000);
}

RetentionPolicy retention_from_env() { return load_from_env<RetentionPolicy>(register_settings); }

std::string_view to_string(Family f) {
  switch (f) {
    case Family::ledger: return "ledger";
    case Family::turns: return "turns";
    case Family::idle: return "idle";
    case Family::datasets: return "datasets";
    case Family::idempotency: return "idempotency";
    case Family::sweeps: return "sweeps";
  }
  return "ledger";
}

UnixSeconds Cutoffs::of(Family f) const {
  switch (f) {
    case Family::ledger: return ledger;
    case Family::turns: return turns;
    case Family::idle: return idle;
    case Family::datasets: return datasets;
    case Family::idempotency: return idempotency;
    case Family::sweeps: return sweeps;
  }
  return 0;
}

Cutoffs cutoffs_at(const RetentionPolicy& p, UnixSeconds now) {
  constexpr UnixSeconds kDay = 86'400;
  Cutoffs c;
  c.ledger = now - p.ledger_days * kDay;
  c.turns = now - p.turn_events_days * kDay;
  c.idle = now - p.session_idle_days * kDay;
  c.datasets = now - p.datasets_days * kDay;
  c.idempotency = now - UnixSeconds(p.idempotency_hours) * 3600;
  c.sweeps = now - p.sweeps_days * kDay;
  return c;
}

void add_to(Tally& into, const Tally& more) {
  for (const auto& [table, n] : more)
    if (n > 0) into[table] += n;
}

std::int64_t total(const Tally& t) {
  std::int64_t n = 0;
  for (const auto& [table, rows] : t) n += rows;
  return n;
}

namespace {

// The SQL keeps to what PostgreSQL also runs (row values, IN (SELECT ... LIMIT), partial indexes):
// no rowid, no DELETE ... LIMIT.

// An open session is idle when it is older than the cutoff and nothing happened in it since: no
// turn started or ended, none still running, no dataset version made or confirmed.
constexpr const char* kIdleWhere =
    "s.closed_at IS NULL AND s.created_at < ?1 "
    "AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id "
    "  AND (t.created_at >= ?1 OR t.status <> 'done' OR t.ended_at >= ?1)) "
    "AND NOT EXISTS (SELECT 1 FROM dataset_versions v WHERE v.session_id = s.id "
    "  AND (v.created_at >= ?1 OR v.confirmed_at >= ?1))";

// A closed session can still take a paste: its dataset stays until its newest version is old too.
constexpr const char* kNoRecentVersion =
    "NOT EXISTS (SELECT 1 FROM dataset_versions r WHERE r.session_id = s.id AND r.created_at >= ?1)";

std::int64_t count(Db& db, const std::string& sql, UnixSeconds cutoff) {
  Stmt q(db, sql);
  q.bind(1, iso_utc(cutoff));
  q.executeStep();
  return q.getColumn(0).getInt64();
}

std::vector<std::string> ids(Db& db, const std::string& sql, UnixSeconds cutoff, int limit) {
  Stmt q(db, sql);
  q.bind(1, iso_utc(cutoff));
  q.bind(2, limit);
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).getString());
  return out;
}

// Runs sql with ?1 = key, ?2 = limit; the rows it changed.
std::int64_t exec_for(Db& db, const char* sql, const std::string& key, std::int64_t limit = 0) {
  Stmt q(db, sql);
  q.bind(1, key);
  if (limit > 0) q.bind(2, limit);
  return q.exec();
}

StepResult step_ledger(Db& db, UnixSeconds cutoff, int batch) {
  Stmt q(db,
      "DELETE FROM runs WHERE id IN "
      "(SELECT id FROM runs WHERE created_at < ?1 ORDER BY created_at, id LIMIT ?2)");
  q.bind(1, iso_utc(cutoff));
  q.bind(2, batch);
  std::int64_t n = q.exec();
  return {{{"runs", n}}, n >= batch};
}

StepResult step_turns(Db& db, UnixSeconds cutoff, int batch, UnixSeconds now) {
  StepResult r;
  auto turns = ids(db,
                   "SELECT id FROM turns WHERE status = 'done' AND events_pruned_at IS NULL AND ended_at < ?1 "
                   "ORDER BY ended_at, id LIMIT ?2",
                   cutoff, batch);
  std::int64_t budget = batch;
  const std::string mark = iso_utc(now);
  for (const auto& id : turns) {
    if (budget <= 0) return r.more = true, r;
    std::int64_t n = exec_for(db,
                              "DELETE FROM turn_events WHERE turn_id = ?1 AND seq IN "
                              "(SELECT seq FROM turn_events WHERE turn_id = ?1 ORDER BY seq LIMIT ?2)",
                              id, budget);
    r.rows["turn_events"] += n;
    if (n >= budget) return r.more = true, r;  // maybe more of this turn: the next step goes on
    r.rows["turn_plots"] += exec_for(db, "DELETE FROM turn_plots WHERE turn_id = ?1", id);
    Stmt m(db, "UPDATE turns SET events_pruned_at = ?2 WHERE id = ?1");
    m.bind(1, id);
    m.bind(2, mark);
    m.exec();
    budget -= n + 1;
  }
  r.more = std::int64_t(turns.size()) >= batch;
  return r;
}

StepResult step_idle(Db& db, UnixSeconds cutoff, int batch, UnixSeconds now) {
  auto sessions = ids(db, std::string("SELECT s.id FROM sessions s WHERE ") + kIdleWhere +
                              " ORDER BY s.created_at, s.id LIMIT ?2",
                      cutoff, batch);
  StepResult r;
  const std::string at = iso_utc(now);
  for (const auto& id : sessions) {
    Stmt q(db,
        "UPDATE sessions SET closed_at = ?2, close_reason = 'idle' WHERE id = ?1 AND closed_at IS NULL");
    q.bind(1, id);
    q.bind(2, at);
    r.rows["sessions"] += q.exec();
  }
  r.more = std::int64_t(sessions.size()) >= batch;
  return r;
}

// Deletes whole entities in the given order within a batch of rows: an entity's children
// (`delete_children`: ?1 the key, ?2 at most what the batch has left), then, once none is left,
// the entity itself (`finish`, one row). A batch that ends inside an entity leaves the rest of it
// to the next step.
StepResult prune_entities(Db& db, const std::vector<std::string>& keys, int batch, const char* child_table,
                          const char* delete_children, const std::function<void(const std::string&, StepResult&)>& finish) {
  StepResult r;
  std::int64_t budget = batch;
  for (const auto& key : keys) {
    if (budget <= 0) return r.more = true, r;
    std::int64_t n = exec_for(db, delete_children, key, budget);
    r.rows[child_table] += n;
    if (n >= budget) return r.more = true, r;
    finish(key, r);
    budget -= n + 1;
  }
  r.more = std::int64_t(keys.size()) >= batch;
  return r;
}

StepResult step_datasets(Db& db, UnixSeconds cutoff, int batch, UnixSeconds now) {
  auto sessions = ids(db,
                      "SELECT s.id FROM sessions s WHERE s.closed_at IS NOT NULL AND s.data_pruned_at IS NULL "
                      "AND s.closed_at < ?1 AND " + std::string(kNoRecentVersion) + " ORDER BY s.closed_at, s.id LIMIT ?2",
                      cutoff, batch);
  const std::string mark = iso_utc(now);
  // Newest versions first: a version's parent is older (parent_version < version), so what stays
  // never names a deleted parent, even when a batch ends inside a session.
  return prune_entities(
      db, sessions, batch, "dataset_versions",
      "DELETE FROM dataset_versions WHERE session_id = ?1 AND version IN "
      "(SELECT version FROM dataset_versions WHERE session_id = ?1 ORDER BY version DESC LIMIT ?2)",
      [&](const std::string& id, StepResult& r) {
        r.rows["datasets"] += exec_for(db, "DELETE FROM datasets WHERE session_id = ?1", id);
        Stmt m(db, "UPDATE sessions SET data_pruned_at = ?2 WHERE id = ?1");
        m.bind(1, id);
        m.bind(2, mark);
        m.exec();
      });
}

StepResult step_sweeps(Db& db, UnixSeconds cutoff, int batch) {
  auto sweeps = ids(db, "SELECT id FROM sweeps WHERE updated_at < ?1 ORDER BY updated_at, id LIMIT ?2", cutoff, batch);
  return prune_entities(
      db, sweeps, batch, "sweep_results",
      "DELETE FROM sweep_results WHERE sweep_id = ?1 AND (path, theme) IN "
      "(SELECT path, theme FROM sweep_results WHERE sweep_id = ?1 ORDER BY path, theme LIMIT ?2)",
      [&](const std::string& id, StepResult& r) {
        r.rows["sweeps"] += exec_for(db, "DELETE FROM sweeps WHERE id = ?1", id);
      });
}

}  // namespace

Tally pending(Db& db, const Cutoffs& c) {
  return guarded("count what retention would prune", [&] {
    Tally t;
    auto put = [&t](const char* table, std::int64_t n) {
      if (n > 0) t[table] = n;
    };
    put("runs", count(db, "SELECT count(*) FROM runs WHERE created_at < ?1", c.ledger));
    const std::string ended =
        " JOIN turns t ON t.id = x.turn_id WHERE t.status = 'done' AND t.events_pruned_at IS NULL AND t.ended_at < ?1";
    put("turn_events", count(db, "SELECT count(*) FROM turn_events x" + ended, c.turns));
    put("turn_plots", count(db, "SELECT count(*) FROM turn_plots x" + ended, c.turns));
    put("sessions", count(db, std::string("SELECT count(*) FROM sessions s WHERE ") + kIdleWhere, c.idle));
    const std::string closed = " JOIN sessions s ON s.id = x.session_id WHERE s.closed_at < ?1 AND s.data_pruned_at IS NULL AND " +
                               std::string(kNoRecentVersion);
    put("dataset_versions", count(db, "SELECT count(*) FROM dataset_versions x" + closed, c.datasets));
    put("datasets", count(db, "SELECT count(*) FROM datasets x" + closed, c.datasets));
    put("idempotency", count(db, "SELECT count(*) FROM idempotency WHERE state = 'done' AND finished_at < ?1",
                             c.idempotency));
    put("sweep_results", count(db,
                               "SELECT count(*) FROM sweep_results r JOIN sweeps w ON w.id = r.sweep_id "
                               "WHERE w.updated_at < ?1",
                               c.sweeps));
    put("sweeps", count(db, "SELECT count(*) FROM sweeps WHERE updated_at < ?1", c.sweeps));
    return t;
  });
}

StepResult prune_step(Db& db, Family f, const Cutoffs& c, int batch, UnixSeconds now) {
  if (batch <= 0) return {};
  StepResult r = guarded(std::string("prune ") + std::string(to_string(f)), [&]() -> StepResult {
    Tx tx(db, "retention");  // one prune step at a time, whichever node runs it
    StepResult out;
    switch (f) {
      case Family::ledger: out = step_ledger(db, c.ledger, batch); break;
      case Family::turns: out = step_turns(db, c.turns, batch, now); break;
      case Family::idle: out = step_idle(db, c.idle, batch, now); break;
      case Family::datasets: out = step_datasets(db, c.datasets, batch, now); break;
      case Family::idempotency: {
        std::int64_t n = idempotency::prune_done(db, c.idempotency, batch);  // one statement: joins tx
        out = {{{"idempotency", n}}, n >= batch};
        break;
      }
      case Family::sweeps: out = step_sweeps(db, c.sweeps, batch); break;
    }
    tx.commit();
    return out;
  });
  // After the commit, outside the write lock, and only when sweeps went (plotqd runs this step on
  // its loop every round: an idle round touches no directory): their thumbnail directories, and
  // any a crash left without a row. A failure here is the next such step's to retry.
  if (f == Family::sweeps && r.rows.count("sweeps") && r.rows["sweeps"] > 0) {
    try {
      remove_orphan_sweep_images(db);
    } catch (const StoreError&) {
    }
  }
  for (auto it = r.rows.begin(); it != r.rows.end();) it = it->second > 0 ? std::next(it) : r.rows.erase(it);
  return r;
}

Tally prune_all(Db& db, const Cutoffs& c, int batch, UnixSeconds now) {
  Tally t;
  for (Family f : kFamilies) {
    for (;;) {
      StepResult r = prune_step(db, f, c, batch, now);
      add_to(t, r.rows);
      if (!r.more) break;
    }
  }
  return t;
}

}  // namespace plotq::store
