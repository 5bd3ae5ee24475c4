// Round trips through every repository, on a real migrated SQLite file and a real PostgreSQL schema
// (tests/store/engines.hpp: the same test code on both engines).
#include <catch2/catch.hpp>

#include "store/datasets.hpp"
#include "store/ids.hpp"
#include "store/ledger.hpp"
#include "store/quotas.hpp"
#include "store/sessions.hpp"
#include "store/strikes.hpp"
#include "store/turn_plots.hpp"
#include "store/turns.hpp"
#include "store/users.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using plotq::store::test::code_of;
using plotq::store::test::kNow;
using plotq::store::test::int_of;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;

TEMPLATE_TEST_CASE("users: ensure is idempotent and keeps the first time, labels round trip", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  users::ensure(*db, "alice", kNow);
  users::ensure(*db, "alice", kNow + 100);
  auto u = users::get(*db, "alice");
  REQUIRE(u);
  CHECK(u->created_at == kNow);
  CHECK_FALSE(u->label);
  users::set_label(*db, "alice", std::string("Alice A."));
  CHECK(users::get(*db, "alice")->label == "Alice A.");
  CHECK(code_of([&] { users::set_label(*db, "bob", std::nullopt); }) == "not_found");
  CHECK_FALSE(users::get(*db, "bob"));
  CHECK(users::list(*db).size() == 1);
  CHECK(code_of([&] { users::ensure(*db, "", kNow); }) == "invalid");
  CHECK(code_of([&] { users::ensure(*db, std::string(129, 'x'), kNow); }) == "invalid");
}

TEMPLATE_TEST_CASE("sessions: create, get, close once, list, scope refusals", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s1", "alice", kNow);
  sessions::create(*db, "s2", "alice", kNow + 10);
  REQUIRE(users::get(*db, "alice"));  // made on first use
  auto s = sessions::get(*db, "s1");
  REQUIRE(s);
  CHECK(s->user_id == "alice");
  CHECK(s->created_at == kNow);
  CHECK(s->open());
  CHECK(code_of([&] { sessions::create(*db, "s1", "bob", kNow); }) == "constraint");

  CHECK(sessions::close(*db, "s1", CloseReason::refusals, kNow + 60));
  CHECK_FALSE(sessions::close(*db, "s1", CloseReason::admin, kNow + 70));  // first reason stays
  s = sessions::get(*db, "s1");
  CHECK_FALSE(s->open());
  CHECK(s->closed_at == kNow + 60);
  CHECK(s->close_reason == CloseReason::refusals);
  CHECK(code_of([&] { sessions::close(*db, "nope", CloseReason::admin, kNow); }) == "not_found");

  auto all = sessions::list_for_user(*db, "alice");
  REQUIRE(all.size() == 2);
  CHECK(all[0].id == "s2");  // newest first
  auto open = sessions::list_for_user(*db, "alice", true);
  REQUIRE(open.size() == 1);
  CHECK(open[0].id == "s2");

  for (int i = 0; i < 4; ++i) turns::create(*db, {"t" + std::to_string(i), "s2", "alice", 5, TurnAction::none}, kNow);
  turns::set_scope(*db, "t0", ScopeVerdict::out_of_scope);
  turns::set_scope(*db, "t1", ScopeVerdict::attack);
  turns::set_scope(*db, "t2", ScopeVerdict::needs_data);  // never counts
  CHECK(sessions::scope_refusals(*db, "s2") == 2);
}

