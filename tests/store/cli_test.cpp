// Runs the real plotq binary (migrate, quotas, ledger, check) on a temp database and checks its
// output: each case on a SQLite file and on a PostgreSQL schema of its own (engines.hpp), the same
// commands with --db naming either.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "store/ledger.hpp"
#include "store/quotas.hpp"
#include "store/strikes.hpp"
#include "tests/store/engines.hpp"
#include "tests/support/cli_run.hpp"

using namespace plotq::store;
using plotq::store::test::kNow;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;
using plotq::store::test::TempDir;

namespace {

using Run = plotq::test::CliRun;
using plotq::test::contains;
using plotq::test::lines;
using plotq::test::slurp;

// The real plotq on files in t (PLOTQ_DB unset so --db rules).
Run run_plotq(const TempDir& t, const std::string& args) {
  return plotq::test::run_cli(PLOTQ_CLI_PATH, t.path.string(), args);
}

// A target as one shell word: a conninfo has spaces and single quotes (test targets have no `"`,
// `$` or backquote).
std::string word(const std::string& target) { return "\"" + target + "\""; }

}  // namespace

// SQLite: a file that does not exist. PostgreSQL: a database (schema) never migrated.
TEMPLATE_TEST_CASE("cli: quotas and ledger on a missing database print headers only and create nothing", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const TempDir& t = st.dir();
  const bool sqlite = TestType::engine == Engine::sqlite;
  std::string db = sqlite ? t.file("var/plotq.db") : word(st.target());
  Run q = run_plotq(t, "--db " + db + " quotas");
  CHECK(q.rc == 0);
  auto l = lines(q.out);
  REQUIRE(l.size() == 1);
  CHECK(contains(l[0], "USER"));
  CHECK(contains(l[0], "MESSAGES"));
  CHECK(contains(l[0], "DATA_RUNS"));
  CHECK(contains(l[0], "PIPELINE_RUNS"));
  Run j = run_plotq(t, "quotas --json --db " + db);
  CHECK(j.rc == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["users"].empty());
  Run g = run_plotq(t, "--db " + db + " ledger");
  CHECK(g.rc == 0);
  CHECK(lines(g.out).size() == 1);
  CHECK(contains(g.out, "JOB"));
  Run p = run_plotq(t, "--db " + db + " prune --now --json");
  CHECK(p.rc == 0);
  CHECK(nlohmann::json::parse(p.out)["total"] == 0);
  Run c = run_plotq(t, "--db " + db + " check");  // nothing to check: said, exit 1
  CHECK(c.rc == 1);
  CHECK(contains(c.out, "db_missing"));
  if (sqlite) {
    CHECK_FALSE(std::filesystem::exists(t.file("var/plotq.db")));
  } else {
    CHECK_FALSE(st.open()->table_exists("schema_migrations"));
  }
}

TEMPLATE_TEST_CASE("cli: migrate applies, reports the version, is idempotent, and quotas then works", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const TempDir& t = st.dir();
  std::string db = TestType::engine == Engine::sqlite ? t.file("var/plotq.db") : word(st.target());
  std::string v = std::to_string(known_schema_version(TestType::engine));
  Run m = run_plotq(t, "--db " + db + " migrate");
  CHECK(m.rc == 0);
  CHECK(contains(m.out, "schema version " + v));
  CHECK(contains(m.out, v + " migration"));
  Run again = run_plotq(t, "migrate --db " + db);
  CHECK(again.rc == 0);
  CHECK(contains(again.out, "(0 migrations applied now)"));
  Run status = run_plotq(t, "--db " + db + " migrate --status");
  CHECK(status.rc == 0);
  CHECK(contains(status.out, "0001_init.sql  applied "));
  Run q = run_plotq(t, "--db " + db + " quotas");
  CHECK(q.rc == 0);
  CHECK(lines(q.out).size() == 1);
  Run c = run_plotq(t, "--db " + db + " check");
  CHECK(c.rc == 0);
  CHECK(contains(c.out, ": ok ("));
}

