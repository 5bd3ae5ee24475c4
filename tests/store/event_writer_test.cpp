// The hot-path writers of plotqd: EventWriter (cached statements, seq given by the caller) and the
// Checkpointer (WAL checkpoints on a thread of their own), on real SQLite files.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include <SQLiteCpp/Transaction.h>

#include "store/checkpointer.hpp"
#include "store/error.hpp"
#include "store/sessions.hpp"
#include "store/turn_event_writer.hpp"
#include "store/turns.hpp"
#include "tests/store/helpers.hpp"

using namespace plotq::store;
using plotq::store::test::code_of;
using plotq::store::test::kNow;
using plotq::store::test::migrated;
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

TEST_CASE("EventWriter: rows with the caller's seq, one prepared statement, the store's refusals") {
  TempDir t;
  auto db = migrated(t.file("p.db"));
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
  turns::create(*db, {"b", "s", "alice", 1, TurnAction::none}, kNow);
  turns::EventWriter w(*db);
  const std::string at = iso_utc(kNow + 1);
  {
    SQLite::Transaction tx(db->sql());
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

TEST_CASE("Checkpointer: the writer stops checkpointing and the thread copies the WAL into the file") {
  TempDir t;
  {
    // Control: with auto-checkpoint off and no Checkpointer, the data stays in the WAL.
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
  CHECK(autocheckpoint(*db) == 1000);  // SQLite's default
  CHECK(code_of([&] { Checkpointer bad(*db, 0); }) == "invalid");
  {
    Checkpointer cp(*db, 20);
    CHECK(autocheckpoint(*db) == 0);
    sessions::create(*db, "s", "alice", kNow);
    turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
    write_a_lot(*db, "a");
    // Two more runs after the commit: the second started after it, so it saw all of it.
    auto seen = cp.checkpoints();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (cp.checkpoints() < seen + 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(cp.checkpoints() >= seen + 2);
    CHECK(cp.failures() == 0);
    CHECK(file_size(path) > 2 * 1024 * 1024);  // the pages are in the database file now
    // The writer goes on while the thread runs; what it commits is read back.
    turns::EventWriter w(*db);
    w.append("a", 2001, "done", "{}", iso_utc(kNow));
  }
  CHECK(autocheckpoint(*db) == 1000);  // given back
  CHECK(turns::events_after(*db, "a", 1999).size() == 2);
  CHECK(code_of([&] { Checkpointer bad(*db, 20, 0); }) == "invalid");
}

TEST_CASE("Checkpointer: under steady commits the WAL is truncated once it holds restart_pages frames") {
  TempDir t;
  const std::string path = t.file("p.db");
  auto db = migrated(path);
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
  turns::EventWriter w(*db);
  const std::string data = "{\"pad\":\"" + std::string(3000, 'x') + "\"}";  // one page a row, about
  const std::string at = iso_utc(kNow);
  Checkpointer cp(*db, 5, 64);
  // Small commits for 2 s, a fraction of a millisecond apart (a busy plotqd between requests): a
  // background PASSIVE checkpoint alone would leave the WAL growing by every commit (SQLite
  // restarts it only in a writer that begins after a checkpoint that saw its last frame).
  std::int64_t seq = 0;
  long last = 0;
  int shrank = 0;  // the WAL file got smaller: only a TRUNCATE does that (a restart reuses the file)
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until) {
    SQLite::Transaction tx(db->sql());
    w.append("a", ++seq, "status", data, at);
    tx.commit();
    long now = file_size(path + "-wal");
    shrank += now < last;
    last = now;
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  CHECK(seq > 500);  // enough commits to make many times 64 pages
  CHECK(cp.truncates() > 0);
  CHECK(cp.failures() == 0);
  // Without the TRUNCATE the WAL file only grows (it held every row written: see the control in
  // the test above); with it, it was emptied while the commits went on.
  CHECK(shrank > 0);
  CHECK(turns::events_after(*db, "a", 0, 1 << 30).size() == static_cast<std::size_t>(seq));
}
