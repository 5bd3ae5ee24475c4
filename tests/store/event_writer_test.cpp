// The hot-path writers of plotqd: EventWriter (cached statements, seq given by the caller) and the
// WAL checkpoints on the writer's own connection (store/checkpoint.hpp). The writer runs on both
// engines (engines.hpp); the checkpoints are SQLite's WAL alone, so those tests are SQLite-only.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <SQLiteCpp/Transaction.h>

#include "store/checkpoint.hpp"
#include "store/error.hpp"
#include "store/sessions.hpp"
#include "store/turn_event_writer.hpp"
#include "store/turns.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using plotq::store::test::code_of;
using plotq::store::test::kNow;
using plotq::store::test::migrated;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;
using plotq::store::test::TempDir;

namespace {

long file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

int autocheckpoint(Db& db) { return db.sql().execAndGet("PRAGMA wal_autocheckpoint").getInt(); }

// About 2 MiB of turn events in one commit (the WAL grows by that much).
void write_a_lot(Db& db, const std::string& turn) {
  turns::EventWriter w(db);
  const std::string data = "{\"pad\":\"" + std::string(1000, 'x') + "\"}";
  const std::string at = iso_utc(kNow);
  SQLite::Transaction tx(db.sql());
  for (int i = 1; i <= 2000; ++i) w.append(turn, i, "status", data, at);
  tx.commit();
}

}  // namespace

TEMPLATE_TEST_CASE("EventWriter: rows with the caller's seq, one prepared statement, the store's refusals", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
  turns::create(*db, {"b", "s", "alice", 1, TurnAction::none}, kNow);
  turns::EventWriter w(*db);
  const std::string at = iso_utc(kNow + 1);
  {
    Tx tx(*db);
    w.append("a", 1, "ready", R"({"turn":"a"})", at);
    w.append("b", 1, "ready", "{}", at);
    w.append("a", 2, "status", R"({"position":1,"step":"queued","waiting":1})", at);
    tx.commit();
  }
  auto a = turns::events_after(*db, "a", 0);
  REQUIRE(a.size() == 2);
  CHECK(a[0].seq == 1);
  CHECK(a[0].event == "ready");
  CHECK(a[1].data == R"({"position":1,"step":"queued","waiting":1})");
  CHECK(a[1].created_at == kNow + 1);
  CHECK(turns::events_after(*db, "b", 0).size() == 1);

  // A seq given twice is refused (the primary key), never stored twice; so are the rows the
  // schema refuses. The statement stays usable after each failure.
  CHECK(code_of([&] { w.append("a", 2, "message", "{}", at); }) == "constraint");
  CHECK(code_of([&] { w.append("ghost", 1, "ready", "{}", at); }) == "constraint");
  CHECK(code_of([&] { w.append("a", 3, "message", "{not json", at); }) == "constraint");
  CHECK(code_of([&] { w.append("a", 3, "Bad Name", "{}", at); }) == "constraint");
  w.append("a", 3, "message", R"({"text":"hi"})", at);
  CHECK(turns::events_after(*db, "a", 2).size() == 1);
  // turns::append_event still numbers after the rows the writer made.
  CHECK(turns::append_event(*db, "a", "message", "{}", kNow) == 4);

  w.finish("a", "refused", std::string("daily_limit"), iso_utc(kNow + 2));
  auto tr = turns::get(*db, "a");
  REQUIRE(tr);
  CHECK(tr->status == TurnStatus::done);
  CHECK(tr->outcome == "refused");
  CHECK(tr->code == "daily_limit");
  CHECK(tr->ended_at == kNow + 2);
  w.finish("b", "ok", std::nullopt, at);
  CHECK_FALSE(turns::get(*db, "b")->code);  // a code bound earlier does not stick to the next row
  CHECK(code_of([&] { w.finish("a", "ok", std::nullopt, at); }) == "bad_state");
  CHECK(code_of([&] { w.finish("ghost", "ok", std::nullopt, at); }) == "not_found");
  // Two writers on one Db share the Db's cached statements; the Db closes with them (no
  // "database is locked" at close: the statements are finalized first).
  turns::EventWriter w2(*db);
  turns::create(*db, {"c", "s", "alice", 1, TurnAction::none}, kNow);
  w2.append("c", 1, "ready", "{}", at);
  CHECK(turns::events_after(*db, "c", 0).size() == 1);
  db.reset();
}