TEMPLATE_TEST_CASE("cli: migrate refuses an edited migration and a newer schema, exit 1 with the reason",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const TempDir& t = st.dir();
  std::string path = word(st.target());
  {
    auto db = st.migrated();
    db->exec("UPDATE schema_migrations SET checksum = '" + std::string(64, 'c') + "' WHERE version = 1");
  }
  Run m = run_plotq(t, "--db " + path + " migrate");
  CHECK(m.rc == 1);
  CHECK(contains(m.err, "migration_edited"));
  CHECK(contains(m.err, "0001_init.sql was edited"));
  Run q = run_plotq(t, "--db " + path + " quotas");  // listings refuse it too
  CHECK(q.rc == 1);
  CHECK(contains(q.err, "migration_edited"));
  Run c = run_plotq(t, "--db " + path + " check");
  CHECK(c.rc == 1);
  CHECK(contains(c.out, "migration_edited"));

  StoreUnderTest<TestType> st2;
  const TempDir& t2 = st2.dir();
  std::string path2 = word(st2.target());
  {
    auto db = st2.migrated();
    db->exec("INSERT INTO schema_migrations VALUES (" + std::to_string(known_schema_version(TestType::engine) + 1) +
             ", '9999_future', '" + std::string(64, 'd') + "', '2030-01-01T00:00:00Z')");
  }
  Run n = run_plotq(t2, "--db " + path2 + " migrate");
  CHECK(n.rc == 1);
  CHECK(contains(n.err, "schema_newer"));
  Run c2 = run_plotq(t2, "--db " + path2 + " check");
  CHECK(c2.rc == 1);
  CHECK(contains(c2.out, "schema_newer"));
}

TEMPLATE_TEST_CASE("cli: quotas prints each user's usage against the limits, as a table and as JSON", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  const TempDir& t = st.dir();
  std::string path = word(st.target());
  const std::string day = utc_day(kNow);
  {
    auto db = st.migrated();
    for (int i = 0; i < 12; ++i) quotas::book(*db, "alice", Counter::messages, kNow, 200, 100);
    for (int i = 0; i < 3; ++i) quotas::book(*db, "alice", Counter::data_runs, kNow, 30, std::nullopt);
    quotas::book(*db, "bob-the-long-user-name", Counter::pipeline_runs, kNow, 40, std::nullopt);
    quotas::book(*db, "carol", Counter::messages, kNow - 86400, 200, 10);  // another day
    strikes::add(*db, "alice", "attack", kNow);
    quotas::write_limits(*db, {{kLimitMessagesPerDay, 200}, {kLimitMessagesPerMinute, 10},
                               {kLimitDataRunsPerDay, 30}, {kLimitPipelineRunsPerDay, 40}}, kNow);
  }
  Run q = run_plotq(t, "--db " + path + " quotas --day " + day);
  REQUIRE(q.rc == 0);
  auto l = lines(q.out);
  REQUIRE(l.size() == 3);
  CHECK(l[1].rfind("alice ", 0) == 0);
  CHECK(contains(l[1], "12/200"));
  CHECK(contains(l[1], "3/30"));
  CHECK(contains(l[1], "0/40"));
  CHECK(l[2].rfind("bob-the-long-user-name ", 0) == 0);
  CHECK(contains(l[2], "1/40"));
  // Aligned: every column starts at the same offset on every line.
  CHECK(l[0].find("DAY") == l[1].find(day));
  CHECK(l[0].find("DAY") == l[2].find(day));
  CHECK(l[0].find("DATA_RUNS") == l[1].find("3/30"));

  Run j = run_plotq(t, "--db " + path + " quotas --json --day " + day + " --user alice");
  REQUIRE(j.rc == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["day"] == day);
  CHECK(doc["limits"]["messages_per_day"] == 200);
  REQUIRE(doc["users"].size() == 1);
  auto a = doc["users"][0];
  CHECK(a["user"] == "alice");
  CHECK(a["messages"] == 12);
  CHECK(a["messages_limit"] == 200);
  CHECK(a["data_runs"] == 3);
  CHECK(a["data_runs_limit"] == 30);
  CHECK(a["pipeline_runs"] == 0);
  CHECK(a["strikes"] == 1);

  Run other = run_plotq(t, "--db " + path + " quotas --day " + utc_day(kNow - 86400));
  CHECK(lines(other.out).size() == 2);
  CHECK(contains(other.out, "carol"));

  Run bad = run_plotq(t, "--db " + path + " quotas --day 2026-13-40");
  CHECK(bad.rc == 2);
  CHECK(contains(bad.err, "YYYY-MM-DD"));
  Run missing = run_plotq(t, "--db " + path + " quotas --user");
  CHECK(missing.rc == 2);
}

