// A process that dies in the middle of a write leaves the database as it was before the write.
// The child is forked, opens its own connection, writes inside a transaction and _exits before
// the commit; the parent reopens the file and checks the old state. SQLite-only but the last test:
// the commit hook, the WAL spilling before a commit and integrity_check are SQLite's own; a writer
// killed by SIGKILL is tested on both engines (engines.hpp).
#include <sqlite3.h>
#include <signal.h>

#include <catch2/catch.hpp>

#include <SQLiteCpp/Transaction.h>

#include "store/datasets.hpp"
#include "store/quotas.hpp"
#include "store/sessions.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using plotq::store::test::in_child;
using plotq::store::test::kNow;
using plotq::store::test::migrated;
using plotq::store::test::int_of;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;
using plotq::store::test::TempDir;

namespace {

// Makes the connection die (the whole process) at the moment SQLite is about to commit: every
// statement of the transaction has run, nothing is committed.
void die_at_commit(Db& db) {
  sqlite3_commit_hook(db.sql().getHandle(), [](void*) -> int { ::_exit(42); }, nullptr);
}

int count(const std::string& path, const std::string& sql) {
  auto db = Db::open(path);
  return db->sql().execAndGet(sql).getInt();
}

}  // namespace

TEST_CASE("crash: a child that writes in a transaction and exits without commit changes nothing") {
  TempDir t;
  std::string path = t.file("p.db");
  {
    auto db = migrated(path);
    sessions::create(*db, "s", "alice", kNow);
  }
  int rc = in_child([&] {
    auto db = Db::open(path);
    db->sql().exec("PRAGMA cache_size = 8");  // small cache: pages spill into the WAL before commit
    SQLite::Transaction tx(db->sql(), SQLite::TransactionBehavior::IMMEDIATE);
    for (int i = 0; i < 2000; ++i)
      db->sql().exec("INSERT INTO sessions(id, user_id, created_at) VALUES ('c" + std::to_string(i) +
                     "', 'alice', '2026-10-14T09:30:05Z')");
    db->sql().exec("UPDATE sessions SET closed_at = '2026-10-14T09:31:00Z', close_reason = 'admin' WHERE id = 's'");
    if (db->sql().execAndGet("SELECT count(*) FROM sessions").getInt() != 2001) return 1;  // it really wrote
    ::_exit(0);  // no commit, no rollback, no close
  });
  REQUIRE(rc == 0);
  CHECK(count(path, "SELECT count(*) FROM sessions") == 1);
  CHECK(count(path, "SELECT count(*) FROM sessions WHERE closed_at IS NULL") == 1);
  auto db = Db::open(path);
  CHECK(db->sql().execAndGet("PRAGMA integrity_check").getString() == "ok");
  // And the file still takes writes.
  sessions::create(*db, "after", "alice", kNow);
  CHECK(db->sql().execAndGet("SELECT count(*) FROM sessions").getInt() == 2);
}

TEST_CASE("crash: dying at the commit of add_next_version leaves the versions as they were") {
  TempDir t;
  std::string path = t.file("p.db");
  NewDatasetVersion v;
  v.session_id = "s";
  v.csv = "x\n1\n";
  v.rows = 1;
  v.cols = 1;
  {
    auto db = migrated(path);
    sessions::create(*db, "s", "alice", kNow);
    datasets::add_next_version(*db, v, kNow);
  }
  int rc = in_child([&] {
    auto db = Db::open(path);
    die_at_commit(*db);
    datasets::add_next_version(*db, v, kNow + 1);
    return 0;  // not reached: the hook ends the process
  });
  REQUIRE(rc == 42);
  auto db = Db::open(path);
  CHECK(datasets::latest_version(*db, "s") == 1);
  CHECK(datasets::add_next_version(*db, v, kNow + 2).version == 2);
}

TEST_CASE("crash: dying at the commit of a quota booking books nothing") {
  TempDir t;
  std::string path = t.file("p.db");
  {
    auto db = migrated(path);
    quotas::book(*db, "alice", Counter::messages, kNow, 10, 10);
  }
  int rc = in_child([&] {
    auto db = Db::open(path);
    die_at_commit(*db);
    quotas::book(*db, "alice", Counter::messages, kNow, 10, 10);
    return 0;
  });
  REQUIRE(rc == 42);
  auto db = Db::open(path);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).day == 1);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).minute == 1);
}

TEMPLATE_TEST_CASE("crash: a child killed by SIGKILL in the middle of a long write changes nothing", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const std::string target = st.target();
  { st.migrated(); }
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    try {
      auto db = Db::open(target);
      Tx tx(*db);
      for (int i = 0;; ++i) {
        db->exec("INSERT INTO users(id, created_at) VALUES ('u" + std::to_string(i) + "', '2026-10-14T09:30:05Z')");
        if (i == 500) (void)!::write(ready[1], "x", 1);  // mid-transaction: tell the parent
      }
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(ready[1]);
  char c;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(ready[0]);
  REQUIRE(WIFSIGNALED(status));
  auto db = st.open();
  CHECK(int_of(*db, "SELECT count(*) FROM users") == 0);
  // The store's write lock went with the dead writer: a write goes through at once.
  sessions::create(*db, "after", "alice", kNow);
  CHECK(int_of(*db, "SELECT count(*) FROM users") == 1);
}
