#!/usr/bin/env bash
# store.schema_parity: the SQLite schema (migrations/*.sql) and the PostgreSQL one
# (migrations/postgresql/*.sql) agree. Both lists are applied to fresh databases (SQLite with the
# sqlite3 CLI; PostgreSQL with psql, in a new database of an ICU en-US collation, so that text
# which sorted by the database's collation instead of by byte would show) and compared:
#   1. the catalogue: tables, views, every column in order (tables: type class, NOT NULL,
#      default, generated), indexes by name (columns, unique, partial), primary and unique keys,
#      foreign keys with their ON DELETE/UPDATE actions;
#   2. every view's rows, typed (integer, real to 6 places, text, blob, NULL) and in the view's own
#      order, on schema_parity_seed.sql (every view must return rows);
#   3. schema_parity_cases.sql: writes that each must succeed, or fail on a constraint, on both.
# Needs PLOTQ_TEST_PG (a libpq conninfo or URI; tools/pg.sh run provides one): without it, or
# without the two CLIs, it reports itself skipped (exit 77).
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)

skip() { echo "PLOTQ-SKIP: $*"; exit 77; }
[ -n "${PLOTQ_TEST_PG:-}" ] || skip "PLOTQ_TEST_PG is unset (tools/test.sh and tools/pg.sh run set it)"
for c in sqlite3 psql; do command -v "$c" >/dev/null || skip "no $c on PATH"; done

