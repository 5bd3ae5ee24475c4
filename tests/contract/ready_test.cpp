// /readyz and the SIGTERM drain against the real plotqd: readiness names what is not up yet and
// turns 200 once it is (a probe starts the warm zygotes and Chromium); on SIGTERM /readyz is 503,
// new turns, resumes and jobs get 503 unavailable with Retry-After, an open stream ends with an
// id-less closing event, the running render finishes inside the grace, and the turn resumes with
// Last-Event-ID from the restarted plotqd on the same store.
#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

#include "server/readiness.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/test_client.hpp"
#include "tests/support/test_store.hpp"

using namespace plotq::test;
using nlohmann::json;

namespace {

const std::string kBinary = PLOTQD_BINARY;
const HeaderList kAnn = {{"X-Plotq-User", "ann"}, {"Content-Type", "application/json"}};

Env dev_env(const TestStore& store, Env more = {}) {
  // One light zygote (raw mode preloads no library): the probe's warm-up stays short.
  Env env = {{"PLOTQ_DB", store.target()}, {"PLOTQ_ENVIRONMENT", "development"}, {"PLOTQ_WARM_MODES", "raw"}};
  for (const auto& kv : more) {
    std::erase_if(env, [&](const auto& e) { return e.first == kv.first; });
    env.push_back(kv);
  }
  return env;
}

std::string new_session(std::uint16_t port) {
  HttpResponse r = http_request(port, "POST", "/v1/sessions", "", kAnn);
  REQUIRE(r.status == 201);
  return r.json()["id"];
}

// Polls /readyz until 200 (or the deadline); returns every body seen.
std::vector<json> until_ready(std::uint16_t port, Ms limit) {
  std::vector<json> seen;
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    HttpResponse r = http_request(port, "GET", "/readyz");
    seen.push_back(r.json());
    if (r.status == 200) break;
    REQUIRE(r.status == 503);
    std::this_thread::sleep_for(200ms);
  }
  return seen;
}

}  // namespace

TEST_CASE("readyz: a report names the failing checks - pure", "[contract]") {
  bool ok = true;
  json body = plotq::server::ready_report({{"draining", true, "no"}, {"zygotes", false, "starting"},
                                           {"chromium", false, "starting"}}, &ok);
  CHECK_FALSE(ok);
  CHECK(body["status"] == "not_ready");
  CHECK(body["detail"] == "unavailable");
  CHECK(body["failing"] == json{"zygotes", "chromium"});
  CHECK(body["checks"]["zygotes"] == json{{"ok", false}, {"detail", "starting"}});
  body = plotq::server::ready_report({{"draining", true, "no"}, {"store_writable", true, "ok"}}, &ok);
  CHECK(ok);
  CHECK(body["status"] == "ready");
  CHECK_FALSE(body.contains("detail"));
}

TEST_CASE("readyz: 503 naming what is not up, then 200 once the probes started it - healthz stays 200", "[contract]") {
  TempDir dir;
  TestStore store(dir);
  // Data runs' zygote (the mode a node is ready for) and raw's (one that warms after it).
  Plotqd d(kBinary, dev_env(store, {{"PLOTQ_WARM_MODES", "raw,data"}}));
  REQUIRE(d.wait_listening(30s));
  HttpResponse first = http_request(d.port(), "GET", "/readyz");
  json body = first.json();
  if (!body["checks"]["sandbox"]["ok"].get<bool>()) return skip_test("the sandbox's layers are not whole on this host");
  CHECK(http_request(d.port(), "GET", "/healthz").status == 200);
  // A fresh plotqd has started no zygote yet (they start on their first job, or this probe).
  REQUIRE(first.status == 503);
  CHECK(body["status"] == "not_ready");
  CHECK(body["detail"] == "unavailable");
  const json& failing = body["failing"];
  CHECK(std::find(failing.begin(), failing.end(), "zygotes") != failing.end());
  for (const auto& name : failing) CHECK((name == "zygotes" || name == "chromium"));
  for (const char* c : {"store_writable", "migrations", "sandbox", "draining"}) {
    INFO(c);
    CHECK(body["checks"][c]["ok"] == true);
  }
  CHECK(body["modes"]["data"] == "warming");  // the probe started data runs' zygote first, alone
  CHECK(body["modes"]["raw"] == "off");
  CHECK(body["modes"]["plot"] == "cold");  // not a warm mode here
  auto seen = until_ready(d.port(), 60s);
  REQUIRE(seen.back()["status"] == "ready");
  CHECK(seen.back()["failing"] == json::array());
  // Ready once data runs are warm; the other modes warm after it (a job of theirs waits meanwhile).
  CHECK(seen.back()["modes"]["data"] == "warm");
  std::string detail = seen.back()["checks"]["zygotes"]["detail"];
  CHECK((detail == "warming" || detail == "ready"));
  json last;
  auto end = std::chrono::steady_clock::now() + 90s;
  while (std::chrono::steady_clock::now() < end) {
    HttpResponse r = http_request(d.port(), "GET", "/readyz");
    CHECK(r.status == 200);  // still ready while the others warm
    last = r.json();
    if (last["checks"]["zygotes"]["detail"] == "ready") break;
    std::this_thread::sleep_for(200ms);
  }
  INFO(last.dump());
  CHECK(last["checks"]["zygotes"]["detail"] == "ready");
  for (const char* m : {"raw", "data"}) CHECK(last["modes"][m] == "warm");
  CHECK((last["modes"]["snippet"] == "warm" || last["modes"]["snippet"] == "disabled"));
}

