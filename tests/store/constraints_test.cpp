// The schema itself refuses bad rows (foreign keys, CHECKs, UNIQUE), whoever writes them: the
// repositories, plotq, or an admin with sqlite3 or psql. The same statements on both engines
// (raw() in engines.hpp: the StoreError code of the refusal).
#include <catch2/catch.hpp>

#include "store/datasets.hpp"
#include "store/ledger.hpp"
#include "store/sessions.hpp"
#include "store/turns.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using plotq::store::test::code_of;
using plotq::store::test::kNow;
using plotq::store::test::int_of;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::raw;
using plotq::store::test::StoreUnderTest;

namespace {

const std::string kT = "'2026-10-14T09:30:05Z'";
const std::string kConstraint = "constraint";  // SQLITE_CONSTRAINT; SQLSTATE class 23 on PostgreSQL
const std::string kAccepted = "";

}  // namespace

TEMPLATE_TEST_CASE("constraints: foreign keys refuse rows that point nowhere", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  sessions::create(*db, "s-bob", "bob", kNow);
  // A session of an unknown user.
  CHECK(raw(*db, std::string("INSERT INTO sessions(id, user_id, created_at) VALUES ('x', 'ghost', ") + kT + ")") == kConstraint);
  // A turn whose user does not own the session.
  CHECK(code_of([&] { turns::create(*db, {"t", "s-bob", "alice", 1, TurnAction::none}, kNow); }) == "constraint");
  CHECK(code_of([&] { turns::create(*db, {"t", "nope", "alice", 1, TurnAction::none}, kNow); }) == "constraint");
  // A ledger row naming an unknown session or turn.
  LedgerEntry e;
  e.job_id = "j";
  e.user_id = "alice";
  e.created_at = kNow;
  e.session_id = "nope";
  CHECK(code_of([&] { ledger::insert(*db, e); }) == "constraint");
  // A dataset version of an unknown session, or with a parent that does not exist.
  NewDatasetVersion v;
  v.session_id = "nope";
  v.csv = "a\n1\n";
  CHECK(code_of([&] { datasets::add_next_version(*db, v, kNow); }) == "constraint");
  v.session_id = "s";
  v.parent_version = 1;  // there is no version 1 yet (and the parent must be older)
  CHECK(code_of([&] { datasets::add_next_version(*db, v, kNow); }) == "constraint");
  v.parent_version.reset();
  CHECK(datasets::add_next_version(*db, v, kNow).version == 1);
  // Deleting a user that still has sessions.
  CHECK(raw(*db, "DELETE FROM users WHERE id = 'alice'") == kConstraint);
  // Nothing of the refused writes landed.
  CHECK(int_of(*db, "SELECT count(*) FROM runs") == 0);
  CHECK(int_of(*db, "SELECT count(*) FROM turns") == 0);
  CHECK(int_of(*db, "SELECT count(*) FROM dataset_versions") == 1);
}