TEMPLATE_TEST_CASE("turns: lifecycle queued -> running -> done, with state errors", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"turn1", "s", "alice", 42, TurnAction::plot}, kNow + 1);
  auto tr = turns::get(*db, "turn1");
  REQUIRE(tr);
  CHECK(tr->status == TurnStatus::queued);
  CHECK(tr->action == TurnAction::plot);
  CHECK(tr->text_chars == 42);
  CHECK(tr->scope == ScopeVerdict::none);
  CHECK(turns::active_for_user(*db, "alice")->id == "turn1");

  CHECK(code_of([&] { turns::finish(*db, "nope", "ok", std::nullopt, kNow); }) == "not_found");
  turns::start(*db, "turn1");
  CHECK(code_of([&] { turns::start(*db, "turn1"); }) == "bad_state");
  CHECK(turns::get(*db, "turn1")->status == TurnStatus::running);
  turns::finish(*db, "turn1", "refused", std::string("daily_limit"), kNow + 5);
  tr = turns::get(*db, "turn1");
  CHECK(tr->status == TurnStatus::done);
  CHECK(tr->outcome == "refused");
  CHECK(tr->code == "daily_limit");
  CHECK(tr->ended_at == kNow + 5);
  CHECK(code_of([&] { turns::finish(*db, "turn1", "ok", std::nullopt, kNow); }) == "bad_state");
  CHECK_FALSE(turns::active_for_user(*db, "alice"));
  CHECK(turns::list_for_session(*db, "s").size() == 1);
}

TEMPLATE_TEST_CASE("turns: events get seq 1, 2, 3 and resume after a seq", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"a", "s", "alice", 1, TurnAction::none}, kNow);
  turns::create(*db, {"b", "s", "alice", 1, TurnAction::none}, kNow);
  CHECK(turns::append_event(*db, "a", "ready", R"({"v":"plotq/1","run_id":"a"})", kNow) == 1);
  CHECK(turns::append_event(*db, "b", "ready", "{}", kNow) == 1);  // per turn
  CHECK(turns::append_event(*db, "a", "status", R"({"step":"queued","position":2})", kNow + 1) == 2);
  CHECK(turns::append_event(*db, "a", "done", R"({"llm_calls":0})", kNow + 2) == 3);
  auto all = turns::events_after(*db, "a", 0);
  REQUIRE(all.size() == 3);
  CHECK(all[0].event == "ready");
  CHECK(all[1].data == R"({"step":"queued","position":2})");
  CHECK(all[2].seq == 3);
  CHECK(all[2].created_at == kNow + 2);
  auto rest = turns::events_after(*db, "a", 1);
  REQUIRE(rest.size() == 2);
  CHECK(rest[0].seq == 2);
  CHECK(turns::events_after(*db, "a", 3).empty());
  CHECK(turns::events_after(*db, "a", 0, 1).size() == 1);
  CHECK(code_of([&] { turns::append_event(*db, "a", "message", "{not json", kNow); }) == "constraint");
  CHECK(code_of([&] { turns::append_event(*db, "ghost", "ready", "{}", kNow); }) == "constraint");
  CHECK(code_of([&] { turns::append_event(*db, "a", "Bad Name", "{}", kNow); }) == "constraint");
  CHECK(turns::events_after(*db, "a", 0).size() == 3);
}

