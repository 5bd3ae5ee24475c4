// Chat turns against a real plotqd over loopback: event order of plain and data turns, the stream's
// framing, refusals of snippets, resuming with Last-Event-ID, a client that goes away, one turn in
// flight per user, concurrent users, the wire model.
#include <regex>
#include <thread>

#include "tests/turns/turn_client.hpp"

using namespace turns_test;

TEST_CASE("a plain turn: retry first, then ready -> message -> done with ids 1, 2, 3") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, plain("hello, what can you plot?"));
  REQUIRE(st->head().status == 200);
  CHECK(st->head().header("content-type") == std::optional<std::string>("text/event-stream"));
  CHECK(st->head().header("cache-control") == std::optional<std::string>("no-store"));
  CHECK(st->head().header("x-accel-buffering") == std::optional<std::string>("no"));
  auto first = st->next(10s);
  REQUIRE(first);
  CHECK(first->retry == 2000);  // the retry: line comes before any event
  auto evs = until_done(*st, 10s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "message", "done"});
  CHECK(consecutive(evs));
  const json& ready = evs[0].data;
  CHECK(ready["v"] == "plotq/1");
  CHECK(std::regex_match(ready["run_id"].get<std::string>(), std::regex("[0-9a-f]{16}")));
  CHECK(ready["turn"] == ready["run_id"]);
  CHECK(evs[1].data["text"].get<std::string>().find("plotq") != std::string::npos);
  CHECK(evs[2].data == json{{"turn", ready["turn"]}, {"state", "ok"}});
  // The stream ends after done; the turn and its events are stored.
  CHECK_FALSE(st->next(5s));
  std::string turn = ready["turn"];
  CHECK(s.scalar("SELECT count(*) FROM turn_events WHERE turn_id = '" + turn + "'") == 3);
  CHECK(s.scalar("SELECT count(*) FROM turns WHERE id = '" + turn + "' AND status = 'done' AND outcome = 'ok'") == 1);
  // The text itself is never stored, only its length.
  CHECK(s.scalar("SELECT text_chars FROM turns WHERE id = '" + turn + "'") == 25);
}

TEST_CASE("a loop turn's events past PLOTQ_LOG_SLOW_FLUSH_MS are logged as event_flush_slow with their frame and store times") {
  // Threshold 0: every flush is logged, so the turn's three events must all be accounted for. The
  // turn is a data turn refused before the slot (no data runs left): its events go through the
  // event log's flushes, where a plain turn's are written by its admission's transaction.
  // GET /v1/status is served after the loop turn that stored done, and its own request line comes
  // after every flush line on plotqd's stderr: once that line is read, so are they.
  // Each flush line's times are parts of the turn's own life: neither zero (the store answered, the
  // frames were written: both take time on a steady clock), together less than the test's wait.
  auto logged = [](Server& s, std::chrono::steady_clock::time_point turn_started) {
    (void)s.status();
    auto deadline = std::chrono::steady_clock::now() + 10s;
    auto has_status_line = [&] {
      for (const auto& line : s.d.stderr_lines())
        if (line.find("\"request\"") != std::string::npos && line.find("/v1/status") != std::string::npos) return true;
      return false;
    };
    while (!has_status_line() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    REQUIRE(has_status_line());
    int events = 0, lines = 0;
    for (const auto& line : s.d.stderr_lines()) {
      if (line.find("\"event_flush_slow\"") == std::string::npos) continue;
      json j = json::parse(line);
      ++lines;
      events += j.at("events").get<int>();
      const double send_ms = j.at("send_ms").get<double>(), store_ms = j.at("store_ms").get<double>();
      CHECK(send_ms > 0);
      CHECK(store_ms > 0);
      CHECK(send_ms + store_ms < std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - turn_started).count());
    }
    return std::make_pair(lines, events);
  };
  {
    Server s(Env{{"PLOTQ_LOG_SLOW_FLUSH_MS", "0"}, {"PLOTQ_DAILY_DATA_RUNS", "0"}});
    auto sid = s.session("ann");
    const auto t0 = std::chrono::steady_clock::now();
    auto st = s.turn("ann", sid, data(kQuick));
    REQUIRE(names(until_done(*st, 10s)) == std::vector<std::string>{"ready", "refusal", "done"});
    auto [lines, events] = logged(s, t0);
    CHECK(lines >= 1);
    CHECK(events == 3);
  }
  {
    Server s(Env{{"PLOTQ_LOG_SLOW_FLUSH_MS", "60000"}, {"PLOTQ_DAILY_DATA_RUNS", "0"}});  // no flush takes a minute
    const auto t0 = std::chrono::steady_clock::now();
    auto st = s.turn("ann", s.session("ann"), data(kQuick));
    REQUIRE(names(until_done(*st, 10s)) == std::vector<std::string>{"ready", "refusal", "done"});
    CHECK(logged(s, t0) == std::make_pair(0, 0));
  }
}