TEMPLATE_TEST_CASE("constraints: CHECKs refuse misspelt vocabularies, malformed times and inconsistent rows", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  const std::string ins_run =
      "INSERT INTO runs(job_id, kind, user_id, created_at, outcome, refusal_code, wall_s) VALUES ";
  CHECK(raw(*db, ins_run + "('j', 'render', 'alice', " + kT + ", 'ok', NULL, 1.0)") == kAccepted);  // the good row
  CHECK(raw(*db, ins_run + "('j', 'plot', 'alice', " + kT + ", 'ok', NULL, 1.0)") == kConstraint);      // kind
  CHECK(raw(*db, ins_run + "('j', 'data', 'alice', " + kT + ", 'okay', NULL, 1.0)") == kConstraint);    // outcome
  CHECK(raw(*db, ins_run + "('j', 'data', 'alice', " + kT + ", 'refused', NULL, 1.0)") == kConstraint); // no code
  CHECK(raw(*db, ins_run + "('j', 'data', 'alice', " + kT + ", 'ok', 'budget', 1.0)") == kConstraint);  // code on ok
  CHECK(raw(*db, ins_run + "('j', 'data', 'alice', " + kT + ", 'ok', NULL, -1.0)") == kConstraint);     // negative
  CHECK(raw(*db, ins_run + "('j', 'data', 'alice', '2026-10-14 09:30:05', 'ok', NULL, 1.0)") == kConstraint);  // time
  CHECK(raw(*db, ins_run + "('j', 'data', 'alice', " + kT + ", 'ok', NULL, 'slow')") == kConstraint);  // STRICT: type

  CHECK(raw(*db, std::string("INSERT INTO turns(id, session_id, user_id, created_at, text_chars, status) VALUES ('t', 's', 'alice', ") + kT + ", 1, 'finished')") == kConstraint);
  CHECK(raw(*db, std::string("INSERT INTO turns(id, session_id, user_id, created_at, text_chars, status) VALUES ('t', 's', 'alice', ") + kT + ", 1, 'done')") == kConstraint);  // done needs ended_at and outcome
  CHECK(raw(*db, std::string("INSERT INTO turns(id, session_id, user_id, created_at, text_chars, scope) VALUES ('t', 's', 'alice', ") + kT + ", 1, 'rude')") == kConstraint);
  CHECK(raw(*db, std::string("UPDATE sessions SET closed_at = ") + kT + " WHERE id = 's'") == kConstraint);  // no reason
  CHECK(raw(*db, "UPDATE sessions SET close_reason = 'bored', closed_at = '2026-10-14T09:30:05Z' WHERE id = 's'") == kConstraint);

  // Dataset versions: code iff source code; bytes must match the CSV; counts not negative.
  NewDatasetVersion v;
  v.session_id = "s";
  v.csv = "a\n1\n";
  v.source = DatasetSource::paste;
  v.code = "df = 1";
  CHECK(code_of([&] { datasets::add_next_version(*db, v, kNow); }) == "constraint");
  v.source = DatasetSource::code;
  v.code.reset();
  CHECK(code_of([&] { datasets::add_next_version(*db, v, kNow); }) == "constraint");
  v.code = "df = 1";
  v.rows = -1;
  CHECK(code_of([&] { datasets::add_next_version(*db, v, kNow); }) == "constraint");
  v.rows = 1;
  CHECK(datasets::add_next_version(*db, v, kNow).version == 1);
  CHECK(raw(*db, "UPDATE dataset_versions SET bytes = 99") == kConstraint);
  CHECK(raw(*db, "UPDATE dataset_versions SET confirmed = 1") == kConstraint);  // without confirmed_at

  // Quota counters and idempotency records.
  CHECK(raw(*db, "INSERT INTO quota_days VALUES ('alice', 'messages', '2026-10-14', -1)") == kConstraint);
  CHECK(raw(*db, "INSERT INTO quota_days VALUES ('alice', 'messages', '14.10.2026', 1)") == kConstraint);
  CHECK(raw(*db, "INSERT INTO quota_minutes VALUES ('alice', 'Messages', '2026-10-14T09:30', 1)") == kConstraint);
  const std::string fp = "'" + std::string(64, 'a') + "'";
  CHECK(raw(*db, "INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j', 'data', " + fp + ", 'done', " + kT + ")") == kConstraint);  // done needs a response
  CHECK(raw(*db, "INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j', 'data', 'ABC', 'running', " + kT + ")") == kConstraint);
  CHECK(raw(*db, "INSERT INTO turn_events VALUES ('nope', 0, 'ready', '{}', " + std::string(kT) + ")") == kConstraint);
}

TEMPLATE_TEST_CASE("constraints: UNIQUE keys refuse duplicates", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"t", "s", "alice", 1, TurnAction::none}, kNow);
  CHECK(code_of([&] { turns::create(*db, {"t", "s", "alice", 1, TurnAction::none}, kNow); }) == "constraint");
  CHECK(code_of([&] { sessions::create(*db, "s", "alice", kNow); }) == "constraint");
  turns::append_event(*db, "t", "ready", "{}", kNow);
  CHECK(raw(*db, std::string("INSERT INTO turn_events VALUES ('t', 1, 'status', '{}', ") + kT + ")") == kConstraint);
  NewDatasetVersion v;
  v.session_id = "s";
  v.csv = "a\n";
  datasets::add_next_version(*db, v, kNow);
  CHECK(raw(*db, std::string("INSERT INTO dataset_versions(session_id, version, source, csv, rows, cols, bytes, created_at) VALUES ('s', 1, 'paste', 'b', 0, 0, 1, ") + kT + ")") == kConstraint);
  const std::string fp = "'" + std::string(64, 'a') + "'";
  CHECK(raw(*db, "INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j', 'data', " + fp + ", 'running', " + kT + ")") == kAccepted);
  CHECK(raw(*db, "INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j', 'data', " + fp + ", 'running', " + kT + ")") == kConstraint);
  CHECK(raw(*db, "INSERT INTO quota_limits VALUES ('messages_per_day', 1, " + std::string(kT) + "), ('messages_per_day', 2, " + kT + ")") == kConstraint);
  CHECK(int_of(*db, "SELECT count(*) FROM quota_limits") == 0);  // statement is atomic
}