TEMPLATE_TEST_CASE("ledger: every field round trips, queries filter and order newest first", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"turn", "s", "alice", 3, TurnAction::plot}, kNow);
  LedgerEntry e;
  e.job_id = "job-1";
  e.kind = RunKind::render;
  e.user_id = "alice";
  e.session_id = "s";
  e.turn_id = "turn";
  e.theme = "dark";
  e.created_at = kNow;
  e.slot_wait_s = 0.25;
  e.wall_s = 1.5;
  e.cpu_s = 1.25;
  e.exit_code = 137;
  e.signal = 9;
  e.timed_out = true;
  e.reason = "memory";
  e.measured = 300.5;
  e.limit = 256;
  e.max_rss_mb = 299.75;
  e.attempts = 2;
  e.outcome = RunOutcome::failed;
  e.runtime_id = "257f08b63c84";
  std::int64_t id = ledger::insert(*db, e);
  CHECK(id > 0);
  auto got = ledger::query(*db, {});
  REQUIRE(got.size() == 1);
  const LedgerEntry& g = got[0];
  CHECK(g.id == id);
  CHECK(g.job_id == "job-1");
  CHECK(g.kind == RunKind::render);
  CHECK(g.user_id == "alice");
  CHECK(g.session_id == "s");
  CHECK(g.turn_id == "turn");
  CHECK(g.theme == "dark");
  CHECK(g.created_at == kNow);
  CHECK(g.slot_wait_s == 0.25);
  CHECK(g.wall_s == 1.5);
  CHECK(g.cpu_s == 1.25);
  CHECK(g.exit_code == 137);
  CHECK(g.signal == 9);
  CHECK(g.timed_out);
  CHECK(g.reason == "memory");
  CHECK(g.measured == 300.5);
  CHECK(g.limit == 256.0);
  CHECK(g.max_rss_mb == 299.75);
  CHECK(g.attempts == 2);
  CHECK(g.outcome == RunOutcome::failed);
  CHECK_FALSE(g.refusal_code);
  CHECK(g.runtime_id == "257f08b63c84");
  CHECK(int_of(*db, "SELECT count(runtime_id) FROM v_runs_recent") == 0);  // the view has it

  // A refused data run by another user (made on first use), an hour later.
  LedgerEntry r;
  r.job_id = "job-2";
  r.kind = RunKind::data;
  r.user_id = "bob";
  r.created_at = kNow + 3600;
  r.outcome = RunOutcome::refused;
  r.refusal_code = "daily_limit";
  r.attempts = 0;
  ledger::insert(*db, r);
  auto all = ledger::query(*db, {});
  REQUIRE(all.size() == 2);
  CHECK(all[0].job_id == "job-2");
  CHECK_FALSE(all[0].runtime_id);  // an unknown runtime
  CHECK_FALSE(all[0].exit_code);
  CHECK_FALSE(all[0].max_rss_mb);
  LedgerQuery q;
  q.user_id = "alice";
  CHECK(ledger::query(*db, q).size() == 1);
  q = {};
  q.since = kNow + 1;
  REQUIRE(ledger::query(*db, q).size() == 1);
  CHECK(ledger::query(*db, q)[0].user_id == "bob");
  q = {};
  q.kind = RunKind::render;
  CHECK(ledger::query(*db, q).size() == 1);
  q = {};
  q.job_id = "job-2";
  CHECK(ledger::query(*db, q).size() == 1);
  q = {};
  q.limit = 1;
  CHECK(ledger::query(*db, q).size() == 1);

  // The runtime id is 12 lower-case hex or nothing.
  for (const char* bad : {"257F08B63C84", "257f08b63c8", "257f08b63c84x", "../../etc/x"}) {
    INFO(bad);
    LedgerEntry x = r;
    x.job_id = "job-x";
    x.runtime_id = bad;
    CHECK(code_of([&] { ledger::insert(*db, x); }) == "constraint");
  }
}

TEMPLATE_TEST_CASE("datasets: versions count 1, 2, 3 per session, with get, latest, list, confirm", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  sessions::create(*db, "other", "bob", kNow);
  CHECK(datasets::latest_version(*db, "s") == 0);
  CHECK_FALSE(datasets::get(*db, "s", 0));

  NewDatasetVersion code_v;
  code_v.session_id = "s";
  code_v.source = DatasetSource::code;
  code_v.csv = "x,y\n1,2\n2,4\n";
  code_v.code = "import numpy as np\ndf = ...";
  code_v.rows = 2;
  code_v.cols = 2;
  code_v.job_id = "job-9";
  auto v1 = datasets::add_next_version(*db, code_v, kNow);
  CHECK(v1.version == 1);
  CHECK(v1.bytes == 12);

  NewDatasetVersion paste;
  paste.session_id = "s";
  paste.source = DatasetSource::paste;
  paste.csv = "a\n\xc3\xa9\n";  // UTF-8: bytes, not characters
  paste.rows = 1;
  paste.cols = 1;
  paste.parent_version = 1;
  auto v2 = datasets::add_next_version(*db, paste, kNow + 5);
  CHECK(v2.version == 2);
  paste.session_id = "other";
  paste.parent_version.reset();
  CHECK(datasets::add_next_version(*db, paste, kNow).version == 1);  // numbered per session

  CHECK(datasets::latest_version(*db, "s") == 2);
  auto latest = datasets::get(*db, "s", 0);
  REQUIRE(latest);
  CHECK(latest->version == 2);
  CHECK(latest->bytes == 5);
  CHECK(latest->source == DatasetSource::paste);
  CHECK_FALSE(latest->code);
  CHECK(latest->parent_version == 1);
  auto first = datasets::get(*db, "s", 1);
  REQUIRE(first);
  CHECK(first->csv == code_v.csv);
  CHECK(first->code == code_v.code);
  CHECK(first->job_id == "job-9");
  CHECK(first->rows == 2);
  CHECK_FALSE(first->confirmed);
  CHECK_FALSE(datasets::get(*db, "s", 3));

  CHECK(datasets::confirm(*db, "s", 1, kNow + 100));
  CHECK(datasets::confirm(*db, "s", 1, kNow + 200));  // keeps the first time
  first = datasets::get(*db, "s", 1);
  CHECK(first->confirmed);
  CHECK(first->confirmed_at == kNow + 100);
  CHECK_FALSE(datasets::confirm(*db, "s", 7, kNow));

  auto list = datasets::list(*db, "s");
  REQUIRE(list.size() == 2);
  CHECK(list[0].version == 1);
  CHECK(list[0].confirmed);
  CHECK(list[1].version == 2);
  CHECK(int_of(*db, "SELECT version FROM v_datasets WHERE session_id = 's'") == 2);
  CHECK(int_of(*db, "SELECT versions FROM v_datasets WHERE session_id = 's'") == 2);
}