TEMPLATE_TEST_CASE("cli: quotas reset clears today's counters of one user, or one counter, or strikes", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  const TempDir& t = st.dir();
  std::string path = word(st.target());
  UnixSeconds now = now_unix();  // reset works on today
  {
    auto db = st.migrated();
    for (int i = 0; i < 5; ++i) quotas::book(*db, "alice", Counter::messages, now, 200, 100);
    quotas::book(*db, "alice", Counter::data_runs, now, 30, std::nullopt);
    quotas::book(*db, "bob", Counter::messages, now, 200, 100);
    strikes::add(*db, "alice", "attack", now);
  }
  Run r = run_plotq(t, "--db " + path + " quotas reset --user alice --counter data_runs");
  CHECK(r.rc == 0);
  {
    auto db = st.open();
    CHECK(quotas::counts(*db, "alice", Counter::data_runs, now).day == 0);
    CHECK(quotas::counts(*db, "alice", Counter::messages, now).day == 5);
  }
  r = run_plotq(t, "quotas reset --db " + path + " --user alice");
  CHECK(r.rc == 0);
  r = run_plotq(t, "--db " + path + " quotas reset --user alice --counter strikes");
  CHECK(r.rc == 0);
  CHECK(contains(r.out, "1 row removed"));
  auto db = st.open();
  CHECK(quotas::counts(*db, "alice", Counter::messages, now).day == 0);
  CHECK(quotas::counts(*db, "bob", Counter::messages, now).day == 1);  // others untouched
  CHECK(strikes::count_since(*db, "alice", 0) == 0);

  CHECK(run_plotq(t, "--db " + path + " quotas reset").rc == 2);  // --user required
  CHECK(run_plotq(t, "--db " + path + " quotas reset --user alice --counter tokens").rc == 2);
}

