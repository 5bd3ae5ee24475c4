#include "store/ledger.hpp"

#include "store/sql_util.hpp"
#include "store/write_tx.hpp"

namespace plotq::store::ledger {
namespace {

constexpr const char* kCols =
    "id, job_id, kind, user_id, session_id, turn_id, theme, created_at, slot_wait_s, wall_s, cpu_s, "
    "exit_code, signal, timed_out, reason, measured, limit_value, max_rss_mb, attempts, outcome, "
    "refusal_code, runtime_id";

LedgerEntry row(Stmt& q) {
  LedgerEntry e;
  e.id = q.getColumn(0).getInt64();
  e.job_id = q.getColumn(1).getString();
  e.kind = detail::enum_of(q.getColumn(2), parse_run_kind);
  e.user_id = q.getColumn(3).getString();
  e.session_id = detail::opt_text(q.getColumn(4));
  e.turn_id = detail::opt_text(q.getColumn(5));
  e.theme = detail::opt_text(q.getColumn(6));
  e.created_at = detail::time_of(q.getColumn(7));
  e.slot_wait_s = q.getColumn(8).getDouble();
  e.wall_s = q.getColumn(9).getDouble();
  e.cpu_s = q.getColumn(10).getDouble();
  if (!q.getColumn(11).isNull()) e.exit_code = q.getColumn(11).getInt();
  if (!q.getColumn(12).isNull()) e.signal = q.getColumn(12).getInt();
  e.timed_out = q.getColumn(13).getInt() != 0;
  e.reason = detail::opt_text(q.getColumn(14));
  e.measured = detail::opt_real(q.getColumn(15));
  e.limit = detail::opt_real(q.getColumn(16));
  e.max_rss_mb = detail::opt_real(q.getColumn(17));
  e.attempts = q.getColumn(18).getInt();
  e.outcome = detail::enum_of(q.getColumn(19), parse_run_outcome);
  e.refusal_code = detail::opt_text(q.getColumn(20));
  e.runtime_id = detail::opt_text(q.getColumn(21));
  return e;
}

}  // namespace

std::int64_t insert(Db& db, const LedgerEntry& e) {
  detail::require_id("job id", e.job_id);
  return guarded("insert ledger entry", [&] {
    WriteTx tx(db, "ledger");  // joins the caller's transaction when one is open
    detail::ensure_user(db, e.user_id, e.created_at);
    Stmt q(db,
        "INSERT INTO runs(job_id, kind, user_id, session_id, turn_id, theme, created_at, "
        "slot_wait_s, wall_s, cpu_s, exit_code, signal, timed_out, reason, measured, "
        "limit_value, max_rss_mb, attempts, outcome, refusal_code, runtime_id) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id");
    q.bind(1, e.job_id);
    detail::bind_sv(q, 2, to_string(e.kind));
    q.bind(3, e.user_id);
    detail::bind_opt(q, 4, e.session_id);
    detail::bind_opt(q, 5, e.turn_id);
    detail::bind_opt(q, 6, e.theme);
    q.bind(7, iso_utc(e.created_at));
    q.bind(8, e.slot_wait_s);
    q.bind(9, e.wall_s);
    q.bind(10, e.cpu_s);
    detail::bind_opt(q, 11, e.exit_code);
    detail::bind_opt(q, 12, e.signal);
    q.bind(13, e.timed_out ? 1 : 0);
    detail::bind_opt(q, 14, e.reason);
    detail::bind_opt(q, 15, e.measured);
    detail::bind_opt(q, 16, e.limit);
    detail::bind_opt(q, 17, e.max_rss_mb);
    q.bind(18, e.attempts);
    detail::bind_sv(q, 19, to_string(e.outcome));
    detail::bind_opt(q, 20, e.refusal_code);
    detail::bind_opt(q, 21, e.runtime_id);
    std::int64_t id = q.executeStep() ? q.getColumn(0).getInt64() : 0;
    q.reset();  // a RETURNING statement is in progress until reset: SQLite would refuse the COMMIT
    tx.commit();
    return id;
  });
}

std::vector<LedgerEntry> query(Db& db, const LedgerQuery& f) {
  return guarded("query ledger", [&] {
    // ?1..?5: since, user, kind, job, limit (an absent filter leaves its number unused).
    std::string sql = std::string("SELECT ") + kCols + " FROM runs WHERE TRUE";
    if (f.since) sql += " AND created_at >= ?1";
    if (f.user_id) sql += " AND user_id = ?2";
    if (f.kind) sql += " AND kind = ?3";
    if (f.job_id) sql += " AND job_id = ?4";
    sql += " ORDER BY created_at DESC, id DESC LIMIT ?5";
    Stmt q(db, sql);
    if (f.since) q.bind(1, iso_utc(*f.since));
    if (f.user_id) q.bind(2, *f.user_id);
    if (f.kind) q.bind(3, std::string(to_string(*f.kind)));
    if (f.job_id) q.bind(4, *f.job_id);
    q.bind(5, f.limit);
    std::vector<LedgerEntry> out;
    while (q.executeStep()) out.push_back(row(q));
    return out;
  });
}

}  // namespace plotq::store::ledger
