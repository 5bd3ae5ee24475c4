#include "store/idempotency.hpp"

#include "store/sql.hpp"

#include "common/sha256.hpp"
#include "store/sql_util.hpp"
#include "store/write_tx.hpp"

namespace plotq::store {

std::string_view to_string(ClaimState s) {
  switch (s) {
    case ClaimState::started: return "started";
    case ClaimState::running_same: return "running_same";
    case ClaimState::done_same: return "done_same";
    case ClaimState::conflict: return "conflict";
  }
  return "started";
}

namespace idempotency {

std::string kind_for_themes(const std::vector<std::string>& themes) {
  std::string k;
  for (const auto& t : themes) {
    if (!k.empty()) k += ',';
    k += t;
  }
  return k;
}

std::string fingerprint(std::string_view request_json) { return sha256_hex(request_json); }

Claim begin(Db& db, const std::string& job_id, const std::string& kind, const std::string& fp,
            UnixSeconds now) {
  detail::require_id("job id", job_id);
  return guarded("claim idempotency key", [&] {
    Db& s = db;
    Tx tx(s, "idempotency:" + job_id + "/" + kind);  // the key is read, then written
    Stmt q(s, "SELECT fingerprint, state, response FROM idempotency WHERE job_id = ? AND kind = ?");
    q.bind(1, job_id);
    q.bind(2, kind);
    Claim c;
    if (q.executeStep()) {
      if (q.getColumn(0).getString() != fp) {
        c.state = ClaimState::conflict;
      } else if (q.getColumn(1).getString() == "running") {
        c.state = ClaimState::running_same;
      } else {
        c.state = ClaimState::done_same;
        c.response = q.getColumn(2).getString();
      }
      return c;
    }
    Stmt ins(s,
        "INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) "
        "VALUES (?, ?, ?, 'running', ?) RETURNING id");
    ins.bind(1, job_id);
    ins.bind(2, kind);
    ins.bind(3, fp);
    ins.bind(4, iso_utc(now));
    if (!ins.executeStep()) throw StoreError("internal", "claim returned no row");
    c.row = ins.getColumn(0).getInt64();
    ins.reset();
    tx.commit();
    return c;
  });
}

void complete(Db& db, const std::string& job_id, const std::string& kind, const std::string& response_json,
              UnixSeconds now) {
  guarded("complete idempotency key", [&] {
    Db& s = db;
    WriteTx tx(db, "idempotency");  // joins the caller's transaction (the run's ledger row) when one is open
    Stmt u(s,
        "UPDATE idempotency SET state = 'done', response = ?, finished_at = ? "
        "WHERE job_id = ? AND kind = ? AND state = 'running'");
    u.bind(1, response_json);
    u.bind(2, iso_utc(now));
    u.bind(3, job_id);
    u.bind(4, kind);
    if (u.exec() == 0) {
      Stmt e(s, "SELECT state FROM idempotency WHERE job_id = ? AND kind = ?");
      e.bind(1, job_id);
      e.bind(2, kind);
      if (!e.executeStep()) throw StoreError("not_found", "no idempotency record for job " + job_id);
      throw StoreError("bad_state", "idempotency record for job " + job_id + " is already done");
    }
    tx.commit();
  });
}

std::int64_t prune_done(Db& db, UnixSeconds finished_before, int batch) {
  if (batch <= 0) return 0;
  return guarded("prune idempotency answers", [&] {
    // One statement is its own transaction; LIMIT bounds how long it holds the write lock.
    Stmt q(db,
        "DELETE FROM idempotency WHERE id IN ("
        "SELECT id FROM idempotency WHERE state = 'done' AND finished_at < ? "
        "ORDER BY finished_at, id LIMIT ?)");
    q.bind(1, iso_utc(finished_before));
    q.bind(2, batch);
    return std::int64_t(q.exec());
  });
}

bool forget(Db& db, const std::string& job_id, const std::string& kind) {
  return guarded("forget idempotency key", [&] {
    Stmt q(db, "DELETE FROM idempotency WHERE job_id = ? AND kind = ? AND state = 'running'");
    q.bind(1, job_id);
    q.bind(2, kind);
    return q.exec() == 1;
  });
}

std::int64_t forget_running(Db& db) {
  return guarded("forget running idempotency keys", [&] {
    Stmt q(db, "DELETE FROM idempotency WHERE state = 'running'");
    return q.exec();
  });
}

}  // namespace idempotency
}  // namespace plotq::store
