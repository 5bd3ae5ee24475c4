// What a PLOTQ_DB value names, how it is printed, and the placeholder rewrite PostgreSQL's driver
// makes (pure functions; fuzz/db_target.cpp checks their invariants on any input).
#include <catch2/catch.hpp>

#include "store/pg_sql.hpp"
#include "store/target.hpp"

using namespace plotq::store;

TEST_CASE("target: a path is SQLite, a URI or a conninfo is PostgreSQL") {
  CHECK(engine_of("./var/plotq.db") == Engine::sqlite);
  CHECK(engine_of("/srv/plotq/plotq.db") == Engine::sqlite);
  CHECK(engine_of("plotq.db") == Engine::sqlite);
  CHECK(engine_of("./dbname=x") == Engine::sqlite);
  CHECK(engine_of("postgresql://db/plotq") == Engine::postgresql);
  CHECK(engine_of("postgres://db/plotq") == Engine::postgresql);
  CHECK(engine_of("host=/run/pg dbname=plotq") == Engine::postgresql);
  CHECK(engine_of("  dbname = plotq") == Engine::postgresql);
}

TEST_CASE("target: the password is never printed, everything else is") {
  CHECK(redacted("./var/plotq.db") == "./var/plotq.db");
  CHECK(redacted("postgresql://plotq:s3cret@db:5432/plotq?sslmode=require") ==
        "postgresql://plotq:***@db:5432/plotq?sslmode=require");
  CHECK(redacted("postgresql://db/plotq?user=u&password=s3cret&sslmode=verify-full") ==
        "postgresql://db/plotq?user=u&password=***&sslmode=verify-full");
  CHECK(redacted("postgres://u@h/d?pass%77ord=s3cret") == "postgres://u@h/d?pass%77ord=***");
  CHECK(redacted("host=/run/pg password=s3cret dbname=plotq") == "host=/run/pg password=*** dbname=plotq");
  CHECK(redacted("host=/run/pg password = 'se cr\\'et' dbname=plotq") == "host=/run/pg password=*** dbname=plotq");
  // Unreadable from some point on: the rest is dropped, never printed.
  CHECK(redacted("host=/run/pg password='unterminated s3cret") == "host=/run/pg password=***");
  CHECK(redacted("host=/run/pg options='unterminated s3cret") == "host=/run/pg options=...");
  CHECK(redacted("host=/run/pg garbage s3cret") == "host=/run/pg ...");
}

TEST_CASE("pg_sql: ? and ?N become $K numbered by first use, literals and comments untouched") {
  auto a = to_pg_placeholders("SELECT * FROM t WHERE a = ? AND b = ?");
  CHECK(a.text == "SELECT * FROM t WHERE a = $1 AND b = $2");
  CHECK(a.params == 2);
  auto b = to_pg_placeholders("SELECT ?3, ?1 WHERE x = ?1");
  CHECK(b.text == "SELECT $1, $2 WHERE x = $2");
  CHECK(b.params == 2);
  CHECK(b.pg_number[3] == 1);
  CHECK(b.pg_number[1] == 2);
  CHECK(b.pg_number[2] == 0);  // never used: its binding is dropped
  auto c = to_pg_placeholders("SELECT '?', \"?\" -- ?\n, ? /* ? */");
  CHECK(c.text == "SELECT '?', \"?\" -- ?\n, $1 /* ? */");
  CHECK(c.params == 1);
  auto d = to_pg_placeholders("SELECT 'it''s ?', ?");
  CHECK(d.text == "SELECT 'it''s ?', $1");
}
