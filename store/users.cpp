#include "store/users.hpp"

#include "store/sql_util.hpp"

namespace plotq::store {

namespace detail {

void require_id(std::string_view what, const std::string& id) {
  if (id.empty() || id.size() > 128)
    throw StoreError("invalid", std::string(what) + " must be 1..128 characters");
}

void ensure_user(Db& s, const std::string& user_id, UnixSeconds now) {
  require_id("user id", user_id);
  Stmt q(s, "INSERT INTO users(id, created_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING");
  q.bind(1, user_id);
  q.bind(2, iso_utc(now));
  q.send();  // nothing reads its answer: inside a transaction on PostgreSQL it rides with the next
}

}  // namespace detail

namespace users {

void ensure(Db& db, const std::string& id, UnixSeconds now) {
  guarded("ensure user", [&] { detail::ensure_user(db, id, now); });
}

static User row(Stmt& q) {
  return {q.getColumn(0).getString(), detail::time_of(q.getColumn(1)), detail::opt_text(q.getColumn(2))};
}

std::optional<User> get(Db& db, const std::string& id) {
  return guarded("get user", [&]() -> std::optional<User> {
    Stmt q(db, "SELECT id, created_at, label FROM users WHERE id = ?");
    q.bind(1, id);
    if (!q.executeStep()) return std::nullopt;
    return row(q);
  });
}

void set_label(Db& db, const std::string& id, const std::optional<std::string>& label) {
  guarded("set user label", [&] {
    Stmt q(db, "UPDATE users SET label = ? WHERE id = ?");
    detail::bind_opt(q, 1, label);
    q.bind(2, id);
    if (q.exec() == 0) throw StoreError("not_found", "no user " + id);
  });
}

std::vector<User> list(Db& db) {
  return guarded("list users", [&] {
    std::vector<User> out;
    Stmt q(db, "SELECT id, created_at, label FROM users ORDER BY id");
    while (q.executeStep()) out.push_back(row(q));
    return out;
  });
}

}  // namespace users
}  // namespace plotq::store