TEST_CASE("a data turn: ready -> status{running} -> dataset -> message -> done, and version 1 is stored") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, data(kLogistic, "logistic map"));
  auto evs = until_done(*st, 90s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "dataset", "message", "done"});
  CHECK(consecutive(evs));
  CHECK(evs[1].data == json{{"step", "running"}, {"attempt", 1}});
  const json& d = evs[2].data;
  CHECK(d["version"] == 1);
  CHECK(d["rows"] == 200);
  CHECK(d["cols"] == 2);
  CHECK(d["columns"] == json::array({{{"name", "step"}, {"type", "integer"}}, {{"name", "x"}, {"type", "number"}}}));
  REQUIRE(d["preview"].size() == 20);
  CHECK(d["preview"][0] == json::array({"0", "0.4"}));
  CHECK(d["code"] == kLogistic);
  std::string text = evs[3].data["text"];
  CHECK(text.find("version 1") != std::string::npos);
  CHECK(text.find("200 rows") != std::string::npos);
  CHECK(evs[4].data["state"] == "ok");

  auto list = s.get("/v1/sessions/" + sid + "/datasets", Server::as("ann"));
  REQUIRE(list.status == 200);
  REQUIRE(list.json()["versions"].size() == 1);
  CHECK(list.json()["versions"][0]["source"] == "code");
  CHECK(list.json()["versions"][0]["has_code"] == true);
  CHECK(list.json()["versions"][0]["confirmed"] == false);
  auto one = s.get("/v1/sessions/" + sid + "/datasets/1", Server::as("ann"));
  REQUIRE(one.status == 200);
  CHECK(one.json()["code"] == kLogistic);
  CHECK(one.json()["csv"].get<std::string>().rfind("step,x\n0,0.4\n", 0) == 0);
  // One ledger row, tied to the turn and its session.
  std::string turn = evs[0].data["turn"];
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE turn_id = '" + turn + "' AND session_id = '" + sid +
                 "' AND kind = 'data' AND outcome = 'ok'") == 1);
  CHECK(s.scalar("SELECT count FROM quota_days WHERE user_id = 'ann' AND counter = 'data_runs'") == 1);
}

TEST_CASE("a data run's table is read with commas - a semicolon in a cell and a first name in square brackets stay what they are") {
  // out.csv is pandas' (sep ','). Sniffed, cells and names with two ';' each outvoted the one
  // comma per line, and a text starting with '[' was taken for JSON: both refused the table.
  Server s;
  auto sid = s.session("ann");
  struct Case {
    std::string code;
    json columns;
    std::string csv;
  };
  const Case cases[] = {
      {"import pandas as pd\ndf = pd.DataFrame({'a;b;c': ['x;y;z', 'p;q;r'], 'v': [1, 2]})\n",
       json::array({{{"name", "a;b;c"}, {"type", "text"}}, {{"name", "v"}, {"type", "integer"}}}),
       "\"a;b;c\",v\n\"x;y;z\",1\n\"p;q;r\",2\n"},
      {"import pandas as pd\ndf = pd.DataFrame({'[unit]': ['kg', 'g'], 'v': [1, 2]})\n",
       json::array({{{"name", "[unit]"}, {"type", "text"}}, {{"name", "v"}, {"type", "integer"}}}),
       "\"[unit]\",v\nkg,1\ng,2\n"},
  };
  int version = 0;
  for (const Case& c : cases) {
    auto st = s.turn("ann", sid, data(c.code));
    auto evs = until_done(*st, 90s);
    REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "dataset", "message", "done"});
    const json& d = evs[2].data;
    CHECK(d["columns"] == c.columns);
    CHECK(d["rows"] == 2);
    auto one = s.get("/v1/sessions/" + sid + "/datasets/" + std::to_string(++version), Server::as("ann"));
    REQUIRE(one.status == 200);
    CHECK(one.json()["csv"] == c.csv);
    CHECK(one.json()["columns"] == c.columns);  // the stored CSV read back the same
  }
}

