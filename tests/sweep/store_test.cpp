// store::sweeps on a real SQLite file and a PostgreSQL schema (tests/store/engines.hpp, the same
// test on both engines): round trips, the schema's checks, all-or-nothing files.
#include <catch2/catch.hpp>

#include "store/error.hpp"
#include "tests/store/engines.hpp"
#include "tests/sweep/helpers.hpp"

using namespace plotq;
using namespace plotq::sweep_test;
using plotq::store::test::int_of;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;

namespace {

std::string code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const store::StoreError& e) {
    return e.code();
  }
  return "no error";
}

}  // namespace

TEMPLATE_TEST_CASE("store: a sweep round-trips through create, find, list, sessions", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  store::Sweep s = make_sweep("nightly-1", "sandbox", "light,dark");
  s.server_url = "http://127.0.0.1:8080";
  s.libraries = "matplotlib,seaborn";
  s.pid = 4242;
  s.timeout_s = 30.5;
  s.jobs = 3;
  std::int64_t id = store::sweeps::create(*db, s, kNow);
  CHECK(id > 0);

  auto got = store::sweeps::find(*db, "nightly-1");
  REQUIRE(got);
  CHECK(got->id == id);
  CHECK(got->mode == "sandbox");
  CHECK(got->server_url == s.server_url);
  CHECK(got->root == "/catalogue");
  CHECK(got->glob == s.glob);
  CHECK(got->libraries == s.libraries);
  CHECK(got->themes == "light,dark");
  CHECK(got->timeout_s == Approx(30.5));
  CHECK(got->jobs == 3);
  CHECK(got->state == "running");
  CHECK(got->pid == 4242);
  CHECK(got->created_at == kNow);
  CHECK_FALSE(got->finished_at);
  CHECK_FALSE(store::sweeps::find(*db, "nightly-2"));

  store::sweeps::begin_session(*db, id, 17, 2, 99, kNow + 1);
  store::sweeps::end_session(*db, id, "interrupted", 12.5, kNow + 10);
  got = store::sweeps::find(*db, "nightly-1");
  CHECK(got->state == "interrupted");
  CHECK(got->files_total == 17);
  CHECK(got->jobs == 2);
  CHECK(got->pid == 99);
  CHECK(got->elapsed_s == Approx(12.5));
  CHECK_FALSE(got->finished_at);

  store::sweeps::begin_session(*db, id, 18, 1, 100, kNow + 20);
  CHECK(store::sweeps::find(*db, "nightly-1")->state == "running");
  store::sweeps::end_session(*db, id, "done", 7.5, kNow + 30);
  got = store::sweeps::find(*db, "nightly-1");
  CHECK(got->state == "done");
  CHECK(got->elapsed_s == Approx(20.0));  // sessions add up
  CHECK(got->finished_at == kNow + 30);
  CHECK(got->updated_at == kNow + 30);

  // A resumed done sweep is running again and loses its finish time (the schema's CHECK).
  store::sweeps::begin_session(*db, id, 18, 1, 101, kNow + 40);
  CHECK_FALSE(store::sweeps::find(*db, "nightly-1")->finished_at);

  store::sweeps::create(*db, make_sweep("b"), kNow + 50);
  auto all = store::sweeps::list(*db);
  REQUIRE(all.size() == 2);
  CHECK(all[0].label == "b");  // newest first
  CHECK(all[1].label == "nightly-1");
}

TEMPLATE_TEST_CASE("store: labels are unique and checked - unknown ids and states are refused", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  std::int64_t id = store::sweeps::create(*db, make_sweep("a"), kNow);
  CHECK(code_of([&] { store::sweeps::create(*db, make_sweep("a"), kNow); }) == "constraint");
  CHECK(code_of([&] { store::sweeps::create(*db, make_sweep(""), kNow); }) == "invalid");
  CHECK(code_of([&] { store::sweeps::create(*db, make_sweep("has space"), kNow); }) == "invalid");
  CHECK(code_of([&] { store::sweeps::create(*db, make_sweep(std::string(65, 'x')), kNow); }) == "invalid");
  CHECK(code_of([&] { store::sweeps::create(*db, make_sweep("c", "docker"), kNow); }) == "constraint");
  CHECK(code_of([&] { store::sweeps::create(*db, make_sweep("d", "bare", "light,light"), kNow); }) == "constraint");
  store::Sweep bare_with_server = make_sweep("e");
  bare_with_server.server_url = "http://x";
  CHECK(code_of([&] { store::sweeps::create(*db, bare_with_server, kNow); }) == "constraint");
  CHECK(code_of([&] { store::sweeps::end_session(*db, id, "running", 1, kNow); }) == "invalid");
  CHECK(code_of([&] { store::sweeps::end_session(*db, id + 100, "done", 1, kNow); }) == "not_found");
  CHECK(code_of([&] { store::sweeps::begin_session(*db, id + 100, 1, 1, 1, kNow); }) == "not_found");
  CHECK(store::sweeps::valid_label("release-1.2_rc3"));
  CHECK_FALSE(store::sweeps::valid_label("a/b"));
}