TEMPLATE_TEST_CASE("quotas: book up to the cap, refuse without incrementing, minute and day windows", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  // 3 per day, 2 per minute.
  for (int i = 0; i < 2; ++i) {
    Booking b = quotas::book(*db, "alice", Counter::messages, kNow, 3, 2);
    CHECK(b.booked());
    CHECK(b.day_count == i + 1);
    CHECK(b.minute_count == i + 1);
  }
  Booking third = quotas::book(*db, "alice", Counter::messages, kNow + 1, 3, 2);
  CHECK(third.verdict == BookVerdict::minute_limit);
  CHECK(third.day_count == 2);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).day == 2);  // nothing booked
  // Next minute: one more fits the day, then the day cap refuses.
  CHECK(quotas::book(*db, "alice", Counter::messages, kNow + 60, 3, 2).booked());
  CHECK(quotas::book(*db, "alice", Counter::messages, kNow + 61, 3, 2).verdict == BookVerdict::day_limit);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow + 61).day == 3);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow + 61).minute == 1);
  // Older minute rows were pruned by the booking of the next minute.
  CHECK(int_of(*db, "SELECT count(*) FROM quota_minutes WHERE user_id = 'alice'") == 1);
  // The next UTC day starts from zero.
  CHECK(quotas::book(*db, "alice", Counter::messages, kNow + 86400, 3, 2).day_count == 1);
  // Counters are separate; no cap = always booked.
  for (int i = 0; i < 5; ++i) CHECK(quotas::book(*db, "alice", Counter::data_runs, kNow, std::nullopt, std::nullopt).booked());
  CHECK(quotas::counts(*db, "alice", Counter::data_runs, kNow).day == 5);
  // A zero cap refuses the first.
  CHECK(quotas::book(*db, "bob", Counter::pipeline_runs, kNow, 0, std::nullopt).verdict == BookVerdict::day_limit);
  CHECK_FALSE(users::get(*db, "bob"));  // a refused booking writes nothing at all
}

TEMPLATE_TEST_CASE("quotas: unbook gives one back, never below zero", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  quotas::book(*db, "alice", Counter::messages, kNow, 10, 10);
  quotas::book(*db, "alice", Counter::messages, kNow, 10, 10);
  quotas::unbook(*db, "alice", Counter::messages, kNow);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).day == 1);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).minute == 1);
  quotas::unbook(*db, "alice", Counter::messages, kNow);
  quotas::unbook(*db, "alice", Counter::messages, kNow);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).day == 0);
}

