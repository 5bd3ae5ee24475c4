// plotq prune (the real binary) and plotqd's background prune (the real daemon), both on a real
// store (a SQLite file, or a PostgreSQL schema under PLOTQ_TEST_ENGINE=postgresql) with rows of
// every family around the real clock and the default settings.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "store/migrate.hpp"
#include "tests/retention/fixture.hpp"
#include "tests/support/cli_run.hpp"
#include "tests/support/test_client.hpp"
#include "tests/support/test_store.hpp"

using namespace plotq::retention_test;
using nlohmann::json;
using plotq::test::Plotqd;
using plotq::test::TempDir;
using plotq::test::TestStore;
using namespace std::chrono_literals;

namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::map<std::string, std::int64_t> counts(const std::string& path) {
  auto db = Db::open(path);
  std::map<std::string, std::int64_t> out;
  for (const char* table : kTables)
    out[table] = std::string(table) == "sessions" ? rows(*db, table, "closed_at IS NULL") : rows(*db, table);
  return out;
}

void make_store(const std::string& path) {
  auto db = Db::open(path);
  plotq::store::migrate(*db);
  populate_live(*db, plotq::store::now_unix());
}

plotq::test::CliRun prune(const TempDir& dir, const TestStore& db, const std::string& args) {
  return plotq::test::run_cli(PLOTQ_CLI_PATH, dir.path(), "--db " + db.shell_word() + " prune " + args,
                              "PLOTQ_RETAIN_BATCH=2");
}

}  // namespace

TEST_CASE("plotq prune: --dry-run changes nothing - --now removes exactly what it listed", "[retention]") {
  TempDir dir;
  TestStore db(dir);
  make_store(db.target());
  // SQLite: the file's bytes; PostgreSQL keeps no file here, the row counts below are the check.
  const std::string file_before = db.postgres() ? "" : bytes_of(db.target());
  const auto before = counts(db.target());

  auto dry = prune(dir, db, "--dry-run --json");
  REQUIRE(dry.rc == 0);
  json listed = json::parse(dry.out);
  CHECK(listed["mode"] == "dry_run");
  CHECK(listed["tables"] == json(kLiveExpected));
  if (!db.postgres()) CHECK(bytes_of(db.target()) == file_before);  // not a byte of the store changed
  CHECK(counts(db.target()) == before);

  auto text = prune(dir, db, "--dry-run");  // the table form lists every table
  REQUIRE(text.rc == 0);
  for (const char* table : kTables) CHECK(text.out.find(std::string("\n") + table + " ") != std::string::npos);

  auto now = prune(dir, db, "--now --json");
  REQUIRE(now.rc == 0);
  json done = json::parse(now.out);
  CHECK(done["mode"] == "now");
  CHECK(done["tables"] == listed["tables"]);
  const auto after = counts(db.target());
  for (const char* table : kTables) {
    CAPTURE(table);
    CHECK(before.at(table) - after.at(table) == listed["tables"][table].get<std::int64_t>());
  }
  auto again = prune(dir, db, "--dry-run --json");
  REQUIRE(again.rc == 0);
  CHECK(json::parse(again.out)["total"] == 0);

  CHECK(prune(dir, db, "").rc == 2);
  CHECK(prune(dir, db, "--dry-run --now").rc == 2);
  CHECK(plotq::test::run_cli(PLOTQ_CLI_PATH, dir.path(), "--db " + db.shell_word() + " prune --dry-run",
                             "PLOTQ_RETAIN_LEDGER_DAYS=1").rc == 2);
}

TEST_CASE("plotqd prunes every family in the background - batch after batch - and keeps the rest", "[retention]") {
  TempDir dir;
  TestStore store(dir);
  const std::string db = store.target();
  make_store(db);
  const auto before = counts(db);
  Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", db}, {"PLOTQ_ENVIRONMENT", "development"}, {"PLOTQ_RETAIN_BATCH", "2"}});
  REQUIRE(d.wait_listening(30s));
  // One round: the first step a second after start, then 20 ms between batches.
  auto pruned = d.wait_log("retention_pruned", 15s);
  REQUIRE(pruned);
  CHECK((*pruned)["rows"] == json(kLiveExpected));
  const auto after = counts(db);
  for (const char* table : kTables) {
    CAPTURE(table);
    CHECK(before.at(table) - after.at(table) == kLiveExpected.at(table));
  }
  CHECK(d.log_events("retention_prune_failed").empty());
}
