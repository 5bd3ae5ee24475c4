// What plotqd's store keeps across a restart: idempotency answers (claims, replays, answers kept by
// age and pruned in batches) and the start-up clean-up (running claims forgotten, abandoned turns
// ended with the error and done their streams never sent), on a real migrated SQLite file and a PostgreSQL schema (the same tests on both engines).
#include <catch2/catch.hpp>

#include "store/idempotency.hpp"
#include "store/sessions.hpp"
#include "store/turns.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using plotq::store::test::code_of;
using plotq::store::test::kNow;
using plotq::store::test::int_of;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;

TEMPLATE_TEST_CASE("turns: turns left by a previous process end as abandoned - with an error and a done above any sent id", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"q", "s", "alice", 1, TurnAction::none}, kNow);
  turns::create(*db, {"r", "s", "alice", 1, TurnAction::data}, kNow);
  turns::create(*db, {"d", "s", "alice", 1, TurnAction::none}, kNow);
  turns::start(*db, "r");
  turns::append_event(*db, "r", "ready", R"({"turn":"r"})", kNow);
  turns::append_event(*db, "r", "status", R"({"step":"running"})", kNow);
  turns::finish(*db, "d", "ok", std::nullopt, kNow + 1);
  CHECK(turns::finish_abandoned(*db, kNow + 9) == 2);
  CHECK(turns::get(*db, "q")->outcome == "abandoned");
  CHECK(turns::get(*db, "q")->code == "abandoned");
  CHECK(turns::get(*db, "r")->ended_at == kNow + 9);
  CHECK(turns::get(*db, "d")->outcome == "ok");
  CHECK(turns::active_for_user(*db, "alice") == std::nullopt);
  // The running turn: its two stored events, then error and done a gap above them.
  auto r = turns::events_after(*db, "r", 0);
  REQUIRE(r.size() == 4);
  CHECK(r[1].seq == 2);
  CHECK(r[2].seq == 2 + turns::kAbandonedSeqGap);
  CHECK(r[2].event == "error");
  CHECK(r[2].data == R"({"code":"abandoned","ref":"r"})");
  CHECK(r[3].seq == 3 + turns::kAbandonedSeqGap);
  CHECK(r[3].event == "done");
  CHECK(r[3].data == R"({"state":"error","turn":"r"})");
  // A resume after an id the dead process sent but never stored still gets both.
  CHECK(turns::events_after(*db, "r", 5).size() == 2);
  // The queued turn had no event at all; the finished one gets none.
  auto q = turns::events_after(*db, "q", 0);
  REQUIRE(q.size() == 2);
  CHECK(q[0].seq == turns::kAbandonedSeqGap);
  CHECK(turns::events_after(*db, "d", 0).empty());
  CHECK(turns::finish_abandoned(*db, kNow + 10) == 0);  // a second start finds nothing left
}