TEST_CASE("checkpoint: a PASSIVE run on the writer's own connection copies the WAL into the file") {
  TempDir t;
  {
    // Control: with auto-checkpoint off and no checkpoint, the data stays in the WAL.
    auto db = migrated(t.file("control.db"));
    db->sql().exec("PRAGMA wal_autocheckpoint=0");
    sessions::create(*db, "s", "alice", kNow);
    turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
    write_a_lot(*db, "a");
    CHECK(file_size(t.file("control.db")) < 1024 * 1024);
    CHECK(file_size(t.file("control.db-wal")) > 2 * 1024 * 1024);
  }
  const std::string path = t.file("p.db");
  auto db = migrated(path);
  CHECK(autocheckpoint(*db) == 1000);  // SQLite's default: plotqd's timer turns it off itself
  db->sql().exec("PRAGMA wal_autocheckpoint=0");
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
  write_a_lot(*db, "a");
  CheckpointRun run = checkpoint(*db);
  CHECK_FALSE(run.busy);
  CHECK(run.wal_frames > 500);
  CHECK(run.complete());
  CHECK(file_size(path) > 2 * 1024 * 1024);  // the pages are in the database file now
  // A reader that holds an older snapshot keeps its frames in the WAL: PASSIVE copies what it
  // may, does not wait, and says so.
  auto reader = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READONLY);
  reader->exec("BEGIN");
  CHECK(reader->execAndGet("SELECT count(*) FROM turn_events").getInt() == 2000);
  turns::EventWriter w(*db);
  w.append("a", 2001, "done", "{}", iso_utc(kNow));
  run = checkpoint(*db);
  CHECK_FALSE(run.complete());
  CHECK(run.copied < run.wal_frames);
  reader.reset();
  CHECK(checkpoint(*db).complete());
  CHECK(turns::events_after(*db, "a", 1999).size() == 2);
}

TEST_CASE("checkpoint: under steady commits the WAL starts over and its file is cut back to PLOTQ_DB_WAL_KEEP_KIB") {
  TempDir t;
  const std::string path = t.file("p.db");
  Options o;
  o.wal_keep_kib = 256;
  auto db = Db::open(path, o);
  migrate(*db);
  db->sql().exec("PRAGMA wal_autocheckpoint=0");
  CHECK(db->sql().execAndGet("PRAGMA journal_size_limit").getInt64() == 256 * 1024);
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
  write_a_lot(*db, "a");  // the WAL file grows well past the limit
  CHECK(file_size(path + "-wal") > 1024 * 1024);
  turns::EventWriter w(*db);
  const std::string at = iso_utc(kNow);
  // Small commits with a checkpoint every tenth, as plotqd's timer does between requests: after a
  // complete checkpoint the next commit restarts the WAL, so each run finds only the frames of the
  // commits since the last one (without the restart they would add up, run after run).
  std::int64_t seq = 2000;
  std::vector<int> frames;
  for (int i = 0; i < 200; ++i) {
    w.append("a", ++seq, "status", "{\"pad\":\"" + std::string(1000, 'y') + "\"}", at);
    if (i % 10 == 9) {
      CheckpointRun run = checkpoint(*db);
      CHECK(run.complete());
      frames.push_back(run.wal_frames);
    }
  }
  REQUIRE(frames.size() == 20);
  CHECK(frames[0] > 500);          // the burst and the first ten commits
  CHECK(frames[1] > 0);
  CHECK(frames.back() <= frames[1] + 2);  // not 19 times as many: the WAL started over each time
  CHECK(file_size(path + "-wal") <= 256 * 1024 + 64 * 1024);  // cut back; a few frames may follow
  CHECK(turns::events_after(*db, "a", 0, 1 << 30).size() == static_cast<std::size_t>(seq));
  CHECK(db->sql().execAndGet("PRAGMA integrity_check").getString() == "ok");
}

TEST_CASE("has_wal_reset_bug: SQLite 3.7.0 to 3.51.2 but the 3.44.6 and 3.50.7 backports") {
  CHECK_FALSE(has_wal_reset_bug(3'006'023));  // before WAL
  CHECK(has_wal_reset_bug(3'007'000));
  CHECK(has_wal_reset_bug(3'040'001));  // Debian 12
  CHECK(has_wal_reset_bug(3'044'005));
  CHECK_FALSE(has_wal_reset_bug(3'044'006));
  CHECK(has_wal_reset_bug(3'046'001));  // Debian 13
  CHECK(has_wal_reset_bug(3'050'006));
  CHECK_FALSE(has_wal_reset_bug(3'050'007));
  CHECK(has_wal_reset_bug(3'051'002));
  CHECK_FALSE(has_wal_reset_bug(3'051'003));
  CHECK_FALSE(has_wal_reset_bug(3'052'000));
}
