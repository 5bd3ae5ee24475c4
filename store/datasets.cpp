#include "store/datasets.hpp"

#include "store/sql.hpp"

#include "store/sql_util.hpp"

namespace plotq::store::datasets {
namespace {

constexpr const char* kInfoCols =
    "session_id, version, source, parent_version, rows, cols, bytes, confirmed, confirmed_at, "
    "turn_id, job_id, created_at";

DatasetVersionInfo info_row(Stmt& q) {
  DatasetVersionInfo v;
  v.session_id = q.getColumn(0).getString();
  v.version = q.getColumn(1).getInt64();
  v.source = detail::enum_of(q.getColumn(2), parse_dataset_source);
  v.parent_version = detail::opt_int(q.getColumn(3));
  v.rows = q.getColumn(4).getInt64();
  v.cols = q.getColumn(5).getInt64();
  v.bytes = q.getColumn(6).getInt64();
  v.confirmed = q.getColumn(7).getInt() != 0;
  v.confirmed_at = detail::opt_time(q.getColumn(8));
  v.turn_id = detail::opt_text(q.getColumn(9));
  v.job_id = detail::opt_text(q.getColumn(10));
  v.created_at = detail::time_of(q.getColumn(11));
  return v;
}

std::int64_t latest(Db& s, const std::string& session_id) {
  Stmt q(s, "SELECT coalesce(max(version), 0) FROM dataset_versions WHERE session_id = ?");
  q.bind(1, session_id);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

}  // namespace

DatasetVersionInfo add_next_version(Db& db, const NewDatasetVersion& v, UnixSeconds now) {
  return guarded("add dataset version", [&] {
    Db& s = db;
    Tx tx(s, "datasets:" + v.session_id);  // the next version is read, then written
    Stmt ds(s, "INSERT INTO datasets(session_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING");
    ds.bind(1, v.session_id);
    ds.bind(2, iso_utc(now));
    ds.exec();
    // A paste into a closed session whose dataset retention already pruned: the new versions are
    // the retention prune's again (store/retention.cpp keeps them until they are old).
    Stmt unmark(s, "UPDATE sessions SET data_pruned_at = NULL WHERE id = ? AND data_pruned_at IS NOT NULL");
    unmark.bind(1, v.session_id);
    unmark.exec();
    std::int64_t next = latest(s, v.session_id) + 1;
    Stmt q(s,
        "INSERT INTO dataset_versions(session_id, version, source, csv, code, parent_version, "
        "rows, cols, bytes, turn_id, job_id, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?12, ?9, ?10, ?11)");
    q.bind(1, v.session_id);
    q.bind(2, static_cast<std::int64_t>(next));
    detail::bind_sv(q, 3, to_string(v.source));
    q.bind(4, v.csv);
    detail::bind_opt(q, 5, v.code);
    detail::bind_opt(q, 6, v.parent_version);
    q.bind(7, static_cast<std::int64_t>(v.rows));
    q.bind(8, static_cast<std::int64_t>(v.cols));
    detail::bind_opt(q, 9, v.turn_id);
    detail::bind_opt(q, 10, v.job_id);
    q.bind(11, iso_utc(now));
    // The CSV's size in bytes, counted here (the schema's CHECK compares it with the text's): SQLite
    // counts bytes as length(CAST(x AS BLOB)), PostgreSQL as octet_length(x).
    q.bind(12, static_cast<std::int64_t>(v.csv.size()));
    q.exec();
    tx.commit();
    DatasetVersionInfo info;
    info.session_id = v.session_id;
    info.version = next;
    info.source = v.source;
    info.parent_version = v.parent_version;
    info.rows = v.rows;
    info.cols = v.cols;
    info.bytes = std::int64_t(v.csv.size());
    info.turn_id = v.turn_id;
    info.job_id = v.job_id;
    info.created_at = now;
    return info;
  });
}

std::vector<DatasetVersionInfo> list(Db& db, const std::string& session_id) {
  return guarded("list dataset versions", [&] {
    std::vector<DatasetVersionInfo> out;
    Stmt q(db, std::string("SELECT ") + kInfoCols +
                                      " FROM dataset_versions WHERE session_id = ? ORDER BY version");
    q.bind(1, session_id);
    while (q.executeStep()) out.push_back(info_row(q));
    return out;
  });
}

std::optional<DatasetVersion> get(Db& db, const std::string& session_id, std::int64_t version) {
  return guarded("get dataset version", [&]() -> std::optional<DatasetVersion> {
    Stmt q(db, std::string("SELECT ") + kInfoCols +
                                      ", csv, code FROM dataset_versions WHERE session_id = ?1 AND "
                                      "version = (CASE WHEN ?2 = 0 THEN (SELECT max(version) FROM "
                                      "dataset_versions WHERE session_id = ?1) ELSE ?2 END)");
    q.bind(1, session_id);
    q.bind(2, static_cast<std::int64_t>(version));
    if (!q.executeStep()) return std::nullopt;
    DatasetVersion v;
    static_cast<DatasetVersionInfo&>(v) = info_row(q);
    v.csv = q.getColumn(12).getString();
    v.code = detail::opt_text(q.getColumn(13));
    return v;
  });
}

bool confirm(Db& db, const std::string& session_id, std::int64_t version, UnixSeconds now) {
  return guarded("confirm dataset version", [&] {
    Stmt q(db,
        "UPDATE dataset_versions SET confirmed = 1, confirmed_at = coalesce(confirmed_at, ?) "
        "WHERE session_id = ? AND version = ?");
    q.bind(1, iso_utc(now));
    q.bind(2, session_id);
    q.bind(3, static_cast<std::int64_t>(version));
    return q.exec() == 1;
  });
}

std::int64_t latest_version(Db& db, const std::string& session_id) {
  return guarded("latest dataset version", [&] { return latest(db, session_id); });
}

}  // namespace plotq::store::datasets
