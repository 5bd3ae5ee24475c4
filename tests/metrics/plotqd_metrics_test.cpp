// GET /metrics of a real plotqd: scraped, then real work (chat turns: a plain one, a data run, a
// refused one; a resume; POST /run-data; POST /render; an unknown path), scraped again: every counter the work
// touches moved by exactly that work and its families by nothing more; the ledger agrees with the
// runs counter. And the caller check: off loopback only with PLOTQ_METRICS_TOKEN.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <map>
#include <sstream>

#include "store/db.hpp"
#include "store/ledger.hpp"
#include "tests/support/dev_plotqd.hpp"
#include "tests/support/skip.hpp"
#include "tests/support/test_client.hpp"
#include "tests/support/test_store.hpp"

using namespace plotq::test;
using nlohmann::json;

namespace {

// "name{labels}" -> value, for every sample line of an exposition text.
using Scrape = std::map<std::string, double>;

Scrape parse(const std::string& text) {
  Scrape out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] == '#') continue;
    auto sp = l.rfind(' ');
    REQUIRE(sp != std::string::npos);
    out[l.substr(0, sp)] = std::stod(l.substr(sp + 1));
  }
  return out;
}

Scrape scrape(std::uint16_t port) {
  HttpResponse r = http_request(port, "GET", "/metrics");
  REQUIRE(r.status == 200);
  REQUIRE(r.header("Content-Type").value_or("") == "text/plain; version=0.0.4; charset=utf-8");
  return parse(r.body);
}

double at(const std::map<std::string, double>& s, const std::string& key) {
  auto it = s.find(key);
  return it == s.end() ? 0 : it->second;
}
double delta(const Scrape& a, const Scrape& b, const std::string& key) { return at(b, key) - at(a, key); }

// Every sample of a family (name + "{" or name + " ") whose value changed, with its change.
std::map<std::string, double> moved(const Scrape& a, const Scrape& b, const std::string& family) {
  std::map<std::string, double> out;
  for (const auto& [k, v] : b) {
    if (k != family && k.rfind(family + "{", 0) != 0) continue;
    if (double d = v - at(a, k); d != 0) out[k] = d;
  }
  for (const auto& [k, v] : a)
    if ((k == family || k.rfind(family + "{", 0) == 0) && !b.count(k)) out[k] = -v;
  return out;
}

struct Stream {
  std::vector<SseFrame> events;  // frames with an event name
};
Stream read_turn(SseStream& s) {
  Stream out;
  while (auto f = s.next(30s)) {
    if (f->event.empty()) continue;  // ping or retry frame
    out.events.push_back(*f);
    if (f->event == "done") break;
  }
  return out;
}

std::string host_address() {  // a non-loopback IPv4 address of this host, or ""
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string found;
  for (ifaddrs* i = list; i && found.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    auto* a = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
    if ((ntohl(a->sin_addr.s_addr) >> 24) == 127) continue;
    char buf[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf)) found = buf;
  }
  freeifaddrs(list);
  return found;
}

HttpResponse get_from(const std::string& host, std::uint16_t port, const HeaderList& headers) {
  Connection c(port, host);
  REQUIRE(c.send(format_request("GET", "/metrics", {}, headers, false)));
  auto r = c.read_response(10s);
  REQUIRE(r);
  return *r;
}

const std::string kRows = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n";

}  // namespace

