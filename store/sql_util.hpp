// Internal helpers shared by the repositories (not part of the public API).
#pragma once
#include "store/db.hpp"
#include "store/sql.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/error.hpp"
#include "store/time.hpp"

namespace plotq::store::detail {

// After an UPDATE of turn `id` that changed nothing: throws not_found, or bad_state naming the
// status it has and the one it should have had (`wanted`).
[[noreturn]] inline void explain_turn_no_change(Db& s, const std::string& id, const char* wanted) {
  Stmt q(s, "SELECT status FROM turns WHERE id = ?");
  q.bind(1, id);
  if (!q.executeStep()) throw StoreError("not_found", "no turn " + id);
  throw StoreError("bad_state", "turn " + id + " is " + q.getColumn(0).getString() + ", not " + wanted);
}

inline void bind_opt(Stmt& q, int i, const std::optional<std::string>& v) {
  if (v) q.bind(i, *v); else q.bind(i);
}
inline void bind_opt(Stmt& q, int i, const std::optional<std::int64_t>& v) {
  if (v) q.bind(i, static_cast<std::int64_t>(*v)); else q.bind(i);
}
inline void bind_opt(Stmt& q, int i, const std::optional<int>& v) {
  if (v) q.bind(i, *v); else q.bind(i);
}
inline void bind_opt(Stmt& q, int i, const std::optional<double>& v) {
  if (v) q.bind(i, *v); else q.bind(i);
}
inline void bind_sv(Stmt& q, int i, std::string_view v) { q.bind(i, std::string(v)); }

inline std::optional<std::string> opt_text(const Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getString();
}
inline std::optional<std::int64_t> opt_int(const Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}
inline std::optional<double> opt_real(const Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getDouble();
}

// Reads a stored time; a malformed one means someone wrote the file by hand badly.
inline UnixSeconds time_of(const Column& c) {
  auto t = parse_utc(c.getString());
  if (!t) throw StoreError("corrupt", std::string("malformed time '") + c.getString() + "' in column " + c.getName());
  return *t;
}
inline std::optional<UnixSeconds> opt_time(const Column& c) {
  if (c.isNull()) return std::nullopt;
  return time_of(c);
}

// Reads a vocabulary column through a parse_* function.
template <class Parse>
auto enum_of(const Column& c, Parse parse) {
  auto v = parse(c.getString());
  if (!v) throw StoreError("corrupt", std::string("unknown value '") + c.getString() + "' in column " + c.getName());
  return *v;
}

// Inserts the user row when missing; call inside the caller's transaction.
void ensure_user(Db& s, const std::string& user_id, UnixSeconds now);

void require_id(std::string_view what, const std::string& id);

}  // namespace plotq::store::detail