TEMPLATE_TEST_CASE("store: results round-trip with the generated reason_class, ordered by path and theme", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  std::int64_t id = store::sweeps::create(*db, make_sweep("a", "bare", "light,dark"), kNow);
  store::SweepResult r1 = render_row("plots/b/x.py", "light");
  store::SweepResult r2 = fail_row("plots/b/x.py", "plot_error", "ValueError", "dark");
  store::SweepResult r3 = fail_row("plots/a/y.py", "canvas_size", std::nullopt, "light");
  r3.detail = "800x600";
  r3.width = 800;
  r3.height = 600;
  store::SweepResult r4 = fail_row("plots/a/y.py", "timeout", std::nullopt, "dark");
  r4.exit_code.reset();
  r4.signal = 9;
  r4.max_rss_mb.reset();
  store::sweeps::record_file(*db, id, {r1, r2}, kNow);
  store::sweeps::record_file(*db, id, {r3, r4}, kNow + 1);

  auto rows = store::sweeps::results(*db, id);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].path == "plots/a/y.py");
  CHECK(rows[0].theme == "dark");
  CHECK(rows[0].reason_class == "timeout");
  CHECK(rows[0].signal == 9);
  CHECK_FALSE(rows[0].exit_code);
  CHECK_FALSE(rows[0].max_rss_mb);
  CHECK(rows[1].theme == "light");
  CHECK(rows[1].reason_class == "canvas_size");
  CHECK(rows[1].detail == "800x600");
  CHECK(rows[1].width == 800);
  CHECK(rows[2].path == "plots/b/x.py");
  CHECK(rows[2].theme == "dark");
  CHECK(rows[2].reason == "plot_error");
  CHECK(rows[2].error_class == "ValueError");
  CHECK(rows[2].reason_class == "ValueError");  // the class, not "plot_error"
  CHECK(rows[3].outcome == store::SweepOutcome::render);
  CHECK(rows[3].reason_class == "ok");
  CHECK(rows[3].png_bytes == 12345);
  CHECK(rows[3].sha256 == std::string(64, 'a'));
  CHECK(rows[3].wall_s == Approx(1.5));
  CHECK(rows[3].created_at == kNow);

  CHECK(store::sweeps::finished_paths(*db, id) == std::vector<std::string>{"plots/a/y.py", "plots/b/x.py"});

  // The views read the same rows.
  CHECK(int_of(*db, "SELECT files_done FROM v_sweeps WHERE label = 'a'") == 2);
  CHECK(int_of(*db, "SELECT fails FROM v_sweeps WHERE label = 'a'") == 3);
  CHECK(int_of(*db, "SELECT rows FROM v_sweep_reasons WHERE label = 'a' AND reason_class = 'ValueError'") == 1);

  CHECK(store::sweeps::remove(*db, "a"));
  CHECK_FALSE(store::sweeps::remove(*db, "a"));
  CHECK(int_of(*db, "SELECT count(*) FROM sweep_results") == 0);  // cascade
}

TEMPLATE_TEST_CASE("store: a file is recorded whole or not at all - rows outside the model are refused", "[engines]", OnSqlite,
                   OnPostgres) {
  StoreUnderTest<TestType> st;
  auto db = st.migrated();
  std::int64_t id = store::sweeps::create(*db, make_sweep("a", "bare", "light,dark"), kNow);
  auto count = [&] { return int_of(*db, "SELECT count(*) FROM sweep_results"); };

  // The second theme's row is invalid (render with an error class): the first must not stay.
  store::SweepResult bad = render_row("p.py", "dark");
  bad.error_class = "ValueError";
  CHECK(code_of([&] { store::sweeps::record_file(*db, id, {render_row("p.py", "light"), bad}, kNow); }) == "constraint");
  CHECK(count() == 0);

  std::vector<std::pair<std::string, store::SweepResult>> refused;
  store::SweepResult r = fail_row("p.py", "plot_error");  // plot_error without a class
  refused.push_back({"plot_error without class", r});
  r = fail_row("p.py", "timeout", "ValueError");  // class on a non plot_error
  refused.push_back({"class without plot_error", r});
  r = render_row("p.py");
  r.reason = "timeout";  // render with a failure reason
  refused.push_back({"render with a reason", r});
  r = fail_row("p.py", "ok");
  refused.push_back({"fail with ok", r});
  r = fail_row("p.py", "Bad Reason");
  refused.push_back({"reason outside the vocabulary shape", r});
  r = render_row("p.py");
  r.png_bytes.reset();
  refused.push_back({"render without png bytes", r});
  r = render_row("p.py");
  r.sha256 = "xyz";
  refused.push_back({"malformed hash", r});
  r = render_row("p.py");
  r.theme = "sepia";
  refused.push_back({"unknown theme", r});
  r = render_row("p.py");
  r.wall_s = -1;
  refused.push_back({"negative wall time", r});
  for (const auto& [what, row] : refused) {
    INFO(what);
    CHECK(code_of([&] { store::sweeps::record_file(*db, id, {row}, kNow); }) == "constraint");
  }
  CHECK(count() == 0);

  store::sweeps::record_file(*db, id, {render_row("p.py", "light"), render_row("p.py", "dark")}, kNow);
  CHECK(count() == 2);
  // Recording the same file again is refused and changes nothing.
  CHECK(code_of([&] { store::sweeps::record_file(*db, id, {render_row("p.py", "light")}, kNow); }) == "constraint");
  CHECK(count() == 2);
  CHECK(code_of([&] { store::sweeps::record_file(*db, id, {}, kNow); }) == "invalid");
  CHECK(code_of([&] { store::sweeps::record_file(*db, id + 7, {render_row("q.py")}, kNow); }) == "constraint");
}
