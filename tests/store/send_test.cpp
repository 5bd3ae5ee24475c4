// Stmt::send, on both engines: a write whose answer nobody reads. On PostgreSQL inside a Tx it goes
// out in the same round trip as the next statement that waits (libpq's pipeline mode), so these
// cases pin what must not change with that: every write lands or none does, an error comes back
// with the same code at the latest by the commit, and the connection is fit for the next call.
#include <catch2/catch.hpp>

#include "store/error.hpp"
#include "store/sql.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using namespace plotq::store::test;

namespace {

void make_table(Db& db) { db.exec("CREATE TABLE pipe_t(k INTEGER PRIMARY KEY, v TEXT NOT NULL)"); }

void send_row(Db& db, std::int64_t k, const std::string& v) {
  Stmt q(db, "INSERT INTO pipe_t(k, v) VALUES (?, ?)");
  q.bind(1, k);
  q.bind(2, v);
  q.send();
}

std::int64_t rows(Db& db) { return int_of(db, "SELECT count(*) FROM pipe_t"); }

// The StoreError code f ends with ("" when it ends well).
std::string pipe_code(const std::function<void()>& f) {
  try {
    guarded("pipe test", f);
  } catch (const StoreError& e) {
    return e.code();
  }
  return "";
}

}  // namespace

TEMPLATE_TEST_CASE("send: writes sent in a transaction land together at its commit, more than one pipe's worth",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  auto other = st.open();
  make_table(*db);
  {
    Tx tx(*db, "");
    for (int k = 1; k <= 600; ++k) send_row(*db, k, "v" + std::to_string(k));
    // A read in the middle sees what was sent before it (the pipe is read up to it).
    CHECK(rows(*db) == 600);
    CHECK(rows(*other) == 0);  // not before the commit
    send_row(*db, 601, "last");
    tx.commit();
  }
  CHECK(rows(*other) == 601);
  CHECK(text_of(*other, "SELECT v FROM pipe_t WHERE k = 601") == "last");
}

TEMPLATE_TEST_CASE("send: a sent write that breaks a constraint fails the transaction at the next read, nothing of it stays",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  make_table(*db);
  send_row(*db, 1, "before");  // outside a transaction: at once, and kept
  std::string code = pipe_code([&] {
    Tx tx(*db, "quota:someone");
    send_row(*db, 2, "a");
    send_row(*db, 1, "duplicate");  // the primary key refuses it
    send_row(*db, 3, "after the failure");
    rows(*db);  // SQLite has failed at the second send already
    tx.commit();
  });
  CHECK(code == "constraint");
  CHECK(rows(*db) == 1);
  CHECK(text_of(*db, "SELECT v FROM pipe_t WHERE k = 1") == "before");
  // The connection goes on: the next transaction commits.
  {
    Tx tx(*db, "");
    send_row(*db, 2, "next");
    tx.commit();
  }
  CHECK(rows(*db) == 2);
}

TEMPLATE_TEST_CASE("send: an error first met at the commit fails the commit with its code, and the connection goes on",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  make_table(*db);
  std::string code = pipe_code([&] {
    Tx tx(*db);  // the store's write lock
    send_row(*db, 1, "a");
    Stmt bad(*db, "INSERT INTO pipe_t(k, v) VALUES (?, NULL)");  // NOT NULL refuses it
    bad.bind(1, 2);
    bad.send();
    tx.commit();
  });
  CHECK(code == "constraint");
  CHECK(rows(*db) == 0);
  CHECK(pipe_code([&] {
          Tx tx(*db, "");
          send_row(*db, 7, "fine");
          tx.commit();
        }) == "");
  CHECK(rows(*db) == 1);
}

TEMPLATE_TEST_CASE("send: a transaction let go without its commit leaves none of what it sent", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  make_table(*db);
  {
    Tx tx(*db, "datasets:s1");
    for (int k = 1; k <= 5; ++k) send_row(*db, k, "gone");
  }
  CHECK(rows(*db) == 0);
  CHECK_FALSE(db->in_transaction());
  {
    Tx tx(*db, "");
    send_row(*db, 9, "kept");
    tx.commit();
  }
  CHECK(rows(*db) == 1);
}

TEMPLATE_TEST_CASE("send: a script in the middle of a transaction goes in order with what was sent around it",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  make_table(*db);
  {
    Tx tx(*db, "");
    send_row(*db, 1, "a");
    db->exec("UPDATE pipe_t SET v = v || '+script' WHERE k = 1; INSERT INTO pipe_t(k, v) VALUES (2, 'b')");
    send_row(*db, 3, "c");
    tx.commit();
  }
  CHECK(rows(*db) == 3);
  CHECK(text_of(*db, "SELECT v FROM pipe_t WHERE k = 1") == "a+script");
  CHECK_FALSE(db->in_transaction());
}

TEMPLATE_TEST_CASE("send: outside a transaction a sent write is done when send returns", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  auto other = st.open();
  make_table(*db);
  send_row(*db, 1, "now");
  CHECK(rows(*other) == 1);
  CHECK(pipe_code([&] { send_row(*db, 1, "again"); }) == "constraint");
  CHECK(rows(*other) == 1);
}

// A text value both engines hold: PostgreSQL's text refuses a NUL byte and invalid UTF-8, so SQLite
// refuses them alike (with the same code), and a refused row leaves nothing behind.
TEMPLATE_TEST_CASE("text values: a NUL byte or invalid UTF-8 is refused as constraint on both engines", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.open();
  make_table(*db);
  for (const std::string& bad : {std::string("a\0b", 3), std::string("\xff"), std::string("\xc0\xaf"),
                                std::string("\xed\xa0\x80"), std::string("caf\xc3")}) {
    INFO(bad.size());
    CHECK(pipe_code([&] { send_row(*db, 1, bad); }) == "constraint");
    CHECK(pipe_code([&] {
            Tx tx(*db, "");
            send_row(*db, 2, "fine");
            send_row(*db, 3, bad);
            tx.commit();
          }) == "constraint");
  }
  CHECK(rows(*db) == 0);
  send_row(*db, 4, "caf\xc3\xa9 \xf0\x9f\x93\x88");  // UTF-8 of every length is kept
  CHECK(text_of(*db, "SELECT v FROM pipe_t WHERE k = 4") == "caf\xc3\xa9 \xf0\x9f\x93\x88");
}