TEST_CASE("a refused snippet: ready -> status -> refusal{invalid_code} -> done, nothing stored") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, data("df = open('/etc/passwd').read()\n"));
  auto evs = until_done(*st, 60s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "refusal", "done"});
  CHECK(evs[2].data["code"] == "invalid_code");
  std::string why = evs[2].data["text"];
  CHECK(why.find("not run") != std::string::npos);
  CHECK(why.find("/etc/passwd") == std::string::npos);  // plotq's own sentence only
  CHECK(evs[3].data["state"] == "refused");
  CHECK(s.scalar("SELECT count(*) FROM dataset_versions") == 0);
}

TEST_CASE("a failing snippet: the message says why in plotq's words, then error{run_failed}") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, data("import pandas as pd\nprint('PRINTED-SECRET')\nx = 1 / 0\ndf = pd.DataFrame()\n"));
  auto evs = until_done(*st, 60s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "message", "error", "done"});
  CHECK(evs[2].data["text"] == "The code raised ZeroDivisionError at line 3.");
  CHECK(evs[3].data["code"] == "run_failed");
  CHECK(evs[3].data["ref"] == evs[0].data["turn"]);
  CHECK(evs[4].data["state"] == "error");
  for (const auto& e : evs) CHECK(e.data.dump().find("PRINTED-SECRET") == std::string::npos);
}

TEST_CASE("a table without a number or date column is refused and not stored") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, data("import pandas as pd\ndf = pd.DataFrame({'name': ['a', 'b']})\n"));
  auto evs = until_done(*st, 60s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "refusal", "done"});
  CHECK(evs[2].data["code"] == "no_number_column");
  CHECK(s.scalar("SELECT count(*) FROM dataset_versions") == 0);
}

TEST_CASE("reconnect with Last-Event-ID: the stored events after it, then the live rest") {
  Server s;
  auto sid = s.session("ann");
  std::string turn;
  {
    // The client reads ready and the running status, then goes away mid-run.
    auto st = s.turn("ann", sid, data("import pandas as pd\ntotal = 0\nfor i in range(3000000):\n    total += 1\n"
                                      "df = pd.DataFrame({'t': [total]})\n"));
    auto ready = next_event(*st);
    REQUIRE(ready);
    REQUIRE(ready->name == "ready");
    turn = ready->data["turn"];
    auto running = next_event(*st);
    REQUIRE(running);
    REQUIRE(running->id == 2);
  }
  // The turn goes on without its client, and the resume gets exactly ids 3, 4, 5.
  SseStream again(s.port(), "GET", "/v1/sessions/" + sid + "/turns/" + turn + "/events", {},
                  {{"X-Plotq-User", "ann"}, {"Last-Event-ID", "2"}});
  REQUIRE(again.head().status == 200);
  auto rest = until_done(again, 90s);
  REQUIRE(names(rest) == std::vector<std::string>{"dataset", "message", "done"});
  CHECK(consecutive(rest, 3));
  CHECK(rest[0].data["rows"] == 1);
  CHECK(rest[2].data["state"] == "ok");

  // After the end: ?after=N replays from the store and closes.
  SseStream all(s.port(), "GET", "/v1/sessions/" + sid + "/turns/" + turn + "/events?after=0", {}, {{"X-Plotq-User", "ann"}});
  auto replay = until_done(all, 10s);
  CHECK(names(replay) == std::vector<std::string>{"ready", "status", "dataset", "message", "done"});
  CHECK(consecutive(replay));
  CHECK_FALSE(all.next(5s));

  SseStream tail(s.port(), "GET", "/v1/sessions/" + sid + "/turns/" + turn + "/events", {},
                 {{"X-Plotq-User", "ann"}, {"Last-Event-ID", "4"}});
  auto last = until_done(tail, 10s);
  REQUIRE(names(last) == std::vector<std::string>{"done"});
  CHECK(last[0].id == 5);

  // Malformed resume points, another user's session, an unknown turn.
  auto bad = s.get("/v1/sessions/" + sid + "/turns/" + turn + "/events?after=x", Server::as("ann"));
  CHECK(bad.status == 400);
  auto other = s.get("/v1/sessions/" + sid + "/turns/" + turn + "/events", Server::as("bob"));
  CHECK(other.status == 404);
  CHECK(other.json()["detail"] == "session_not_found");
  auto unknown = s.get("/v1/sessions/" + sid + "/turns/ffffffffffffffff/events", Server::as("ann"));
  CHECK(unknown.status == 404);
  CHECK(unknown.json()["detail"] == "not_found");
}

