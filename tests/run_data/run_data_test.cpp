// POST /run-data, spoken to a real plotqd over loopback: the wire model, every status, the
// idempotency rules, the ledger, and the deploy smoke (`plotq smoke`).
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <thread>

#include "store/db.hpp"
#include "store/idempotency.hpp"
#include "store/ledger.hpp"
#include "store/migrate.hpp"
#include "store/sql.hpp"
#include "store/time.hpp"
#include "tests/support/test_client.hpp"
#include "tests/support/test_store.hpp"

using namespace plotq::test;
using nlohmann::json;

namespace {

const std::string kForever =
    "import pandas as pd\nwhile True:\n    pass\ndf = pd.DataFrame({'a': [1]})\n";
const std::string kTwoRows = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n";

struct Server {
  TempDir dir;
  TestStore store{dir};
  Plotqd d;
  explicit Server(Env extra = {})
      : d(PLOTQD_BINARY, merge({{"PLOTQ_DB", store.target()},
                                {"PLOTQ_ENVIRONMENT", "development"},
                                {"PLOTQ_RUNS_PER_MINUTE", "10000"}},
                               extra)) {
    REQUIRE(d.wait_listening(30s));
  }
  static Env merge(Env base, const Env& extra) {
    for (const auto& [k, v] : extra) {
      bool replaced = false;
      for (auto& [bk, bv] : base)
        if (bk == k) bv = v, replaced = true;
      if (!replaced) base.emplace_back(k, v);
    }
    return base;
  }
  HttpResponse post(const json& body, const HeaderList& headers = {}, Ms timeout = 60s) {
    return http_request(d.port(), "POST", "/run-data", body.dump(), headers, timeout);
  }
  std::vector<plotq::store::LedgerEntry> ledger(const std::string& job_id) {
    auto db = store.open();
    plotq::store::LedgerQuery q;
    q.job_id = job_id;
    return plotq::store::ledger::query(*db, q);
  }
};

json req(const std::string& job_id, const std::string& source, double timeout = 20) {
  return {{"job_id", job_id}, {"source", source}, {"timeout_s", timeout}};
}

}  // namespace

TEST_CASE("a 2-row snippet comes back as its table - and one ledger row records it") {
  Server s;
  auto r = s.post(req("two-rows", kTwoRows));
  REQUIRE(r.status == 200);
  CHECK(r.header("cache-control") == std::optional<std::string>("no-store"));
  json b = r.json();
  CHECK(b["exit_code"] == 0);
  CHECK(b["reason"].is_null());
  CHECK(b["timed_out"] == false);
  CHECK(b["csv_text"] == "x,y\n1,3.5\n2,4.5\n");
  CHECK(b["rows"] == 2);
  CHECK(b["columns"] == 2);
  CHECK(b["attempts"] == 1);
  CHECK(b["timings"]["slot_wait_s"].is_number());
  CHECK(b["timings"]["total_s"].get<double>() >= b["wall_s"].get<double>() - 0.01);
  CHECK(b["version"].is_string());
  CHECK(b["mem_available_mb"].is_number());
  auto rows = s.ledger("two-rows");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].outcome == plotq::store::RunOutcome::ok);
  CHECK(rows[0].kind == plotq::store::RunKind::data);
  CHECK(rows[0].exit_code == 0);
}