TEST_CASE("scrape: the counters move by exactly the work done", "[metrics][plotqd]") {
  TempDir dir;
  TestStore store(dir);
  Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", store.target()},
                           {"PLOTQ_ENVIRONMENT", "development"},
                           {"PLOTQ_RUNS_PER_MINUTE", "10000"},
                           {"PLOTQ_USER_MESSAGES_PER_DAY", "2"}});  // ann's third message: daily_limit
  REQUIRE(d.wait_listening(30s));
  const HeaderList ann = {{"X-Plotq-User", "ann"}};

  const Scrape a = scrape(d.port());
  // Families are there before any work, at zero where their labels are known.
  CHECK(a.count("plotq_sse_streams_open"));
  CHECK(a.count(R"(plotq_queue_capacity_refusals_total{holder="turn"})"));
  CHECK(a.count(R"(plotq_queue_slot_busy{slot="0"})"));
  CHECK(a.count("plotq_store_wal_bytes"));
  CHECK(a.count(R"(plotq_store_commit_seconds_count{what="data_run"})"));

  // The work.
  auto created = http_request(d.port(), "POST", "/v1/sessions", "", ann);
  REQUIRE(created.status == 201);
  const std::string sid = created.json()["id"];
  const std::string messages = "/v1/sessions/" + sid + "/messages";
  std::size_t live = 0;
  std::string plain_turn;
  {
    SseStream s(d.port(), "POST", messages, json{{"text", "hello"}}.dump(), ann, 30s);
    REQUIRE(s.head().status == 200);
    Stream t = read_turn(s);
    REQUIRE(!t.events.empty());
    CHECK(t.events.back().event == "done");
    plain_turn = json::parse(t.events.front().data).value("turn", "");
    live += t.events.size();
  }
  {
    json body = {{"text", "make data"},
                 {"action", {{"kind", "data"}, {"code", kRows}, {"source_language", "python"}}}};
    SseStream s(d.port(), "POST", messages, body.dump(), ann, 60s);
    Stream t = read_turn(s);
    REQUIRE(!t.events.empty());
    bool dataset = false;
    for (const auto& f : t.events) dataset = dataset || f.event == "dataset";
    CHECK(dataset);
    live += t.events.size();
  }
  {
    SseStream s(d.port(), "POST", messages, json{{"text", "once more"}}.dump(), ann, 30s);
    Stream t = read_turn(s);
    bool refused = false;
    for (const auto& f : t.events)
      refused = refused || (f.event == "refusal" && json::parse(f.data)["code"] == "daily_limit");
    CHECK(refused);
    live += t.events.size();
  }
  std::size_t replayed = 0;
  if (!plain_turn.empty()) {
    SseStream s(d.port(), "GET", "/v1/sessions/" + sid + "/turns/" + plain_turn + "/events?after=0", {}, ann, 30s);
    REQUIRE(s.head().status == 200);
    replayed = read_turn(s).events.size();
    CHECK(replayed > 0);
  }
  auto run = http_request(d.port(), "POST", "/run-data",
                          json{{"job_id", "metrics-1"}, {"source", kRows}, {"timeout_s", 20}}.dump(), {}, 60s);
  CHECK(run.status == 200);
  auto render = http_request(d.port(), "POST", "/render",
                             json{{"job_id", "metrics-2"}, {"source", plotq::test::kLinePlot}, {"library", "matplotlib"},
                                  {"themes", {"light"}}, {"timeout_s", 60}}
                                 .dump(),
                             {}, 120s);
  CHECK(render.status == 200);
  CHECK(http_request(d.port(), "GET", "/no/such/path").status == 404);

  const Scrape b = scrape(d.port());

  // HTTP: by route pattern (never the raw path), method and status.
  const std::string req = "plotq_http_requests_total";
  const auto http = moved(a, b, req);
  CHECK(http.size() == 7);
  CHECK(at(http, req + R"({route="/v1/sessions",method="POST",status="201"})") == 1);
  CHECK(at(http, req + R"({route="/v1/sessions/{id}/messages",method="POST",status="200"})") == 3);
  CHECK(at(http, req + R"({route="/v1/sessions/{id}/turns/{turn}/events",method="GET",status="200"})") == 1);
  CHECK(at(http, req + R"({route="/run-data",method="POST",status="200"})") == 1);
  CHECK(at(http, req + R"({route="/render",method="POST",status="200"})") == 1);
  CHECK(at(http, req + R"({route="unmatched",method="GET",status="404"})") == 1);
  CHECK(at(http, req + R"({route="/metrics",method="GET",status="200"})") == 1);  // scrape a
  for (const auto& [k, v] : http) CHECK(k.find(sid) == std::string::npos);
  CHECK(delta(a, b, R"(plotq_http_request_seconds_count{route="/run-data"})") == 1);

  // Sandbox runs: the turn's data run and /run-data's, /render's one theme, nothing else; the
  // ledger has the same three.
  auto runs = moved(a, b, "plotq_sandbox_runs_total");
  CHECK(runs == std::map<std::string, double>{
                    {R"(plotq_sandbox_runs_total{kind="data",library="none",outcome="ok"})", 2},
                    {R"(plotq_sandbox_runs_total{kind="render",library="matplotlib",outcome="ok"})", 1}});
  CHECK(delta(a, b, R"(plotq_sandbox_run_wall_seconds_count{kind="data"})") == 2);
  CHECK(delta(a, b, R"(plotq_sandbox_run_cpu_seconds_count{kind="data"})") == 2);
  CHECK(delta(a, b, R"(plotq_sandbox_attempts_total{kind="data"})") == 2);
  CHECK(delta(a, b, R"(plotq_sandbox_run_wall_seconds_count{kind="render"})") == 1);
  CHECK(delta(a, b, R"(plotq_sandbox_attempts_total{kind="render"})") == 1);
  {
    auto db = store.open();
    plotq::store::LedgerQuery q;
    CHECK(plotq::store::ledger::query(*db, q).size() == 3);
  }

  // Queue: one grant for a turn, one for a job; nothing refused or expired; the slot free again.
  CHECK(delta(a, b, R"(plotq_queue_slot_wait_seconds_count{holder="turn"})") == 1);
  CHECK(delta(a, b, R"(plotq_queue_slot_wait_seconds_count{holder="job"})") == 2);
  CHECK(moved(a, b, "plotq_queue_capacity_refusals_total").empty());
  CHECK(moved(a, b, "plotq_queue_max_wait_expiries_total").empty());
  CHECK(at(b, R"(plotq_queue_slot_busy{slot="0"})") == 0);
  CHECK(at(b, R"(plotq_queue_waiting{holder="turn"})") == 0);

  // Turn refusals by code; SSE streams and events as the client read them.
  CHECK(moved(a, b, "plotq_turn_refusals_total") ==
        std::map<std::string, double>{{R"(plotq_turn_refusals_total{code="daily_limit"})", 1}});
  CHECK(delta(a, b, "plotq_sse_streams_open") == 0);
  CHECK(moved(a, b, "plotq_sse_streams_closed_total") ==
        std::map<std::string, double>{{R"(plotq_sse_streams_closed_total{reason="done"})", 4}});
  CHECK(delta(a, b, R"(plotq_sse_events_sent_total{source="live"})") == double(live));
  CHECK(delta(a, b, R"(plotq_sse_events_sent_total{source="replay"})") == double(replayed));
  CHECK(delta(a, b, "plotq_sse_resumes_total") == 1);

  // The store: the turns' events were committed (batches: at least one, at most one per event).
  double commits = delta(a, b, R"(plotq_store_commit_seconds_count{what="turn_events"})");
  CHECK(commits >= 1);
  CHECK(commits <= double(live));
  // The jobs' write transactions: each data run's ledger row with its answer, the render's rows.
  CHECK(delta(a, b, R"(plotq_store_commit_seconds_count{what="data_run"})") == 2);
  CHECK(delta(a, b, R"(plotq_store_commit_seconds_count{what="render_rows"})") == 1);
  // SQLite's -wal file holds the commits not yet checkpointed; PostgreSQL has no such file here.
  if (store.postgres())
    CHECK(at(b, "plotq_store_wal_bytes") == 0);
  else
    CHECK(at(b, "plotq_store_wal_bytes") > 0);
}