TEST_CASE("drain: SIGTERM - readyz 503, new work 503 with Retry-After, streams close resumably, the running render finishes", "[contract]") {
  TempDir dir;
  TestStore store(dir);
  // Cold jobs: the render does not wait for a zygote's preload, and no probe warms anything here.
  Env env = dev_env(store, {{"PLOTQ_SHUTDOWN_GRACE_S", "120"}, {"PLOTQ_TURN_RENDER_TIMEOUT_S", "110"},
                          {"PLOTQ_SANDBOX_COLD", "1"}});
  std::string sid, turn;
  std::int64_t last_id = 0;
  {
    Plotqd d(kBinary, env);
    REQUIRE(d.wait_listening(30s));
    if (!http_request(d.port(), "GET", "/healthz").json()["sandbox"]["ok"].get<bool>())
      return skip_test("the sandbox's layers are not whole on this host");
    sid = new_session(d.port());
    const std::string code =
        "import os, time\nimport matplotlib.pyplot as plt\ntime.sleep(2)\nTHEME = os.getenv('ANYPLOT_THEME', 'light')\n"
        "fig, ax = plt.subplots(figsize=(16, 9), dpi=200)\nax.plot([1, 2, 3], [3, 1, 2])\n"
        "fig.savefig(f'plot-{THEME}.png', dpi=200)\n";
    json msg = {{"text", "slow plot"}, {"action", {{"kind", "plot"}, {"code", code}, {"library", "matplotlib"}, {"themes", {"light"}}}}};
    SseStream s(d.port(), "POST", "/v1/sessions/" + sid + "/messages", msg.dump(), kAnn);
    REQUIRE(s.head().status == 200);
    turn = s.head().header("X-Plotq-Turn").value_or("");
    REQUIRE(turn.size() == 16);
    for (;;) {  // until the render runs
      auto ev = s.next_event(30s);
      REQUIRE(ev);
      last_id = std::stoll(ev->id);
      if (ev->event == "status" && json::parse(ev->data)["step"] == "rendering") break;
    }
    d.signal(SIGTERM);
    REQUIRE(d.wait_log("drain", 5s));
    // The open stream: an id-less closing event, then the end (no done: the turn runs on).
    auto closing = s.next_event(5s);
    REQUIRE(closing);
    CHECK(closing->event == "closing");
    CHECK_FALSE(closing->has_id);
    CHECK(json::parse(closing->data) == json{{"reason", "shutdown"}, {"retry_after_s", 120}});
    CHECK_FALSE(s.next_event(5s));
    CHECK(s.ended());

    HttpResponse ready = http_request(d.port(), "GET", "/readyz");
    CHECK(ready.status == 503);
    CHECK(ready.json()["draining"] == true);
    CHECK(ready.json()["failing"][0] == "draining");
    CHECK(http_request(d.port(), "GET", "/healthz").status == 200);  // liveness is not readiness
    for (auto [method, path, body] : {std::tuple<std::string, std::string, std::string>{"POST", "/v1/sessions/" + sid + "/messages", R"({"text":"hi"})"},
                                      {"GET", "/v1/sessions/" + sid + "/turns/" + turn + "/events", ""},
                                      {"POST", "/run-data", R"({"job_id":"j1","source":"df = 1","timeout_s":5})"}}) {
      INFO(method << " " << path);
      HttpResponse r = http_request(d.port(), method, path, body, kAnn);
      CHECK(r.status == 503);
      CHECK(r.json() == json{{"detail", "unavailable"}});
      CHECK(r.header("Retry-After") == std::optional<std::string>("120"));
    }
    CHECK_FALSE(d.wait_exit(Ms(500)));  // the render still runs: the grace is not over
    auto exit_code = d.wait_exit(120s);
    if (exit_code != std::optional<int>(0))
      for (const auto& l : d.stderr_lines()) UNSCOPED_INFO(l);
    REQUIRE(exit_code == std::optional<int>(0));
    auto shutdown = d.log_events("shutdown");
    REQUIRE(shutdown.size() == 1);
    CHECK(shutdown[0]["work_left"] == 0);  // ended because the work did, not at the grace
  }
  // The restart on the same store: the resume gets what was made after the client's last id.
  Plotqd d2(kBinary, env);
  REQUIRE(d2.wait_listening(30s));
  SseStream r(d2.port(), "GET", "/v1/sessions/" + sid + "/turns/" + turn + "/events", "",
              {{"X-Plotq-User", "ann"}, {"Last-Event-ID", std::to_string(last_id)}});
  REQUIRE(r.head().status == 200);
  std::vector<std::string> names, seen;
  json done;
  while (auto ev = r.next_event(10s)) {
    names.push_back(ev->event);
    seen.push_back(ev->event + " " + ev->data);
    CHECK(std::stoll(ev->id) > last_id);
    if (ev->event == "done") done = json::parse(ev->data);
  }
  INFO("the resumed events: " << json(seen).dump());
  CHECK(names == std::vector<std::string>{"plot", "message", "done"});
  CHECK(done["state"] == "ok");
}