TEST_CASE("the wire model is closed: every malformed body is 422 invalid_job - never echoed") {
  Server s;
  const std::string secret = "SECRET-SNIPPET-TEXT";
  std::vector<std::string> bodies = {
      json{{"job_id", "a"}, {"source", kTwoRows}, {"timeout_s", 5}, {"extra", 1}}.dump(),  // unknown field
      json{{"job_id", "a"}, {"timeout_s", 5}}.dump(),                                      // missing source
      json{{"job_id", "a/../b"}, {"source", kTwoRows}, {"timeout_s", 5}}.dump(),           // bad id
      json{{"job_id", std::string(65, 'a')}, {"source", kTwoRows}, {"timeout_s", 5}}.dump(),
      json{{"job_id", "a"}, {"source", kTwoRows}, {"timeout_s", 31}}.dump(),               // > 30 s
      json{{"job_id", "a"}, {"source", kTwoRows}, {"timeout_s", 0}}.dump(),
      json{{"job_id", "a"}, {"source", kTwoRows}, {"timeout_s", "5"}}.dump(),
      json{{"job_id", "a"}, {"source", ""}, {"timeout_s", 5}}.dump(),
      json{{"job_id", "a"}, {"source", secret + std::string(16 * 1024, '#')}, {"timeout_s", 5}}.dump(),  // > 16 KiB
      "[1,2,3]",
      "{\"job_id\": \"a\", \"source\": \"" + secret + "\"",  // truncated JSON
  };
  for (const auto& body : bodies) {
    INFO(body.substr(0, 80));
    auto r = http_request(s.d.port(), "POST", "/run-data", body);
    CHECK(r.status == 422);
    CHECK(r.json() == json{{"detail", "invalid_job"}});
    CHECK(r.body.find(secret) == std::string::npos);
  }
  CHECK(s.ledger("a").empty());  // nothing ran
}

TEST_CASE("same job id and payload again: the stored answer - and the code never runs twice") {
  Server s;
  auto first = s.post(req("again", kTwoRows));
  REQUIRE(first.status == 200);
  auto second = s.post(req("again", kTwoRows));
  REQUIRE(second.status == 200);
  CHECK(second.json() == first.json());  // identical, wall_s and timings included
  CHECK(s.ledger("again").size() == 1);
}

TEST_CASE("a replay after more than 16 other jobs is still answered from the store - one ledger row") {
  Server s;
  auto first = s.post(req("kept", kTwoRows));
  REQUIRE(first.status == 200);
  // More answers than the old in-memory cap of 16 kept: the first must not be pushed out.
  for (int i = 0; i < 20; ++i)
    REQUIRE(s.post(req("other-" + std::to_string(i), kTwoRows)).status == 200);
  auto again = s.post(req("kept", kTwoRows));
  REQUIRE(again.status == 200);
  CHECK(again.json() == first.json());
  CHECK(s.ledger("kept").size() == 1);
}

TEST_CASE("a store that refuses to keep the answer refuses its ledger row with it: the answer still goes out - and a retry runs the code again") {
  Server s;
  {
    // A real refusal by the store, as a full disk makes of the commit: storing any answer aborts
    // (each engine's trigger; PostgreSQL's raises a check_violation, as SQLite's ABORT is a constraint).
    auto db = s.store.open();
    if (db->engine() == plotq::store::Engine::sqlite)
      db->exec("CREATE TRIGGER refuse_answers BEFORE UPDATE OF state ON idempotency WHEN NEW.state = 'done' "
               "BEGIN SELECT RAISE(ABORT, 'no room'); END");
    else
      db->exec("CREATE FUNCTION refuse_answers() RETURNS trigger LANGUAGE plpgsql AS "
               "$$ BEGIN RAISE EXCEPTION 'no room' USING ERRCODE = 'check_violation'; END $$; "
               "CREATE TRIGGER refuse_answers BEFORE UPDATE OF state ON idempotency FOR EACH ROW "
               "WHEN (NEW.state = 'done') EXECUTE FUNCTION refuse_answers()");
  }
  auto first = s.post(req("unkept", kTwoRows));
  REQUIRE(first.status == 200);
  CHECK(first.json()["csv_text"] == "x,y\n1,3.5\n2,4.5\n");
  auto refused = s.d.wait_log("ledger_write_failed", 10s);
  REQUIRE(refused);
  CHECK((*refused)["job_id"] == "unkept");
  CHECK((*refused)["code"] == "constraint");
  auto failed = s.d.wait_log("idempotency_complete_failed", 10s);
  REQUIRE(failed);
  CHECK((*failed)["job_id"] == "unkept");
  // The row and the answer are one transaction: neither was kept. The ledger never counts a run
  // whose answer a retry cannot find.
  CHECK(s.ledger("unkept").empty());
  {
    auto db = s.store.open();
    db->exec(db->engine() == plotq::store::Engine::sqlite ? "DROP TRIGGER refuse_answers"
                                                          : "DROP TRIGGER refuse_answers ON idempotency");
  }
  // Forgotten, not left running: the retry runs instead of waiting on a key no job will complete;
  // its row and answer are kept together, and the next retry is answered from the store.
  auto again = s.post(req("unkept", kTwoRows), {}, 30s);
  REQUIRE(again.status == 200);
  CHECK(again.json()["csv_text"] == first.json()["csv_text"]);
  CHECK(s.ledger("unkept").size() == 1);
  auto third = s.post(req("unkept", kTwoRows), {}, 30s);
  REQUIRE(third.status == 200);
  CHECK(third.json() == again.json());
  CHECK(s.ledger("unkept").size() == 1);
}

