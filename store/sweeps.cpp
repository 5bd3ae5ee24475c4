#include "store/sweeps.hpp"

#include "store/sql.hpp"

#include "store/sql_util.hpp"

namespace plotq::store::sweeps {
namespace {

constexpr const char* kSweepCols =
    "id, label, mode, server_url, root, glob, libraries, themes, timeout_s, jobs, state, files_total, "
    "elapsed_s, pid, plotq_version, created_at, updated_at, finished_at, runtime_id";

Sweep sweep_row(Stmt& q) {
  Sweep s;
  s.id = q.getColumn(0).getInt64();
  s.label = q.getColumn(1).getString();
  s.mode = q.getColumn(2).getString();
  s.server_url = detail::opt_text(q.getColumn(3));
  s.root = q.getColumn(4).getString();
  s.glob = q.getColumn(5).getString();
  s.libraries = detail::opt_text(q.getColumn(6));
  s.themes = q.getColumn(7).getString();
  s.timeout_s = q.getColumn(8).getDouble();
  s.jobs = q.getColumn(9).getInt();
  s.state = q.getColumn(10).getString();
  s.files_total = q.getColumn(11).getInt();
  s.elapsed_s = q.getColumn(12).getDouble();
  s.pid = detail::opt_int(q.getColumn(13));
  s.plotq_version = q.getColumn(14).getString();
  s.created_at = detail::time_of(q.getColumn(15));
  s.updated_at = detail::time_of(q.getColumn(16));
  s.finished_at = detail::opt_time(q.getColumn(17));
  s.runtime_id = detail::opt_text(q.getColumn(18));
  return s;
}

constexpr const char* kResultCols =
    "path, theme, sha256, library, outcome, reason, error_class, reason_class, exit_code, signal, width, "
    "height, png_bytes, detail, wall_s, cpu_s, max_rss_mb, created_at, canvas";

std::optional<int> opt_int32(const Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt();
}

SweepResult result_row(Stmt& q) {
  SweepResult r;
  r.path = q.getColumn(0).getString();
  r.theme = q.getColumn(1).getString();
  r.sha256 = q.getColumn(2).getString();
  r.library = q.getColumn(3).getString();
  r.outcome = detail::enum_of(q.getColumn(4), parse_sweep_outcome);
  r.reason = q.getColumn(5).getString();
  r.error_class = detail::opt_text(q.getColumn(6));
  r.reason_class = q.getColumn(7).getString();
  r.exit_code = opt_int32(q.getColumn(8));
  r.signal = opt_int32(q.getColumn(9));
  r.width = opt_int32(q.getColumn(10));
  r.height = opt_int32(q.getColumn(11));
  r.png_bytes = detail::opt_int(q.getColumn(12));
  r.detail = detail::opt_text(q.getColumn(13));
  r.wall_s = q.getColumn(14).getDouble();
  r.cpu_s = q.getColumn(15).getDouble();
  r.max_rss_mb = detail::opt_real(q.getColumn(16));
  r.created_at = detail::time_of(q.getColumn(17));
  r.canvas = detail::opt_text(q.getColumn(18));
  return r;
}

}  // namespace

bool valid_label(const std::string& label) {
  if (label.empty() || label.size() > 64) return false;
  for (char c : label) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::int64_t create(Db& db, const Sweep& s, UnixSeconds now) {
  if (!valid_label(s.label)) throw StoreError("invalid", "sweep label must be 1..64 of [A-Za-z0-9._-]");
  return guarded("create sweep", [&] {
    Stmt q(db,
        "INSERT INTO sweeps(label, mode, server_url, root, glob, libraries, themes, timeout_s, "
        "jobs, state, files_total, elapsed_s, pid, plotq_version, created_at, updated_at, runtime_id) "
        "VALUES (?,?,?,?,?,?,?,?,?,'running',?,0,?,?,?,?,?) RETURNING id");
    q.bind(1, s.label);
    q.bind(2, s.mode);
    detail::bind_opt(q, 3, s.server_url);
    q.bind(4, s.root);
    q.bind(5, s.glob);
    detail::bind_opt(q, 6, s.libraries);
    q.bind(7, s.themes);
    q.bind(8, s.timeout_s);
    q.bind(9, s.jobs);
    q.bind(10, s.files_total);
    detail::bind_opt(q, 11, s.pid);
    q.bind(12, s.plotq_version);
    q.bind(13, iso_utc(now));
    q.bind(14, iso_utc(now));
    detail::bind_opt(q, 15, s.runtime_id);
    return q.executeStep() ? q.getColumn(0).getInt64() : std::int64_t(0);
  });
}

std::optional<Sweep> find(Db& db, const std::string& label) {
  return guarded("find sweep", [&]() -> std::optional<Sweep> {
    Stmt q(db, std::string("SELECT ") + kSweepCols + " FROM sweeps WHERE label = ?");
    q.bind(1, label);
    if (!q.executeStep()) return std::nullopt;
    return sweep_row(q);
  });
}

std::vector<Sweep> list(Db& db) {
  return guarded("list sweeps", [&] {
    Stmt q(db, std::string("SELECT ") + kSweepCols + " FROM sweeps ORDER BY created_at DESC, id DESC");
    std::vector<Sweep> out;
    while (q.executeStep()) out.push_back(sweep_row(q));
    return out;
  });
}

void begin_session(Db& db, std::int64_t sweep_id, int files_total, int jobs, std::int64_t pid, UnixSeconds now) {
  guarded("begin sweep session", [&] {
    Stmt q(db,
        "UPDATE sweeps SET state = 'running', finished_at = NULL, files_total = ?, jobs = ?, "
        "pid = ?, updated_at = ? WHERE id = ?");
    q.bind(1, files_total);
    q.bind(2, jobs);
    q.bind(3, static_cast<std::int64_t>(pid));
    q.bind(4, iso_utc(now));
    q.bind(5, static_cast<std::int64_t>(sweep_id));
    if (q.exec() != 1) throw StoreError("not_found", "no sweep with id " + std::to_string(sweep_id));
  });
}

void end_session(Db& db, std::int64_t sweep_id, const std::string& state, double add_elapsed_s, UnixSeconds now) {
  if (state != "interrupted" && state != "done")
    throw StoreError("invalid", "a sweep session ends interrupted or done, not '" + state + "'");
  if (!(add_elapsed_s >= 0)) throw StoreError("invalid", "elapsed time must be >= 0");
  guarded("end sweep session", [&] {
    Stmt q(db,
        "UPDATE sweeps SET state = ?, finished_at = ?, elapsed_s = elapsed_s + ?, updated_at = ? "
        "WHERE id = ?");
    q.bind(1, state);
    if (state == "done") q.bind(2, iso_utc(now)); else q.bind(2);
    q.bind(3, add_elapsed_s);
    q.bind(4, iso_utc(now));
    q.bind(5, static_cast<std::int64_t>(sweep_id));
    if (q.exec() != 1) throw StoreError("not_found", "no sweep with id " + std::to_string(sweep_id));
  });
}

void record_file(Db& db, std::int64_t sweep_id, const std::vector<SweepResult>& themes, UnixSeconds now) {
  if (themes.empty()) throw StoreError("invalid", "a recorded file needs at least one theme");
  guarded("record sweep file", [&] {
    Tx tx(db, "");  // inserts only
    Stmt q(db,
        "INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, "
        "error_class, exit_code, signal, width, height, png_bytes, detail, wall_s, cpu_s, "
        "max_rss_mb, created_at, canvas) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const SweepResult& r : themes) {
      q.reset();
      q.bind(1, static_cast<std::int64_t>(sweep_id));
      q.bind(2, r.path);
      q.bind(3, r.theme);
      q.bind(4, r.sha256);
      q.bind(5, r.library);
      q.bind(6, std::string(to_string(r.outcome)));
      q.bind(7, r.reason);
      detail::bind_opt(q, 8, r.error_class);
      detail::bind_opt(q, 9, r.exit_code);
      detail::bind_opt(q, 10, r.signal);
      detail::bind_opt(q, 11, r.width);
      detail::bind_opt(q, 12, r.height);
      detail::bind_opt(q, 13, r.png_bytes);
      detail::bind_opt(q, 14, r.detail);
      q.bind(15, r.wall_s);
      q.bind(16, r.cpu_s);
      detail::bind_opt(q, 17, r.max_rss_mb);
      q.bind(18, iso_utc(now));
      detail::bind_opt(q, 19, r.canvas);
      q.exec();
    }
    Stmt u(db, "UPDATE sweeps SET updated_at = ? WHERE id = ?");
    u.bind(1, iso_utc(now));
    u.bind(2, static_cast<std::int64_t>(sweep_id));
    u.exec();
    tx.commit();
  });
}

std::vector<SweepResult> results(Db& db, std::int64_t sweep_id) {
  return guarded("read sweep results", [&] {
    Stmt q(db, std::string("SELECT ") + kResultCols +
                                      " FROM sweep_results WHERE sweep_id = ? ORDER BY path, theme");
    q.bind(1, static_cast<std::int64_t>(sweep_id));
    std::vector<SweepResult> out;
    while (q.executeStep()) out.push_back(result_row(q));
    return out;
  });
}

std::vector<std::string> finished_paths(Db& db, std::int64_t sweep_id) {
  return guarded("read finished sweep files", [&] {
    Stmt q(db, "SELECT DISTINCT path FROM sweep_results WHERE sweep_id = ? ORDER BY path");
    q.bind(1, static_cast<std::int64_t>(sweep_id));
    std::vector<std::string> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  });
}

bool remove(Db& db, const std::string& label) {
  return guarded("remove sweep", [&] {
    Stmt q(db, "DELETE FROM sweeps WHERE label = ?");
    q.bind(1, label);
    return q.exec() == 1;
  });
}

}  // namespace plotq::store::sweeps
