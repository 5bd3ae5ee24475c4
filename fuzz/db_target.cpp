// A PLOTQ_DB / --db value and the repositories' SQL, through what store/ reads of them itself
// (store/target.hpp, store/pg_sql.hpp). First byte even: a target; odd: SQL.
// - target: engine_of never throws; redacted() is idempotent, keeps a SQLite path as it is, and
//   removes the password libpq itself reads from the value (PQconninfoParse is the judge: the
//   redacted text holds fewer copies of that password than the value did).
// - SQL: to_pg_placeholders leaves no `?` outside literals and comments (its output rewrites to
//   itself), numbers $1..$K without gaps, and changes nothing else.
#include <libpq-fe.h>

#include <set>

#include "fuzz/fuzz.hpp"
#include "store/pg_sql.hpp"
#include "store/target.hpp"

using namespace plotq::store;

namespace {

std::size_t occurrences(std::string_view hay, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// The password libpq reads from a value, "" when none (or the value does not parse).
std::string libpq_password(const std::string& value) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(value.c_str(), &err);
  if (err) PQfreemem(err);
  std::string pw;
  if (!opts) return pw;
  for (PQconninfoOption* o = opts; o->keyword; ++o)
    if (std::string_view(o->keyword) == "password" && o->val) pw = o->val;
  PQconninfoFree(opts);
  return pw;
}

void check_target(const std::string& t) {
  Engine e = engine_of(t);
  std::string r = redacted(t);
  PLOTQ_FUZZ_CHECK(redacted(r) == r);
  if (e == Engine::sqlite) {
    PLOTQ_FUZZ_CHECK(r == t);
    return;
  }
  std::string pw = libpq_password(t);
  if (pw.empty() || t.find('\0') != std::string::npos) return;
  std::size_t before = occurrences(t, pw);
  if (before > 0) PLOTQ_FUZZ_CHECK(occurrences(r, pw) < before);
  PLOTQ_FUZZ_CHECK(libpq_password(r) != pw || pw == "***");
}

void check_sql(std::string_view sql) {
  PgSql pg = to_pg_placeholders(sql);
  PgSql again = to_pg_placeholders(pg.text);
  PLOTQ_FUZZ_CHECK(again.text == pg.text);
  PLOTQ_FUZZ_CHECK(again.params == 0);
  std::set<int> used;
  for (std::size_t n = 1; n < pg.pg_number.size(); ++n)
    if (pg.pg_number[n] != 0) used.insert(pg.pg_number[n]);
  PLOTQ_FUZZ_CHECK(int(used.size()) == pg.params);
  if (!used.empty()) PLOTQ_FUZZ_CHECK(*used.begin() == 1 && *used.rbegin() == pg.params);
  if (sql.find('?') == std::string_view::npos) PLOTQ_FUZZ_CHECK(pg.text == sql);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string text(plotq::fuzz::as_text(data + 1, size - 1));
  if (data[0] & 1) check_sql(text);
  else check_target(text);
  return 0;
}