TEST_CASE("plotqd prunes answers past PLOTQ_IDEMPOTENCY_KEEP_HOURS in batches - and keeps the rest") {
  TempDir dir;
  TestStore store(dir);
  const std::string path = store.target();
  auto now = plotq::store::now_unix();
  {
    auto db = store.open();
    plotq::store::migrate(*db);
    std::string fp = plotq::store::idempotency::fingerprint("{}");
    auto answer = [&](const std::string& job, plotq::store::UnixSeconds at) {
      REQUIRE(plotq::store::idempotency::begin(*db, job, "data", fp, at).state == plotq::store::ClaimState::started);
      plotq::store::idempotency::complete(*db, job, "data", "{}", at);
    };
    for (int i = 0; i < 3; ++i) answer("old-" + std::to_string(i), now - 3 * 3600 - i);
    answer("recent", now - 3600);
  }
  // Keep 2 hours, one row per step: three steps delete the old answers, logged once together at the
  // end of the retention round (store/retention.hpp prunes the answers with the other families).
  Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", path},
                           {"PLOTQ_ENVIRONMENT", "development"},
                           {"PLOTQ_IDEMPOTENCY_KEEP_HOURS", "2"},
                           {"PLOTQ_RETAIN_BATCH", "1"}});
  REQUIRE(d.wait_listening(30s));
  auto pruned = d.wait_log("retention_pruned", 10s);
  REQUIRE(pruned);
  CHECK((*pruned)["rows"] == json{{"idempotency", 3}});
  auto db = store.open();
  plotq::store::Stmt left(*db, "SELECT job_id FROM idempotency");
  std::vector<std::string> kept;
  while (left.executeStep()) kept.push_back(left.getColumn(0).getString());
  CHECK(kept == std::vector<std::string>{"recent"});
}

TEST_CASE("same job id - different payload: 409 job_conflict") {
  Server s;
  REQUIRE(s.post(req("clash", kTwoRows)).status == 200);
  auto r = s.post(req("clash", kTwoRows + "df['z'] = df['x'] * 2\n"));
  CHECK(r.status == 409);
  CHECK(r.json() == json{{"detail", "job_conflict"}});
}

TEST_CASE("a retry while the job runs joins it: one run - the same answer to both") {
  Server s;
  // Busy for a second or two (the data profile admits no sleep): long enough to join.
  const std::string slow =
      "import pandas as pd\ntotal = 0\nfor i in range(30000000):\n    total += 1\ndf = pd.DataFrame({'t': [1, 2, 3]})\n";
  HttpResponse a, b;
  std::thread t1([&] { a = s.post(req("joined", slow)); });
  const bool running = wait_in_flight(s.d.port(), 1);  // the first request's run holds the slot
  std::thread t2([&] { b = s.post(req("joined", slow)); });
  t1.join();
  t2.join();
  REQUIRE(running);
  REQUIRE(a.status == 200);
  REQUIRE(b.status == 200);
  CHECK(a.json() == b.json());
  CHECK(a.json()["csv_text"] == "t\n1\n2\n3\n");
  CHECK(s.ledger("joined").size() == 1);
  CHECK(s.d.wait_log("run_data_joined", 1s));
}

