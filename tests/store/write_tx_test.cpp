// store::WriteTx: repository writes compose into one transaction (a run's ledger row and the
// answer kept for its retries are both stored or neither).
#include <catch2/catch.hpp>

#include <sstream>

#include "common/metrics.hpp"
#include "store/idempotency.hpp"
#include "store/ledger.hpp"
#include "store/write_tx.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using namespace plotq::store::test;

namespace {

const std::string kFp = idempotency::fingerprint("{}");

LedgerEntry row(const std::string& job_id) {
  LedgerEntry e;
  e.job_id = job_id;
  e.kind = RunKind::data;
  e.user_id = "alice";
  e.created_at = kNow;
  e.outcome = RunOutcome::ok;
  return e;
}

// plotq_store_commit_seconds_count{what="..."} as the registry renders it now.
double commits(const std::string& what) {
  std::istringstream in(plotq::metrics::registry().render());
  const std::string key = "plotq_store_commit_seconds_count{what=\"" + what + "\"} ";
  for (std::string l; std::getline(in, l);)
    if (l.rfind(key, 0) == 0) return std::stod(l.substr(key.size()));
  return -1;  // not registered
}

std::size_t rows_of(Db& db, const std::string& job_id) {
  LedgerQuery q;
  q.job_id = job_id;
  return ledger::query(db, q).size();
}

}  // namespace

TEMPLATE_TEST_CASE("write_tx: a ledger row and a kept answer inside one WriteTx commit together", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  REQUIRE(idempotency::begin(*db, "j", "data", kFp, kNow).state == ClaimState::started);
  {
    WriteTx tx(*db, "ledger");
    CHECK_FALSE(tx.joined());
    ledger::insert(*db, row("j"));
    idempotency::complete(*db, "j", "data", "{\"a\":1}", kNow);
    // Not visible to another connection before the commit: the inner calls joined this one.
    auto other = st.open();
    CHECK(rows_of(*other, "j") == 0);
    tx.commit();
  }
  CHECK(rows_of(*db, "j") == 1);
  CHECK(idempotency::begin(*db, "j", "data", kFp, kNow).state == ClaimState::done_same);
}

TEMPLATE_TEST_CASE("write_tx: when the answer is refused the row goes too - and the claim is still running", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  REQUIRE(idempotency::begin(*db, "j", "data", kFp, kNow).state == ClaimState::started);
  // A trigger refuses the answer (as a full disk or a broken row would), each engine's way of saying it.
  if (TestType::engine == Engine::sqlite)
    db->exec("CREATE TRIGGER refuse BEFORE UPDATE OF state ON idempotency WHEN (NEW.state = 'done') "
             "BEGIN SELECT RAISE(ABORT, 'no room'); END");
  else
    db->exec("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
             "RAISE EXCEPTION 'no room' USING ERRCODE = 'check_violation'; END $$;"
             "CREATE TRIGGER refuse BEFORE UPDATE OF state ON idempotency FOR EACH ROW WHEN (NEW.state = 'done') "
             "EXECUTE FUNCTION refuse()");
  CHECK(code_of([&] {
          WriteTx tx(*db, "ledger");
          ledger::insert(*db, row("j"));
          idempotency::complete(*db, "j", "data", "{}", kNow);
          tx.commit();
        }) == "constraint");
  CHECK(rows_of(*db, "j") == 0);
  CHECK(idempotency::begin(*db, "j", "data", kFp, kNow).state == ClaimState::running_same);
  // The connection is usable again: no transaction was left open.
  ledger::insert(*db, row("k"));
  CHECK(rows_of(*db, "k") == 1);
}

TEMPLATE_TEST_CASE("write_tx: a WriteTx inside another joins it - its commit waits for the outer one", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  {
    WriteTx outer(*db, "data_run");
    {
      WriteTx inner(*db, "ledger");
      CHECK(inner.joined());
      ledger::insert(*db, row("j"));
      inner.commit();
    }
    // The outer one is dropped without a commit: the inner's row goes with it.
  }
  CHECK(rows_of(*db, "j") == 0);
}

TEMPLATE_TEST_CASE("write_tx: an own transaction is timed once by its owner's label - a joined or dropped one is not", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  const double data_run = commits("data_run"), ledger_alone = commits("ledger");
  REQUIRE(data_run >= 0);  // present before any write
  REQUIRE(ledger_alone >= 0);
  {
    WriteTx outer(*db, "data_run");
    ledger::insert(*db, row("a"));  // joins: not timed as "ledger"
    outer.commit();
  }
  CHECK(commits("data_run") == data_run + 1);
  CHECK(commits("ledger") == ledger_alone);
  ledger::insert(*db, row("b"));  // alone: its own transaction
  CHECK(commits("ledger") == ledger_alone + 1);
  { WriteTx dropped(*db, "data_run"); }  // rolled back: no commit to time
  CHECK(commits("data_run") == data_run + 1);
}