TEMPLATE_TEST_CASE("quotas: usage per day, limits table, admin reset, and v_quota_today", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  for (int i = 0; i < 3; ++i) quotas::book(*db, "alice", Counter::messages, kNow, 200, 10);
  quotas::book(*db, "alice", Counter::data_runs, kNow, 30, std::nullopt);
  quotas::book(*db, "bob", Counter::pipeline_runs, kNow, 40, std::nullopt);
  quotas::book(*db, "carol", Counter::messages, kNow - 86400, 200, 10);  // yesterday
  strikes::add(*db, "alice", "attack", kNow);

  auto rows = quotas::usage(*db, utc_day(kNow), kNow);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].user_id == "alice");
  CHECK(rows[0].messages == 3);
  CHECK(rows[0].messages_this_minute == 3);
  CHECK(rows[0].data_runs == 1);
  CHECK(rows[0].pipeline_runs == 0);
  CHECK(rows[0].strikes == 1);
  CHECK(rows[1].user_id == "bob");
  CHECK(rows[1].pipeline_runs == 1);
  auto one = quotas::usage(*db, utc_day(kNow), kNow, std::string("dave"));
  REQUIRE(one.size() == 1);  // a user without counters gets a zero row
  CHECK(one[0].messages == 0);
  CHECK(quotas::usage(*db, utc_day(kNow - 86400), kNow).size() == 1);
  CHECK(code_of([&] { quotas::usage(*db, "yesterday", kNow); }) == "invalid");

  quotas::write_limits(*db, {{kLimitMessagesPerDay, 200}, {kLimitMessagesPerMinute, 10}, {"session_refusals", 3}}, kNow);
  quotas::write_limits(*db, {{kLimitMessagesPerDay, 150}, {kLimitMessagesPerMinute, 10}}, kNow);  // replaces
  auto limits = quotas::read_limits(*db);
  CHECK(limits.size() == 2);
  CHECK(limits[kLimitMessagesPerDay] == 150);
  CHECK(limit_name(Counter::data_runs, false) == kLimitDataRunsPerDay);
  CHECK(limit_name(Counter::messages, true) == kLimitMessagesPerMinute);

  // v_quota_today reads 'now' from the clock: book at the real time for it.
  UnixSeconds real_now = now_unix();
  quotas::book(*db, "erin", Counter::messages, real_now, 200, 10);
  quotas::book(*db, "erin", Counter::data_runs, real_now, 200, 10);
  Stmt v(*db, "SELECT messages, messages_limit, data_runs, data_runs_limit, pipeline_runs FROM v_quota_today WHERE user_id = 'erin'");
  REQUIRE(v.executeStep());
  CHECK(v.getColumn(0).getInt() == 1);
  CHECK(v.getColumn(1).getInt() == 150);
  CHECK(v.getColumn(2).getInt() == 1);
  CHECK(v.getColumn(3).isNull());  // no limit written for data runs
  CHECK(v.getColumn(4).getInt() == 0);

  // Admin reset of one counter, then of all of them, for the day of `now`.
  CHECK(quotas::reset(*db, "alice", Counter::data_runs, kNow) == 2);  // its day and minute rows
  CHECK(quotas::counts(*db, "alice", Counter::data_runs, kNow).day == 0);
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).day == 3);
  CHECK(quotas::reset(*db, "alice", std::nullopt, kNow) == 2);  // messages day + minute rows
  CHECK(quotas::counts(*db, "alice", Counter::messages, kNow).day == 0);
  CHECK(quotas::book(*db, "alice", Counter::messages, kNow, 3, 1).booked());
}

TEMPLATE_TEST_CASE("strikes: add, count in a window, lockout, list, clear", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  strikes::add(*db, "alice", "attack", kNow - 7200, std::string("s"));
  strikes::add(*db, "alice", "attack", kNow - 60);
  strikes::add(*db, "alice", "dataset", kNow);
  CHECK(strikes::count_since(*db, "alice", kNow - 3600) == 2);
  CHECK(strikes::count_since(*db, "alice", kNow - 3600, std::string("attack")) == 1);
  CHECK(strikes::locked_out(*db, "alice", kNow, 2, 3600));
  CHECK_FALSE(strikes::locked_out(*db, "alice", kNow, 3, 3600));
  CHECK(strikes::locked_out(*db, "alice", kNow, 3, 86400));
  CHECK_FALSE(strikes::locked_out(*db, "alice", kNow, 0, 86400));  // 0 = never
  auto list = strikes::list(*db, "alice");
  REQUIRE(list.size() == 3);
  CHECK(list[0].kind == "dataset");
  CHECK(list[2].session_id == "s");
  CHECK(list[2].at == kNow - 7200);
  CHECK(strikes::clear(*db, "alice") == 3);
  CHECK_FALSE(strikes::locked_out(*db, "alice", kNow, 1, 86400));
  CHECK(code_of([&] { strikes::add(*db, "alice", "Attack!", kNow); }) == "constraint");
}