TEMPLATE_TEST_CASE("idempotency: started, running_same, done_same, conflict, forget", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  std::string kind = idempotency::kind_for_themes({"light", "dark"});
  CHECK(kind == "light,dark");
  std::string fp = idempotency::fingerprint(R"({"job_id":"j1","code":"x"})");
  std::string other = idempotency::fingerprint(R"({"job_id":"j1","code":"y"})");
  CHECK(fp.size() == 64);

  CHECK(idempotency::begin(*db, "j1", kind, fp, kNow).state == ClaimState::started);
  CHECK(idempotency::begin(*db, "j1", kind, fp, kNow).state == ClaimState::running_same);
  CHECK(idempotency::begin(*db, "j1", kind, other, kNow).state == ClaimState::conflict);
  // Another kind (themes in another order) is another key.
  CHECK(idempotency::begin(*db, "j1", "dark,light", other, kNow).state == ClaimState::started);

  idempotency::complete(*db, "j1", kind, R"({"status":"ok"})", kNow + 2);
  Claim c = idempotency::begin(*db, "j1", kind, fp, kNow + 3);
  CHECK(c.state == ClaimState::done_same);
  CHECK(c.response == R"({"status":"ok"})");
  CHECK(idempotency::begin(*db, "j1", kind, other, kNow).state == ClaimState::conflict);
  CHECK(code_of([&] { idempotency::complete(*db, "j1", kind, "{}", kNow); }) == "bad_state");
  CHECK(code_of([&] { idempotency::complete(*db, "nope", "data", "{}", kNow); }) == "not_found");
  CHECK(code_of([&] { idempotency::begin(*db, "j2", "data", "not-a-sha", kNow); }) == "constraint");

  // A failed job is forgotten so a replay runs again.
  CHECK(idempotency::begin(*db, "j3", "data", fp, kNow).state == ClaimState::started);
  CHECK(idempotency::forget(*db, "j3", "data"));
  CHECK_FALSE(idempotency::forget(*db, "j3", "data"));
  CHECK_FALSE(idempotency::forget(*db, "j1", kind));  // done answers are not forgotten
  CHECK(idempotency::begin(*db, "j3", "data", other, kNow).state == ClaimState::started);
  // At restart, running claims of the old process are dropped.
  CHECK(idempotency::forget_running(*db) == 2);  // j1/dark,light and j3
  CHECK(idempotency::begin(*db, "j1", kind, fp, kNow).state == ClaimState::done_same);
}

TEMPLATE_TEST_CASE("idempotency: answers are kept by age and pruned oldest first in batches", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  std::string fp = idempotency::fingerprint("{}");
  // Five answers finished an hour apart, completed out of claim order; two running claims.
  int order[] = {3, 0, 4, 1, 2};
  for (int i = 0; i < 5; ++i)
    REQUIRE(idempotency::begin(*db, "job" + std::to_string(i), "data", fp, kNow).state == ClaimState::started);
  for (int i = 0; i < 5; ++i)
    idempotency::complete(*db, "job" + std::to_string(order[i]), "data", "{}", kNow + 3600 * i);
  REQUIRE(idempotency::begin(*db, "run-old", "data", fp, kNow - 86400).state == ClaimState::started);
  REQUIRE(idempotency::begin(*db, "run-new", "data", fp, kNow).state == ClaimState::started);
  auto count = [&](const char* where) {
    return int_of(*db, std::string("SELECT count(*) FROM idempotency WHERE ") + where);
  };
  // More than 16 answers stay: completing never evicts (the old count cap is gone).
  for (int i = 0; i < 40; ++i) {
    std::string job = "many" + std::to_string(i);
    REQUIRE(idempotency::begin(*db, job, "data", fp, kNow).state == ClaimState::started);
    idempotency::complete(*db, job, "data", "{}", kNow + 5 * 3600);
  }
  CHECK(count("state = 'done'") == 45);

  // Cutoff after the first four answers, batch 3: the three oldest go, then the fourth, then none.
  UnixSeconds cutoff = kNow + 3 * 3600 + 1;
  CHECK(idempotency::prune_done(*db, cutoff, 3) == 3);
  CHECK(idempotency::begin(*db, "job3", "data", fp, kNow).state == ClaimState::started);  // pruned: runs again
  CHECK(idempotency::begin(*db, "job1", "data", fp, kNow).state == ClaimState::done_same);  // the fourth, not yet
  CHECK(idempotency::prune_done(*db, cutoff, 3) == 1);
  CHECK(idempotency::prune_done(*db, cutoff, 3) == 0);
  CHECK(idempotency::begin(*db, "job1", "data", fp, kNow).state == ClaimState::started);
  CHECK(idempotency::begin(*db, "job2", "data", fp, kNow).state == ClaimState::done_same);  // inside the window
  CHECK(count("state = 'done'") == 41);
  // Running claims are never pruned, however old; a batch of 0 deletes nothing.
  CHECK(count("state = 'running' AND job_id LIKE 'run-%'") == 2);
  CHECK(idempotency::prune_done(*db, kNow + 86400 * 30, 0) == 0);
  CHECK(idempotency::prune_done(*db, kNow + 86400 * 30, 1000) == 41);
  CHECK(count("state = 'running' AND job_id LIKE 'run-%'") == 2);
}