TEST_CASE("one turn in flight per user: a second message answers 409 run_active") {
  Server s;
  auto sid = s.session("ann");
  auto sid2 = s.session("ann");
  auto st = s.turn("ann", sid, data(kForever));
  auto ready = next_event(*st);
  REQUIRE(ready);
  REQUIRE(wait_for(*st, "status", 30s));  // running
  auto r = s.message("ann", sid, plain("and now?"));
  CHECK(r.status == 409);
  CHECK(r.json()["detail"] == "run_active");
  auto r2 = s.message("ann", sid2, plain("another session, same user"));
  CHECK(r2.status == 409);
  // Another user is not affected.
  auto sb = s.session("bob");
  auto other = s.turn("bob", sb, plain("hi"));
  CHECK(names(until_done(*other, 10s)) == std::vector<std::string>{"ready", "message", "done"});
  // Once ann's turn has ended she may send again.
  REQUIRE(s.cancel("ann", sid, ready->data["turn"]).status == 200);
  REQUIRE(names(until_done(*st, 30s)).back() == "done");
  auto next = s.turn("ann", sid, plain("now?"));
  CHECK(names(until_done(*next, 10s)) == std::vector<std::string>{"ready", "message", "done"});
}

TEST_CASE("a plain turn is answered at once while another user's run holds the slot") {
  Server s;
  auto sa = s.session("ann");
  auto busy = s.turn("ann", sa, data(kForever));
  auto ready = next_event(*busy);
  REQUIRE(ready);
  REQUIRE(wait_for(*busy, "status", 30s));  // running: the slot is held
  CHECK(s.status()["in_flight"] == 1);

  auto sb = s.session("bob");
  auto plain_turn = s.turn("bob", sb, plain("what can you do?"));
  CHECK(names(until_done(*plain_turn, 10s)) == std::vector<std::string>{"ready", "message", "done"});
  // ann's run still holds the slot: bob did not wait for it.
  CHECK(s.status()["in_flight"] == 1);
  CHECK_FALSE(next_event(*busy, 200ms));

  auto c = s.cancel("ann", sa, ready->data["turn"]);
  REQUIRE(c.status == 200);
  CHECK(c.json()["state"] == "cancelling");
  auto rest = until_done(*busy, 30s);
  CHECK(names(rest) == std::vector<std::string>{"error", "done"});
}