TEST_CASE("a refused snippet answers its findings - runs nothing and is a refused ledger row") {
  Server s;
  auto r = s.post(req("refused", "df = open('/etc/passwd').read()\n"));
  REQUIRE(r.status == 200);
  json b = r.json();
  CHECK(b["reason"] == "validation");
  CHECK(b["csv_text"].is_null());
  REQUIRE(b["findings"].size() >= 1);
  CHECK(b["stderr_tail"].get<std::string>().find("/etc/passwd") == std::string::npos);
  auto rows = s.ledger("refused");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].outcome == plotq::store::RunOutcome::refused);
  CHECK(rows[0].refusal_code == "validation");
}

TEST_CASE("a snippet error answers class and line - never the message or what it printed") {
  Server s;
  auto r = s.post(req("raises", "import pandas as pd\nprint('PRINTED-SECRET')\nx = 1 / 0\ndf = pd.DataFrame()\n"));
  REQUIRE(r.status == 200);
  json b = r.json();
  CHECK(b["reason"] == "snippet_error");
  CHECK(b["error"]["class"] == "ZeroDivisionError");
  CHECK(b["error"]["line"] == 3);
  CHECK(r.body.find("PRINTED-SECRET") == std::string::npos);
  CHECK(r.body.find("division by zero") == std::string::npos);
}

TEST_CASE("a snippet that runs too long is stopped at its timeout") {
  Server s;
  auto r = s.post(req("slow", "import pandas as pd\nwhile True:\n    pass\ndf = pd.DataFrame()\n", 1.5));
  REQUIRE(r.status == 200);
  json b = r.json();
  CHECK(b["reason"] == "timeout");
  CHECK(b["timed_out"] == true);
  CHECK(b["exit_code"].is_null());
  CHECK(b["wall_s"].get<double>() < 10);
  auto rows = s.ledger("slow");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].timed_out);
  CHECK(rows[0].outcome == plotq::store::RunOutcome::failed);
}

TEST_CASE("a client that goes away cancels its job (the last waiter leaves)") {
  TempDir runs;
  Server s({{"PLOTQ_RUNS_DIR", runs.path()}});
  {
    Connection c(s.d.port());
    std::string body = req("gone", kForever, 25).dump();
    REQUIRE(c.send(format_request("POST", "/run-data", body, {}, false)));
    REQUIRE(wait_job_file(runs.path()));          // running: its sandbox attempt has its work dir
    REQUIRE(s.d.log_events("data_run").empty());  // and has not ended
  }  // connection closed
  auto done = s.d.wait_log("data_run", 15s, [](const json& e) { return e.value("job_id", "") == "gone"; });
  REQUIRE(done);
  CHECK((*done)["outcome"] == "cancelled");
  // A cancelled job is forgotten, not stored: the ledger row says cancelled, and the same
  // request is a new run (it is cancelled again by this test's short read timeout).
  auto rows = s.ledger("gone");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].reason == "cancelled");
}

TEST_CASE("the caller check: tokens name users and roles") {
  Server s({{"PLOTQ_ENVIRONMENT", "production"},
            {"PLOTQ_TOKENS", "assistant-token-0123456789=svc:assistant,user-token-0123456789abc=ann"}});
  auto none = s.post(req("auth", kTwoRows));
  CHECK(none.status == 401);
  CHECK(none.json() == json{{"detail", "unauthenticated"}});
  auto user = s.post(req("auth", kTwoRows), {{"Authorization", "Bearer user-token-0123456789abc"}});
  CHECK(user.status == 403);
  CHECK(user.json() == json{{"detail", "forbidden"}});
  auto svc = s.post(req("auth", kTwoRows), {{"Authorization", "Bearer assistant-token-0123456789"}});
  CHECK(svc.status == 200);
  CHECK(svc.json()["csv_text"] == "x,y\n1,3.5\n2,4.5\n");
}

TEST_CASE("plotq smoke passes against a running server and fails against none") {
  Server s;
  std::string cmd = std::string(PLOTQ_CLI_BINARY) + " smoke --server http://127.0.0.1:" +
                    std::to_string(s.d.port()) + " > /dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  CHECK(WEXITSTATUS(rc) == 0);
  std::string dead = std::string(PLOTQ_CLI_BINARY) + " smoke --server http://127.0.0.1:9 --timeout 3 > /dev/null 2>&1";
  rc = std::system(dead.c_str());
  CHECK(WEXITSTATUS(rc) == 1);
}
