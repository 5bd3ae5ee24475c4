// Helpers for the chat-turn tests: a real plotqd (development mode, its own store - a SQLite file,
// or a PostgreSQL schema under PLOTQ_TEST_ENGINE=postgresql, tests/support/test_store.hpp - and runs
// dir), sessions, turn streams read event by event, and the snippets the tests run.
#pragma once
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/db.hpp"
#include "store/sql.hpp"
#include "tests/support/test_client.hpp"
#include "tests/support/test_store.hpp"

namespace turns_test {

using namespace plotq::test;
using nlohmann::json;

// A quick snippet (two numeric columns) and one that never ends (cancel, timeout or deadline stop it).
inline const std::string kQuick = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2, 3], 'y': [2.5, 3.5, 4.5]})\n";
inline const std::string kForever = "import pandas as pd\nwhile True:\n    pass\ndf = pd.DataFrame({'a': [1]})\n";
inline const std::string kLogistic =
    "import numpy as np\nimport pandas as pd\nr = 3.7\nx = [0.4]\nfor _ in range(199):\n"
    "    x.append(r * x[-1] * (1 - x[-1]))\ndf = pd.DataFrame({'step': np.arange(200), 'x': x})\n";

inline json plain(const std::string& text) { return {{"text", text}}; }
inline json data(const std::string& code, const std::string& text = "make data") {
  return {{"text", text}, {"action", {{"kind", "data"}, {"code", code}, {"source_language", "python"}}}};
}

inline Env merge(Env base, const Env& extra) {
  for (const auto& [k, v] : extra) {
    bool replaced = false;
    for (auto& [bk, bv] : base)
      if (bk == k) bv = v, replaced = true;
    if (!replaced) base.emplace_back(k, v);
  }
  return base;
}

struct Event {
  std::string name;
  std::int64_t id = 0;
  json data;
};

// The next event frame (pings and the retry frame are skipped); nullopt on timeout or end.
inline std::optional<Event> next_event(SseStream& s, Ms timeout = 30s) {
  for (;;) {
    auto f = s.next(timeout);
    if (!f) return std::nullopt;
    if (f->event.empty() && f->data.empty()) continue;  // comment or retry-only frame
    Event e;
    e.name = f->event;
    e.id = f->has_id ? std::stoll(f->id) : -1;
    e.data = json::parse(f->data, nullptr, false);
    return e;
  }
}

// Events up to and including done (or until timeout / the stream ends).
inline std::vector<Event> until_done(SseStream& s, Ms timeout = 60s) {
  std::vector<Event> out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<Ms>(deadline - std::chrono::steady_clock::now());
    auto e = next_event(s, left);
    if (!e) break;
    out.push_back(*e);
    if (e->name == "done") break;
  }
  return out;
}

// Waits for the next event with this name (others are appended to seen, if given).
inline std::optional<Event> wait_for(SseStream& s, const std::string& name, Ms timeout = 30s,
                                     std::vector<Event>* seen = nullptr) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<Ms>(deadline - std::chrono::steady_clock::now());
    auto e = next_event(s, left);
    if (!e) return std::nullopt;
    if (seen) seen->push_back(*e);
    if (e->name == name) return e;
  }
  return std::nullopt;
}

inline std::vector<std::string> names(const std::vector<Event>& evs) {
  std::vector<std::string> out;
  for (const auto& e : evs) out.push_back(e.name);
  return out;
}

// ids 1, 2, 3, ... without a gap, starting at first.
inline bool consecutive(const std::vector<Event>& evs, std::int64_t first = 1) {
  for (std::size_t i = 0; i < evs.size(); ++i)
    if (evs[i].id != first + static_cast<std::int64_t>(i)) return false;
  return true;
}

struct Server {
  TempDir dir;
  TestStore store{dir};
  Env env;  // what plotqd was started with (a test may point PLOTQ_DB elsewhere)
  Plotqd d;
  explicit Server(Env extra = {}, bool development = true)
      : env(merge(base_env(development), extra)), d(PLOTQD_BINARY, env) {
    REQUIRE(d.wait_listening(30s));
  }
  Env base_env(bool development) {
    Env e = {{"PLOTQ_DB", store.target()},
             {"PLOTQ_RUNS_PER_MINUTE", "10000"},
             {"PLOTQ_USER_MESSAGES_PER_MINUTE", "1000"},
             {"PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S", "0"}};  // every queue change is a status (a test merges)
    if (development) e.emplace_back("PLOTQ_ENVIRONMENT", "development");
    return e;
  }
  std::uint16_t port() const { return d.port(); }
  static HeaderList as(const std::string& user) { return {{"X-Plotq-User", user}}; }

  HttpResponse get(const std::string& target, const HeaderList& h) { return http_request(port(), "GET", target, {}, h); }
  HttpResponse post(const std::string& target, const std::string& body, const HeaderList& h) {
    return http_request(port(), "POST", target, body, h);
  }
  std::string session(const std::string& user) { return session_with(as(user)); }
  std::string session_with(const HeaderList& h) {
    auto r = post("/v1/sessions", "", h);
    REQUIRE(r.status == 201);
    return r.json()["id"].get<std::string>();
  }
  std::unique_ptr<SseStream> turn(const std::string& user, const std::string& session, const json& body) {
    return turn_with(as(user), session, body);
  }
  std::unique_ptr<SseStream> turn_with(const HeaderList& h, const std::string& session, const json& body) {
    return std::make_unique<SseStream>(port(), "POST", "/v1/sessions/" + session + "/messages", body.dump(), h, 30s);
  }
  HttpResponse message(const std::string& user, const std::string& session, const json& body) {
    return post("/v1/sessions/" + session + "/messages", body.dump(), as(user));
  }
  json status(const std::string& user = "dev") {
    auto r = get("/v1/status", as(user));
    REQUIRE(r.status == 200);
    return r.json();
  }
  HttpResponse cancel(const std::string& user, const std::string& session, const std::string& turn) {
    return post("/v1/sessions/" + session + "/turns/" + turn + "/cancel", "", as(user));
  }
  // The store this plotqd uses (PLOTQ_DB as started, not always the one in dir).
  std::string db_path() const {
    for (const auto& [k, v] : env)
      if (k == "PLOTQ_DB") return v;
    return store.target();
  }
  std::unique_ptr<plotq::store::Db> db() { return plotq::store::Db::open(db_path()); }
  // One integer from the database (e.g. a count).
  std::int64_t scalar(const std::string& sql) {
    auto conn = db();
    plotq::store::Stmt q(*conn, sql);
    REQUIRE(q.executeStep());
    return q.getColumn(0).getInt64();
  }
  // The same once it reaches `want`, or what it is after `within`: a ledger row booked on its own
  // store call (a refusal's) may land just after the turn's done on PostgreSQL's pool.
  std::int64_t scalar_reaching(const std::string& sql, std::int64_t want,
                               std::chrono::milliseconds within = std::chrono::seconds(5)) {
    auto end = std::chrono::steady_clock::now() + within;
    std::int64_t got = scalar(sql);
    while (got != want && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      got = scalar(sql);
    }
    return got;
  }
};

}  // namespace turns_test