// Lists order by time, and rows of the same second by id: the same order on both engines
// (PostgreSQL has no rowid, so insertion order is not an order either engine keeps).
TEMPLATE_TEST_CASE("sessions and turns: rows of the same second list by id on both engines", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  for (const char* id : {"s-b", "s-c", "s-a"}) sessions::create(*db, id, "alice", kNow);
  sessions::create(*db, "s-0", "alice", kNow - 1);
  auto s = sessions::list_for_user(*db, "alice");
  REQUIRE(s.size() == 4);
  CHECK(s[0].id == "s-c");  // newest first; ties by id, descending
  CHECK(s[1].id == "s-b");
  CHECK(s[2].id == "s-a");
  CHECK(s[3].id == "s-0");
  for (const char* id : {"t-b", "t-c", "t-a"}) turns::create(*db, {id, "s-a", "alice", 1, TurnAction::none}, kNow);
  turns::create(*db, {"t-z", "s-a", "alice", 1, TurnAction::none}, kNow - 1);
  auto t = turns::list_for_session(*db, "s-a");
  REQUIRE(t.size() == 4);
  CHECK(t[0].id == "t-z");  // oldest first; ties by id
  CHECK(t[1].id == "t-a");
  CHECK(t[2].id == "t-b");
  CHECK(t[3].id == "t-c");
  CHECK(turns::active_for_user(*db, "alice")->id == "t-z");
}

// A plot's PNG is bytes (BLOB / bytea): every byte value round trips, NUL and high bytes too.
TEMPLATE_TEST_CASE("turn_plots: a PNG's bytes round trip, a second put replaces it, the schema refuses a non-PNG",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  sessions::create(*db, "s", "alice", kNow);
  turns::create(*db, {"t", "s", "alice", 1, TurnAction::plot}, kNow);
  std::string png = "\x89PNG\r\n\x1a\n";
  for (int i = 0; i < 256; ++i) png += static_cast<char>(i);
  png += std::string(3, '\0');
  turn_plots::put(*db, "t", "light", png, 640, 480, kNow);
  auto got = turn_plots::get(*db, "s", "t", "light");
  REQUIRE(got);
  CHECK(*got == png);
  CHECK_FALSE(turn_plots::get(*db, "other", "t", "light"));  // another session's turn: nothing
  CHECK_FALSE(turn_plots::get(*db, "s", "t", "dark"));
  std::string second = png.substr(0, 8) + "second";
  turn_plots::put(*db, "t", "light", second, 10, 10, kNow + 1);
  CHECK(*turn_plots::get(*db, "s", "t", "light") == second);
  CHECK(int_of(*db, "SELECT count(*) FROM turn_plots") == 1);
  CHECK(int_of(*db, "SELECT bytes FROM turn_plots") == int(second.size()));
  CHECK(code_of([&] { turn_plots::put(*db, "t", "dark", "GIF89a", 1, 1, kNow); }) == "constraint");
  CHECK(code_of([&] { turn_plots::put(*db, "ghost", "dark", png, 1, 1, kNow); }) == "constraint");
}

// The CLI's listings open the store read-only: reads go, a write is refused as db_open.
TEMPLATE_TEST_CASE("a read-only open reads and refuses every write with db_open", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  users::ensure(*st.migrated(), "alice", kNow);
  Options ro;
  ro.read_only = true;
  auto db = st.open(ro);
  CHECK(users::get(*db, "alice"));
  CHECK(code_of([&] { users::ensure(*db, "bob", kNow); }) == "db_open");
  CHECK(code_of([&] { sessions::create(*db, "s", "alice", kNow); }) == "db_open");
  CHECK(code_of([&] { quotas::book(*db, "alice", Counter::messages, kNow, 10, 10); }) == "db_open");
  CHECK(users::list(*db).size() == 1);
}

TEST_CASE("ids: new_id gives distinct lowercase hex of the asked length") {
  std::string a = new_id(), b = new_id();
  CHECK(a.size() == 16);
  CHECK(a != b);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(new_id(16).size() == 32);
}