TEST_CASE("concurrent users: every turn gets its own complete, ordered stream") {
  Server s;
  std::vector<std::string> users = {"u1", "u2", "u3", "u4", "u5", "u6"};
  std::vector<std::vector<Event>> got(users.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < users.size(); ++i)
    threads.emplace_back([&, i] {
      auto sid = s.session(users[i]);
      for (int k = 0; k < 3; ++k) {
        auto st = s.turn(users[i], sid, i < 2 ? data(kQuick) : plain("turn " + std::to_string(k)));
        auto evs = until_done(*st, 120s);
        got[i].insert(got[i].end(), evs.begin(), evs.end());
        if (i < 2) break;
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < users.size(); ++i) {
    INFO(users[i]);
    if (i < 2) {
      CHECK(names(got[i]).back() == "done");
      CHECK(got[i].back().data["state"] == "ok");
      CHECK(consecutive(got[i]));
    } else {
      REQUIRE(got[i].size() == 9);
      for (int k = 0; k < 3; ++k)
        CHECK(std::vector<std::string>{got[i][3 * k].name, got[i][3 * k + 1].name, got[i][3 * k + 2].name} ==
              std::vector<std::string>{"ready", "message", "done"});
    }
  }
  CHECK(s.scalar("SELECT count(*) FROM turns WHERE status <> 'done'") == 0);
  CHECK(s.scalar("SELECT count(DISTINCT session_id) FROM dataset_versions") == 2);
}

TEST_CASE("the message body is a closed model: 422 invalid_job, 413 too_long, 404 session_not_found") {
  Server s;
  auto sid = s.session("ann");
  std::vector<json> bad = {
      json{{"text", "x"}, {"extra", 1}},
      json{{"nope", "x"}},
      json{{"text", 5}},
      json{{"text", "x"}, {"action", {{"kind", "data"}, {"code", kQuick}}}},  // no source_language
      json{{"text", "x"}, {"action", {{"kind", "data"}, {"code", kQuick}, {"source_language", "r"}}}},
      json{{"text", "x"}, {"action", {{"kind", "data"}, {"code", ""}, {"source_language", "python"}}}},
      json{{"text", "x"}, {"action", {{"kind", "data"}, {"code", kQuick}, {"source_language", "python"}, {"x", 1}}}},
      json{{"text", "x"}, {"action", {{"kind", "plot"}, {"code", "x"}, {"library", "ggplot"}, {"themes", {"light"}}}}},
      json{{"text", "x"}, {"action", {{"kind", "plot"}, {"code", "x"}, {"library", "matplotlib"}, {"themes", json::array()}}}},
      json{{"text", "x"}, {"action", {{"kind", "plot"}, {"code", "x"}, {"library", "matplotlib"}, {"themes", {"light", "light"}}}}},
      json{{"text", "x"}, {"action", {{"kind", "plot"}, {"code", "x"}, {"library", "matplotlib"}, {"themes", {"sepia"}}}}},
      json{{"text", "x"}, {"action", {{"kind", "sql"}}}},
      json{{"text", "x"}, {"scope", "maybe"}},
      json::array({1, 2}),
  };
  for (const auto& b : bad) {
    INFO(b.dump());
    auto r = s.message("ann", sid, b);
    CHECK(r.status == 422);
    CHECK(r.json()["detail"] == "invalid_job");
  }
  // 2,000 characters pass (counted as characters, not bytes); 2,001 do not.
  std::string e2000;
  for (int i = 0; i < 2000; ++i) e2000 += "\xc3\xa9";  // é
  auto ok = s.turn("ann", sid, plain(e2000));
  CHECK(names(until_done(*ok, 10s)) == std::vector<std::string>{"ready", "message", "done"});
  auto over = s.message("ann", sid, plain(e2000 + "x"));
  CHECK(over.status == 413);
  CHECK(over.json()["detail"] == "too_long");
  auto code_over = s.message("ann", sid, data(std::string(6001, '#')));
  CHECK(code_over.status == 413);
  auto nosession = s.message("ann", "0123456789abcdef", plain("hi"));
  CHECK(nosession.status == 404);
  CHECK(nosession.json()["detail"] == "session_not_found");
  auto not_yours = s.message("bob", sid, plain("hi"));
  CHECK(not_yours.status == 404);
  CHECK(not_yours.json()["detail"] == "session_not_found");
  CHECK(s.scalar("SELECT count(*) FROM turns") == 1);  // only the one good turn
}