work=$(mktemp -d)
sdb=$work/plotq.db
tag=$$_$RANDOM
pgdb=plotq_parity_$tag
schema=parity_$tag
export PGOPTIONS="-c client_min_messages=warning -c search_path=$schema"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# sq/pg: one statement batch on each engine; output unaligned, no headers, '|' between columns.
sq() { sqlite3 -bail -batch -init /dev/null "$sdb" "$@"; }
pg_admin() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$PLOTQ_TEST_PG" "$@"; }
# The new database: a key=value conninfo takes a second dbname (the last one counts); a URI is
# connected through and switched with \connect. pgdb empty: the given database itself.
pg_own() { psql -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d "$PLOTQ_TEST_PG" "$@"; }
if [[ $PLOTQ_TEST_PG =~ ^postgres(ql)?:// ]]; then
  pg() { pg_admin -c "\\connect $pgdb" -v VERBOSITY=verbose "$@"; }
else
  pg() { psql -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -d "$PLOTQ_TEST_PG dbname=$pgdb" "$@"; }
fi

cleanup() {
  if [ -n "$pgdb" ]; then
    pg_admin -c "DROP DATABASE IF EXISTS $pgdb WITH (FORCE)" >/dev/null 2>&1 || true
  else
    pg_own -c "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A database of its own, of the ICU en-US collation: it sorts 'alice' before 'Bob', bytes sort
# 'Bob' first. Where the server has no ICU, the default collation; where the role may not create
# databases, a schema of its own in the given one (the byte-order checks then prove less, and the
# run says so).
if ! pg_admin -c "CREATE DATABASE $pgdb TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'" 2>"$work/err"; then
  echo "note: no ICU database ($(head -1 "$work/err"))"
  if ! pg_admin -c "CREATE DATABASE $pgdb TEMPLATE template0 ENCODING 'UTF8'" 2>"$work/err"; then
    echo "note: no database of its own ($(head -1 "$work/err")); a schema in the given one"
    pgdb=
    pg() { pg_own "$@"; }
  fi
fi
if ! pg -c "CREATE SCHEMA $schema" 2>"$work/err"; then
  grep -q 'ERROR:  42501' "$work/err" && skip "the role of PLOTQ_TEST_PG may create neither a database nor a schema"
  cat "$work/err"
  exit 1
fi
[ "$(pg -c "SELECT string_agg(x, ',' ORDER BY x) FROM (VALUES ('Bob'), ('alice')) v(x)")" = "alice,Bob" ] &&
  echo "database collation sorts alice before Bob (the schema's text columns must not)"

# --- apply both lists
for f in "$root"/migrations/[0-9][0-9][0-9][0-9]_*.sql; do
  sq <"$f" || { echo "FAIL: sqlite3 could not apply $f"; exit 1; }
done
n_pg=0
for f in "$root"/migrations/postgresql/[0-9][0-9][0-9][0-9]_*.sql; do
  pg -c BEGIN -f "$f" -c COMMIT >/dev/null || { echo "FAIL: psql could not apply $f"; exit 1; }
  n_pg=$((n_pg + 1))
done
[ "$n_pg" -gt 0 ] || { echo "FAIL: no migrations/postgresql/NNNN_*.sql"; exit 1; }

# --- 1. the catalogue, one line per fact, sorted
sq >"$work/cat.sqlite" <<'SQL'
WITH objs AS (SELECT type, name FROM sqlite_schema
              WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'),
cols AS (SELECT o.type AS kind, o.name AS rel, c.* FROM objs o JOIN pragma_table_xinfo(o.name) c)
SELECT type || ' ' || name FROM objs
UNION ALL
SELECT 'column ' || rel || ' ' || printf('%02d', cid + 1) || ' ' || name ||
       CASE WHEN kind = 'table' THEN
         ' ' || CASE upper(cols.type) WHEN 'INTEGER' THEN 'integer' WHEN 'TEXT' THEN 'text'
                  WHEN 'REAL' THEN 'real' WHEN 'BLOB' THEN 'blob' ELSE lower(cols.type) END ||
         CASE WHEN "notnull" OR pk > 0 THEN ' not-null' ELSE '' END ||
         CASE WHEN hidden IN (2, 3) THEN ' generated' ELSE '' END ||
         coalesce(' default ' || dflt_value, '')
       ELSE '' END
FROM cols
UNION ALL
SELECT CASE i.origin WHEN 'c' THEN 'index ' || i.name || ' ' ELSE 'unique ' END || o.name || '(' ||
       (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(i.name) ORDER BY seqno)) || ')' ||
       CASE WHEN i.origin = 'c' AND i."unique" THEN ' unique' ELSE '' END ||
       CASE WHEN i.partial THEN ' partial' ELSE '' END
FROM objs o JOIN pragma_index_list(o.name) i WHERE o.type = 'table' AND i.origin IN ('c', 'u')
UNION ALL
SELECT 'primary ' || o.name || '(' ||
       (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info(o.name) WHERE pk > 0 ORDER BY pk)) || ')'
FROM objs o WHERE o.type = 'table' AND EXISTS (SELECT 1 FROM pragma_table_info(o.name) WHERE pk > 0)
UNION ALL
SELECT DISTINCT 'fk ' || o.name || '(' ||
       (SELECT group_concat("from", ',') FROM (SELECT "from" FROM pragma_foreign_key_list(o.name) WHERE id = f.id ORDER BY seq)) ||
       ') -> ' || f."table" || '(' ||
       (SELECT group_concat("to", ',') FROM (SELECT "to" FROM pragma_foreign_key_list(o.name) WHERE id = f.id ORDER BY seq)) ||
       ') on delete ' || f.on_delete || ' on update ' || f.on_update
FROM objs o JOIN pragma_foreign_key_list(o.name) f WHERE o.type = 'table';
SQL
pg -f - >"$work/cat.pg" <<'SQL'
WITH objs AS (SELECT c.oid, c.relname AS name, CASE c.relkind WHEN 'r' THEN 'table' ELSE 'view' END AS type
              FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'v')),
act(code, word) AS (VALUES ('a', 'NO ACTION'), ('r', 'RESTRICT'), ('c', 'CASCADE'), ('n', 'SET NULL'), ('d', 'SET DEFAULT'))
SELECT type || ' ' || name FROM objs
UNION ALL
SELECT 'column ' || o.name || ' ' || lpad((row_number() OVER (PARTITION BY o.oid ORDER BY a.attnum))::text, 2, '0') || ' ' || a.attname ||
       CASE WHEN o.type = 'table' THEN
         ' ' || CASE format_type(a.atttypid, a.atttypmod) WHEN 'bigint' THEN 'integer' WHEN 'text' THEN 'text'
                  WHEN 'double precision' THEN 'real' WHEN 'bytea' THEN 'blob' ELSE 'pg:' || format_type(a.atttypid, a.atttypmod) END ||
         CASE WHEN a.attnotnull THEN ' not-null' ELSE '' END ||
         CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END ||
         coalesce(' default ' || CASE WHEN a.attgenerated = '' THEN regexp_replace(pg_get_expr(d.adbin, d.adrelid), '::[a-z ]+$', '') END, '')
       ELSE '' END
FROM objs o JOIN pg_attribute a ON a.attrelid = o.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = o.oid AND d.adnum = a.attnum
UNION ALL
SELECT 'index ' || ic.relname || ' ' || o.name || '(' ||
       (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = o.oid AND a.attnum = k.attnum) || ')' ||
       CASE WHEN i.indisunique THEN ' unique' ELSE '' END || CASE WHEN i.indpred IS NOT NULL THEN ' partial' ELSE '' END
FROM objs o JOIN pg_index i ON i.indrelid = o.oid JOIN pg_class ic ON ic.oid = i.indexrelid
WHERE NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conrelid = o.oid AND k.conindid = i.indexrelid AND k.contype IN ('p', 'u'))
UNION ALL
SELECT CASE k.contype WHEN 'p' THEN 'primary ' ELSE 'unique ' END || o.name || '(' ||
       (SELECT string_agg(a.attname, ',' ORDER BY u.ord) FROM unnest(k.conkey) WITH ORDINALITY u(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = o.oid AND a.attnum = u.attnum) || ')'
FROM objs o JOIN pg_constraint k ON k.conrelid = o.oid AND k.contype IN ('p', 'u')
UNION ALL
SELECT 'fk ' || o.name || '(' ||
       (SELECT string_agg(a.attname, ',' ORDER BY u.ord) FROM unnest(k.conkey) WITH ORDINALITY u(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = o.oid AND a.attnum = u.attnum) ||
       ') -> ' || r.relname || '(' ||
       (SELECT string_agg(a.attname, ',' ORDER BY u.ord) FROM unnest(k.confkey) WITH ORDINALITY u(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.attnum) ||
       ') on delete ' || (SELECT word FROM act WHERE code = k.confdeltype) ||
       ' on update ' || (SELECT word FROM act WHERE code = k.confupdtype)
FROM objs o JOIN pg_constraint k ON k.conrelid = o.oid AND k.contype = 'f' JOIN pg_class r ON r.oid = k.confrelid;
SQL
LC_ALL=C sort -o "$work/cat.sqlite" "$work/cat.sqlite"
LC_ALL=C sort -o "$work/cat.pg" "$work/cat.pg"
if ! diff -u --label sqlite --label postgresql "$work/cat.sqlite" "$work/cat.pg"; then
  fail "the catalogues differ (above: - SQLite only, + PostgreSQL only)"
fi
# The runner's table is the runner's: neither list may create it.
grep -q '^table schema_migrations$' "$work/cat.sqlite" "$work/cat.pg" && fail "a migration creates schema_migrations"

# --- the seed: the same rows in both, the times from one clock reading (not in the last seconds of
# a UTC day, so that the seed's "today" is the views' one).
[ "$(date -u +%H%M%S)" -lt 235950 ] || sleep 12
now=$(date -u +%s)
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
declare -A at=(
  [NOW]="'$(iso "$now")'" [AGO_1H]="'$(iso $((now - 3600)))'" [AGO_2H]="'$(iso $((now - 7200)))'"
  [AGO_3H]="'$(iso $((now - 10800)))'" [DAY_IN]="'$(iso $((now - 86400 + 120)))'"
  [DAY_OUT]="'$(iso $((now - 86400 - 120)))'" [OLD]="'$(iso $((now - 3 * 86400)))'"
  [TODAY]="'$(date -u -d "@$now" +%F)'" [OLD_DAY]="'$(date -u -d "@$((now - 3 * 86400))" +%F)'"
  [TODAY_START]="'$(date -u -d "@$now" +%FT00:00:00Z)'" [MINUTE]="'$(date -u -d "@$now" +%FT%H:%M)'"
  [OLD_MINUTE]="'$(date -u -d "@$((now - 120))" +%FT%H:%M)'")
fill() {  # fill ENGINE < SQL: the placeholders replaced
  local s k
  s=$(cat)
  for k in "${!at[@]}"; do s=${s//@$k@/${at[$k]}}; done
  if [ "$1" = sqlite ]; then
    s=${s//@PNG@/X\'89504E470D0A1A0A0000\'}
    s=${s//@NOT_PNG@/X\'89504E470D0A1A0B0000\'}
  else
    s=${s//@PNG@/\'\\x89504e470d0a1a0a0000\'::bytea}
    s=${s//@NOT_PNG@/\'\\x89504e470d0a1a0b0000\'::bytea}
  fi
  printf '%s\n' "$s"
}
{ echo "PRAGMA foreign_keys=ON;"; fill sqlite <"$here/schema_parity_seed.sql"; } | sq || { echo "FAIL: the seed on SQLite"; exit 1; }
fill pg <"$here/schema_parity_seed.sql" | pg -f - || { echo "FAIL: the seed on PostgreSQL"; exit 1; }

# --- 2. every view's rows, each value typed
pg -F ' ' -c "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
  WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'v' ORDER BY c.relname, a.attnum" >"$work/viewcols"
views=$(cut -d' ' -f1 "$work/viewcols" | uniq)
n_rows=0
for v in $views; do
  sq_cols=() pg_cols=()
  while read -r _ col type; do
    q="\"$col\""
    sq_cols+=("CASE typeof($q) WHEN 'null' THEN 'NULL' WHEN 'integer' THEN 'i:' || $q WHEN 'real' THEN 'r:' || printf('%.6f', $q) WHEN 'text' THEN 't:' || $q ELSE 'b:' || hex($q) END")
    case $type in
      bigint | integer | smallint) pg_cols+=("coalesce('i:' || $q::text, 'NULL')") ;;
      "double precision" | real) pg_cols+=("coalesce('r:' || round($q::numeric, 6)::text, 'NULL')") ;;
      text) pg_cols+=("coalesce('t:' || $q, 'NULL')") ;;
      bytea) pg_cols+=("coalesce('b:' || upper(encode($q, 'hex')), 'NULL')") ;;
      *) pg_cols+=("coalesce('$type:' || $q::text, 'NULL')") ;;  # no SQLite value looks like this
    esac
  done < <(grep "^$v " "$work/viewcols")
  sq_sel=$(IFS=,; echo "${sq_cols[*]}")
  pg_sel=$(IFS=,; echo "${pg_cols[*]}")
  # The two reads again when a minute began between them ("this minute" and "now" moved on).
  for _ in 1 2; do
    minute=$(date -u +%FT%H:%M)
    sq -separator ' | ' "SELECT $sq_sel FROM $v" >"$work/$v.sqlite"
    pg -F ' | ' -c "SELECT $pg_sel FROM $v" >"$work/$v.pg"
    [ "$(date -u +%FT%H:%M)" != "$minute" ] || break
  done
  # A view without ORDER BY has no row order: compare its rows as a set.
  if [ "$(sq "SELECT instr(upper(sql), 'ORDER BY') > 0 FROM sqlite_schema WHERE name = '$v'")" != 1 ]; then
    LC_ALL=C sort -o "$work/$v.sqlite" "$work/$v.sqlite"
    LC_ALL=C sort -o "$work/$v.pg" "$work/$v.pg"
  fi
  [ -s "$work/$v.sqlite" ] || fail "$v returns no rows on the seed (the comparison would prove nothing)"
  if ! diff -u --label "$v sqlite" --label "$v postgresql" "$work/$v.sqlite" "$work/$v.pg"; then
    fail "$v: the rows differ"
  fi
  n_rows=$((n_rows + $(wc -l <"$work/$v.sqlite")))
done
[ -n "$views" ] || fail "no views on PostgreSQL"

# --- 3. the cases, each in a transaction rolled back. SQLite: one sqlite3 per case, stopping at the
# first error. PostgreSQL: one psql for all, every statement in its own savepoint
# (ON_ERROR_ROLLBACK), so a failed statement leaves its case's transaction usable; the case's answer
# is the SQLSTATE of its last error (class 23: a constraint).
expects=() whys=() sqls=()
while IFS= read -r line || [ -n "$line" ]; do
  if [[ $line =~ ^--\ (ok|refused|error):\ (.*)$ ]]; then
    expects+=("${BASH_REMATCH[1]}") whys+=("${BASH_REMATCH[2]}") sqls+=("")
  elif [ ${#expects[@]} -gt 0 ]; then
    sqls[-1]+=$line$'\n'
  fi
done <"$here/schema_parity_cases.sql"
n_cases=${#expects[@]}
[ "$n_cases" -gt 0 ] || fail "no cases in schema_parity_cases.sql"
for i in "${!sqls[@]}"; do
  printf '\\set LAST_ERROR_SQLSTATE 00000\n\\set LAST_ERROR_MESSAGE \n\\echo @@case\nBEGIN;\n%s\\echo @@end :LAST_ERROR_SQLSTATE :LAST_ERROR_MESSAGE\nROLLBACK;\n' "${sqls[$i]}"
done | { printf '\\set ON_ERROR_STOP 0\n\\set ON_ERROR_ROLLBACK on\n'; fill pg; } | pg -f - >"$work/cases.pg" 2>/dev/null
p_outs=() p_codes=() p_msgs=()
while IFS= read -r line; do
  if [ "$line" = @@case ]; then
    p_outs+=("") p_codes+=("") p_msgs+=("")
  elif [[ $line =~ ^@@end\ ([0-9A-Z]{5})\ ?(.*)$ ]]; then
    p_codes[-1]=${BASH_REMATCH[1]} p_msgs[-1]=${BASH_REMATCH[2]}
  else
    p_outs[-1]+=$line$'\n'
  fi
done <"$work/cases.pg"
[ ${#p_codes[@]} = "$n_cases" ] || fail "psql answered ${#p_codes[@]} of $n_cases cases"
for i in "${!sqls[@]}"; do
  s_got=ok p_got=ok
  s_out=$({ echo "PRAGMA foreign_keys=ON;"; echo "BEGIN;"; printf '%s' "${sqls[$i]}" | fill sqlite; echo "ROLLBACK;"; } |
    sq 2>"$work/s.err") || s_got=error
  p_out=$(printf '%s' "${p_outs[$i]}")
  [ "$s_got" = error ] && grep -q 'constraint failed' "$work/s.err" && s_got=refused
  case ${p_codes[$i]:-none} in 00000) ;; 23*) p_got=refused ;; *) p_got=error ;; esac
  if [ "$s_got" != "${expects[$i]}" ] || [ "$p_got" != "${expects[$i]}" ]; then
    fail "case '${whys[$i]}': expected ${expects[$i]}, SQLite $s_got ($(head -c 300 "$work/s.err")), PostgreSQL $p_got (${p_codes[$i]:-none} ${p_msgs[$i]:-})"
  elif [ "$s_got" = ok ] && [ "$s_out" != "$p_out" ]; then
    fail "case '${whys[$i]}': SQLite printed [$s_out], PostgreSQL [$p_out]"
  fi
done

echo "schema_parity: $(grep -c '^table ' "$work/cat.pg") tables, $(grep -c '^view ' "$work/cat.pg") views," \
  "$(grep -c '^index ' "$work/cat.pg") indexes, $n_rows view rows, $n_cases cases compared; $failures failures"
[ "$failures" = 0 ]