TEST_CASE("scrape: off loopback only the metrics token opens it", "[metrics][plotqd]") {
  const std::string host = host_address();
  if (host.empty()) return skip_test("this host has no non-loopback IPv4 address to call plotqd from");
  const std::string token = "metrics-token-0123456789";
  TempDir dir;
  TestStore store(dir);
  Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", store.target()},
                           {"PLOTQ_LISTEN", "0.0.0.0:0"},
                           {"PLOTQ_METRICS_TOKEN", token},
                           {"PLOTQ_TOKENS", "user-token-0123456789ab=ann"}});
  REQUIRE(d.wait_listening(30s));
  CHECK(get_from(host, d.port(), {}).status == 401);
  CHECK(get_from(host, d.port(), {{"Authorization", "Bearer user-token-0123456789ab"}}).status == 401);  // a user's token
  CHECK(get_from(host, d.port(), {{"Authorization", "Bearer " + token + "x"}}).status == 401);
  HttpResponse ok = get_from(host, d.port(), {{"Authorization", "Bearer " + token}});
  CHECK(ok.status == 200);
  CHECK(ok.body.find("# TYPE plotq_http_requests_total counter") != std::string::npos);
  CHECK(get_from("127.0.0.1", d.port(), {}).status == 200);  // loopback needs no token
  // The refusals are counted like any answer (status 401 on the /metrics route).
  Scrape s = parse(get_from("127.0.0.1", d.port(), {}).body);
  CHECK(at(s, R"(plotq_http_requests_total{route="/metrics",method="GET",status="401"})") == 3);

  // Without a metrics token nobody off loopback gets it.
  TempDir dir2;
  TestStore store2(dir2);
  Plotqd closed(PLOTQD_BINARY, {{"PLOTQ_DB", store2.target()}, {"PLOTQ_LISTEN", "0.0.0.0:0"}});
  REQUIRE(closed.wait_listening(30s));
  HttpResponse r = get_from(host, closed.port(), {{"Authorization", "Bearer " + token}});
  CHECK(r.status == 403);
  CHECK(r.body == R"({"detail":"forbidden"})");
}
