// The one rewrite PostgreSQL's driver makes to the repositories' SQL (pure, fuzzed:
// fuzz/db_target.cpp): SQLite's placeholders `?` (the next number) and `?N` become `$K`, numbered
// in order of first use without gaps (PostgreSQL cannot type a parameter the text never uses, so
// SQL that leaves ?1 out when a filter is absent must not leave a $1); text in '...' strings,
// "..." identifiers and comments is left alone.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace plotq::store {

struct PgSql {
  std::string text;
  int params = 0;              // how many $K the text holds
  std::vector<int> pg_number;  // [SQLite's number] -> K, 0 when the text never uses it
};

PgSql to_pg_placeholders(std::string_view sqlite_sql);

}  // namespace plotq::store
