// plotqd refuses to serve a damaged store, naming the file and the problem, and `plotq check` says
// the same to an admin; neither writes to the file or its -wal.
#include <SQLiteCpp/Database.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "tests/storage/damage.hpp"
#include "tests/support/cli_run.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq::test;
using plotq::test::damage::copy_file;
using plotq::test::damage::file_bytes;
using plotq::test::damage::fingerprint;
using plotq::test::damage::make_store;
using plotq::test::damage::overwrite;

namespace {

struct Damage {
  const char* name;
  const char* code;  // the problem plotqd and plotq check must name
  std::function<void(const std::string& dir, const std::string& db)> apply;
};

const Damage kDamages[] = {
    {"truncated", "truncated",
     [](const std::string&, const std::string& db) {
       std::filesystem::resize_file(db, std::filesystem::file_size(db) / 2 + 100);
     }},
    {"garbage pages", "corrupt",
     [](const std::string&, const std::string& db) {
       std::mt19937 rng(7);
       std::string junk(2 * 4096, '\0');
       for (auto& c : junk) c = char(rng());
       overwrite(db, 5 * 4096, junk);
     }},
    {"foreign wal", "wal_foreign",
     [](const std::string& dir, const std::string& db) {
       SQLite::Database o(dir + "/other.db", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
       o.exec("PRAGMA journal_mode=WAL");
       o.exec("PRAGMA wal_autocheckpoint=0");
       o.exec("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)");
       for (int i = 0; i < 20; ++i) o.exec("INSERT INTO notes(body) VALUES (hex(randomblob(100)))");
       copy_file(dir + "/other.db-wal", db + "-wal");
     }},
    {"not sqlite", "not_sqlite",
     [](const std::string&, const std::string& db) { overwrite(db, 0, "PK\x03\x04 a zip file, not a database"); }},
};

bool any_line_has(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("damaged start: plotqd refuses each damaged store by name and leaves it as it was") {
  for (const Damage& d : kDamages) {
    INFO(d.name);
    TempDir dir;
    std::string db = make_store(dir.file("plotq.db"));
    d.apply(dir.path(), db);
    std::string before = fingerprint(db);
    Plotqd p(PLOTQD_BINARY, {{"PLOTQ_DB", db}}, {}, false);
    auto code = p.wait_exit(20s);
    REQUIRE(code);  // wait_exit also waited for the pipes' end: every line is read
    auto err = p.stderr_lines();
    CHECK(*code == 3);
    CHECK(any_line_has(err, "plotqd: store " + db + " is damaged or not a plotq store"));
    CHECK(any_line_has(err, db + ": " + d.code + ": "));
    CHECK_FALSE(any_line_has(err, "\"event\":\"listening\""));
    auto logged = p.log_events("store_damaged");
    REQUIRE(logged.size() == 1);
    CHECK(logged[0]["problems"].dump().find(d.code) != std::string::npos);
    CHECK(fingerprint(db) == before);

    auto check = run_cli(PLOTQ_CLI_PATH, dir.path(), "--db " + db + " check");
    CHECK(check.rc == 1);
    CHECK(contains(check.out, db + ": " + d.code + ": "));
    auto json = run_cli(PLOTQ_CLI_PATH, dir.path(), "check --json --db " + db);
    CHECK(json.rc == 1);
    auto doc = nlohmann::json::parse(json.out);
    CHECK(doc["ok"] == false);
    CHECK(doc["problems"].dump().find(std::string("\"") + d.code + "\"") != std::string::npos);
    CHECK(fingerprint(db) == before);
  }
}

TEST_CASE("damaged start: plotq check passes a whole store and plotqd serves it") {
  TempDir dir;
  std::string db = make_store(dir.file("plotq.db"));
  auto full = run_cli(PLOTQ_CLI_PATH, dir.path(), "--db " + db + " check");
  CHECK(full.rc == 0);
  CHECK(contains(full.out, "ok (full check)"));
  auto quick = run_cli(PLOTQ_CLI_PATH, dir.path(), "--db " + db + " check --quick");
  CHECK(quick.rc == 0);
  CHECK(contains(quick.out, "ok (quick check)"));
  auto missing = run_cli(PLOTQ_CLI_PATH, dir.path(), "--db " + dir.file("none.db") + " check");
  CHECK(missing.rc == 1);
  CHECK(contains(missing.out, "db_missing"));
  CHECK_FALSE(std::filesystem::exists(dir.file("none.db")));
  auto bad = run_cli(PLOTQ_CLI_PATH, dir.path(), "--db " + db + " check --deep");
  CHECK(bad.rc == 2);

  Plotqd p(PLOTQD_BINARY, {{"PLOTQ_DB", db}});
  REQUIRE(p.wait_listening());
  auto r = http_request(p.port(), "GET", "/healthz");
  CHECK(r.status == 200);
  // The migration that marks the file as plotq's has run.
  p.signal(SIGTERM);
  REQUIRE(p.wait_exit());
  SQLite::Database s(db, SQLite::OPEN_READONLY);
  CHECK(s.execAndGet("PRAGMA application_id").getInt64() == plotq::store::kApplicationId);
}