TEMPLATE_TEST_CASE("cli: ledger lists runs newest first with filters, as a table and as JSON", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  const TempDir& t = st.dir();
  std::string path = word(st.target());
  UnixSeconds now = now_unix();
  {
    auto db = st.migrated();
    LedgerEntry e;
    e.job_id = "job-old";
    e.kind = RunKind::render;
    e.user_id = "alice";
    e.theme = "light";
    e.created_at = now - 3 * 3600;
    e.wall_s = 0.5;
    e.exit_code = 0;
    ledger::insert(*db, e);
    e.job_id = "job-mem";
    e.kind = RunKind::data;
    e.theme.reset();
    e.created_at = now - 60;
    e.outcome = RunOutcome::failed;
    e.reason = "memory";
    e.measured = 300;
    e.limit = 256;
    e.exit_code.reset();
    e.signal = 9;
    ledger::insert(*db, e);
    LedgerEntry r;
    r.job_id = "job-refused";
    r.kind = RunKind::data;
    r.user_id = "bob";
    r.created_at = now - 30;
    r.outcome = RunOutcome::refused;
    r.refusal_code = "daily_limit";
    ledger::insert(*db, r);
    r.job_id = "job-ancient";
    r.created_at = now - 3 * 86400;
    ledger::insert(*db, r);
  }
  Run all = run_plotq(t, "--db " + path + " ledger");  // default: the last 24 h
  REQUIRE(all.rc == 0);
  auto l = lines(all.out);
  REQUIRE(l.size() == 4);
  CHECK(contains(l[1], "job-refused"));
  CHECK(contains(l[1], "daily_limit"));
  CHECK(contains(l[2], "job-mem"));
  CHECK(contains(l[2], "memory (300.0/256.0)"));
  CHECK(contains(l[2], "sig9"));
  CHECK(contains(l[3], "job-old"));
  CHECK_FALSE(contains(all.out, "job-ancient"));

  Run recent = run_plotq(t, "--db " + path + " ledger --since 1h --user alice");
  REQUIRE(lines(recent.out).size() == 2);
  CHECK(contains(recent.out, "job-mem"));
  Run week = run_plotq(t, "--db " + path + " ledger --since 7d --limit 10");
  CHECK(lines(week.out).size() == 5);
  Run iso = run_plotq(t, "--db " + path + " ledger --since " + iso_utc(now - 120));
  CHECK(lines(iso.out).size() == 3);

  Run j = run_plotq(t, "--db " + path + " ledger --json --kind data --limit 1");
  REQUIRE(j.rc == 0);
  auto doc = nlohmann::json::parse(j.out);
  REQUIRE(doc.size() == 1);
  CHECK(doc[0]["job_id"] == "job-refused");
  CHECK(doc[0]["outcome"] == "refused");
  CHECK(doc[0]["refusal_code"] == "daily_limit");
  CHECK(doc[0]["user"] == "bob");
  CHECK(doc[0]["exit_code"].is_null());

  CHECK(run_plotq(t, "--db " + path + " ledger --since yesterday").rc == 2);
  CHECK(run_plotq(t, "--db " + path + " ledger --kind plot").rc == 2);
  CHECK(run_plotq(t, "--db " + path + " ledger --limit 0").rc == 2);
}

TEMPLATE_TEST_CASE("cli: PLOTQ_DB names the database when --db is absent", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const TempDir& t = st.dir();
  std::string out = t.file("o");
  std::string cmd = "PLOTQ_DB=" + word(st.target()) + " " + std::string(PLOTQ_CLI_PATH) + " migrate >" + out + " 2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(contains(slurp(out), st.target()));  // a target without a password is shown as it is
  CHECK(schema_version(*st.open()) == known_schema_version(TestType::engine));
}

// PostgreSQL only (a SQLite path has no password): the conninfo's password never reaches plotq's
// output, neither when it connects (trust auth ignores it) nor when it cannot.
TEST_CASE("cli: a PostgreSQL password in --db is never printed, connected or not") {
  StoreUnderTest<OnPostgres> st;
  const TempDir& t = st.dir();
  const std::string secret = "s3cr3t-pw-4711";
  Run m = run_plotq(t, "--db " + word(st.target() + " password=" + secret) + " migrate");
  CHECK(m.rc == 0);
  CHECK(contains(m.out, "password=***"));
  Run c = run_plotq(t, "--db " + word(st.target() + " password=" + secret) + " check --json");
  CHECK(c.rc == 0);
  CHECK(contains(c.out, "password=***"));
  // A server that is not there: the error names the target, without the password.
  const std::string nowhere = "host=" + t.file("no-such-dir") + " dbname=x password=" + secret;
  for (const char* cmd : {"migrate", "quotas", "ledger", "check", "prune --dry-run"}) {
    INFO(cmd);
    Run r = run_plotq(t, "--db " + word(nowhere) + " " + cmd);
    CHECK(r.rc == 1);
    CHECK(contains(r.out + r.err, "unreachable"));
    CHECK_FALSE(contains(r.out + r.err, secret));
  }
  CHECK_FALSE(contains(m.out + m.err + c.out + c.err, secret));
}
