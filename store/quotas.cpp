#include "store/quotas.hpp"

#include "store/sql.hpp"

#include "store/sql_util.hpp"

namespace plotq::store {

std::string_view to_string(BookVerdict v) {
  switch (v) {
    case BookVerdict::booked: return "booked";
    case BookVerdict::day_limit: return "day_limit";
    case BookVerdict::minute_limit: return "minute_limit";
  }
  return "booked";
}

std::string limit_name(Counter c, bool per_minute) {
  return std::string(to_string(c)) + (per_minute ? "_per_minute" : "_per_day");
}

namespace quotas {

std::string quota_lock(const std::string& user_id) { return "quota:" + user_id; }

namespace {

// Both counts in one statement (one round trip on PostgreSQL); a missing row counts 0.
CounterCounts read_counts(Db& s, const std::string& user, std::string_view counter,
                          UnixSeconds now) {
  Stmt q(s,
      "SELECT (SELECT count FROM quota_days WHERE user_id = ?1 AND counter = ?2 AND day = ?3), "
      "(SELECT count FROM quota_minutes WHERE user_id = ?1 AND counter = ?2 AND minute = ?4)");
  q.bind(1, user);
  detail::bind_sv(q, 2, counter);
  q.bind(3, utc_day(now));
  q.bind(4, utc_minute(now));
  CounterCounts c;
  if (q.executeStep()) {
    c.day = q.getColumn(0).getInt64();
    c.minute = q.getColumn(1).getInt64();
  }
  return c;
}

}  // namespace

BookVerdict verdict(const CounterCounts& c, std::optional<std::int64_t> day_limit,
                    std::optional<std::int64_t> minute_limit) {
  if (day_limit && c.day + 1 > *day_limit) return BookVerdict::day_limit;
  if (minute_limit && c.minute + 1 > *minute_limit) return BookVerdict::minute_limit;
  return BookVerdict::booked;
}

Booking check(Db& db, const std::string& user_id, Counter counter, UnixSeconds now,
              std::optional<std::int64_t> day_limit, std::optional<std::int64_t> minute_limit) {
  detail::require_id("user id", user_id);
  return guarded("check quota", [&] {
    CounterCounts c = read_counts(db, user_id, to_string(counter), now);
    Booking b;
    b.day_count = c.day;
    b.minute_count = c.minute;
    b.verdict = verdict(c, day_limit, minute_limit);
    return b;
  });
}

void add(Db& db, const std::string& user_id, Counter counter, UnixSeconds now) {
  detail::require_id("user id", user_id);
  guarded("add quota", [&] {
    std::string_view name = to_string(counter);
    // Nothing here is read back: on PostgreSQL the four go out with the commit (Stmt::send).
    detail::ensure_user(db, user_id, now);
    // The counted column named with its table: PostgreSQL reads a bare `count` here as ambiguous
    // (EXCLUDED has one too).
    Stmt d(db,
        "INSERT INTO quota_days(user_id, counter, day, count) VALUES (?, ?, ?, 1) "
        "ON CONFLICT(user_id, counter, day) DO UPDATE SET count = quota_days.count + 1");
    d.bind(1, user_id);
    detail::bind_sv(d, 2, name);
    d.bind(3, utc_day(now));
    d.send();
    Stmt m(db,
        "INSERT INTO quota_minutes(user_id, counter, minute, count) VALUES (?, ?, ?, 1) "
        "ON CONFLICT(user_id, counter, minute) DO UPDATE SET count = quota_minutes.count + 1");
    m.bind(1, user_id);
    detail::bind_sv(m, 2, name);
    m.bind(3, utc_minute(now));
    m.send();
    Stmt prune(db, "DELETE FROM quota_minutes WHERE user_id = ? AND counter = ? AND minute < ?");
    prune.bind(1, user_id);
    detail::bind_sv(prune, 2, name);
    prune.bind(3, utc_minute(now));
    prune.send();
  });
}

Booking book(Db& db, const std::string& user_id, Counter counter, UnixSeconds now,
             std::optional<std::int64_t> day_limit, std::optional<std::int64_t> minute_limit) {
  detail::require_id("user id", user_id);
  return guarded("book quota", [&] {
    // The write lock (IMMEDIATE; the user's quota lock on PostgreSQL) is taken before the read, so
    // no other connection can book between our check and our increment.
    Tx tx(db, quota_lock(user_id));
    Booking b = check(db, user_id, counter, now, day_limit, minute_limit);
    if (!b.booked()) return b;  // the transaction rolls back: nothing written
    add(db, user_id, counter, now);
    tx.commit();
    b.day_count += 1;
    b.minute_count += 1;
    return b;
  });
}

void unbook(Db& db, const std::string& user_id, Counter counter, UnixSeconds booked_at) {
  guarded("unbook quota", [&] {
    Db& s = db;
    Tx tx(s, quota_lock(user_id));
    Stmt d(s,
        "UPDATE quota_days SET count = count - 1 WHERE user_id = ? AND counter = ? AND day = ? AND count > 0");
    d.bind(1, user_id);
    detail::bind_sv(d, 2, to_string(counter));
    d.bind(3, utc_day(booked_at));
    d.exec();
    Stmt m(s,
        "UPDATE quota_minutes SET count = count - 1 WHERE user_id = ? AND counter = ? AND minute = ? AND count > 0");
    m.bind(1, user_id);
    detail::bind_sv(m, 2, to_string(counter));
    m.bind(3, utc_minute(booked_at));
    m.exec();
    tx.commit();
  });
}

CounterCounts counts(Db& db, const std::string& user_id, Counter counter, UnixSeconds now) {
  return guarded("read quota counts", [&] { return read_counts(db, user_id, to_string(counter), now); });
}

std::vector<QuotaUsage> usage(Db& db, const std::string& day, UnixSeconds now,
                              const std::optional<std::string>& user_id) {
  if (!is_utc_day(day)) throw StoreError("invalid", "day must be YYYY-MM-DD, got '" + day + "'");
  return guarded("read quota usage", [&] {
    std::string who = user_id ? "SELECT ?3 AS user_id"
                              : "SELECT DISTINCT user_id FROM quota_days WHERE day = ?1";
    Stmt q(db,
        "WITH who AS (" + who + ") SELECT w.user_id, "
        "coalesce((SELECT count FROM quota_days WHERE user_id = w.user_id AND counter = 'messages' AND day = ?1), 0), "
        "coalesce((SELECT count FROM quota_minutes WHERE user_id = w.user_id AND counter = 'messages' AND minute = ?2), 0), "
        "coalesce((SELECT count FROM quota_days WHERE user_id = w.user_id AND counter = 'data_runs' AND day = ?1), 0), "
        "coalesce((SELECT count FROM quota_days WHERE user_id = w.user_id AND counter = 'pipeline_runs' AND day = ?1), 0), "
        "(SELECT count(*) FROM strikes WHERE user_id = w.user_id AND at >= ?1 || 'T00:00:00Z' AND at <= ?1 || 'T23:59:59Z') "
        "FROM who w ORDER BY w.user_id");
    q.bind(1, day);
    q.bind(2, utc_minute(now));
    if (user_id) q.bind(3, *user_id);
    std::vector<QuotaUsage> out;
    while (q.executeStep()) {
      QuotaUsage u;
      u.user_id = q.getColumn(0).getString();
      u.day = day;
      u.messages = q.getColumn(1).getInt64();
      u.messages_this_minute = q.getColumn(2).getInt64();
      u.data_runs = q.getColumn(3).getInt64();
      u.pipeline_runs = q.getColumn(4).getInt64();
      u.strikes = q.getColumn(5).getInt64();
      out.push_back(std::move(u));
    }
    return out;
  });
}

std::int64_t reset(Db& db, const std::string& user_id, std::optional<Counter> counter, UnixSeconds now) {
  return guarded("reset quotas", [&] {
    Db& s = db;
    Tx tx(s, quota_lock(user_id));
    std::string filter = counter ? " AND counter = ?3" : "";
    Stmt d(s, "DELETE FROM quota_days WHERE user_id = ?1 AND day = ?2" + filter);
    d.bind(1, user_id);
    d.bind(2, utc_day(now));
    if (counter) detail::bind_sv(d, 3, to_string(*counter));
    std::int64_t n = d.exec();
    Stmt m(s, std::string("DELETE FROM quota_minutes WHERE user_id = ?1") +
                               (counter ? " AND counter = ?2" : ""));
    m.bind(1, user_id);
    if (counter) detail::bind_sv(m, 2, to_string(*counter));
    n += m.exec();
    tx.commit();
    return n;
  });
}

void write_limits(Db& db, const std::map<std::string, std::int64_t>& limits, UnixSeconds now) {
  guarded("write quota limits", [&] {
    Db& s = db;
    Tx tx(s, "quota_limits");
    s.exec("DELETE FROM quota_limits");
    Stmt q(s, "INSERT INTO quota_limits(name, value, updated_at) VALUES (?, ?, ?)");
    for (const auto& [name, value] : limits) {
      q.reset();
      q.bind(1, name);
      q.bind(2, static_cast<std::int64_t>(value));
      q.bind(3, iso_utc(now));
      q.exec();
    }
    tx.commit();
  });
}

std::map<std::string, std::int64_t> read_limits(Db& db) {
  return guarded("read quota limits", [&] {
    std::map<std::string, std::int64_t> out;
    Stmt q(db, "SELECT name, value FROM quota_limits");
    while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getInt64();
    return out;
  });
}

}  // namespace quotas
}  // namespace plotq::store
