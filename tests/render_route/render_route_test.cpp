// POST /render over loopback against a real plotqd: a real matplotlib render, a render off the
// canvas, the wire model, invalid_library and runtime_unavailable before any sandbox, idempotency,
// cancel and the renderer status with the runtime's identity.
#include <catch2/catch.hpp>

#include <thread>

#include "tests/support/dev_plotqd.hpp"

using namespace plotq::test;
using nlohmann::json;

namespace {

const std::string& kLine = kLinePlot;

struct Server : DevPlotqd {
  using DevPlotqd::DevPlotqd;
  HttpResponse post(const json& body, Ms timeout = 120s) {
    return http_request(d.port(), "POST", "/render", body.dump(), {}, timeout);
  }
};

json req(const std::string& job_id, const std::string& library, json themes, const std::string& source = kLine) {
  return {{"job_id", job_id}, {"source", source}, {"library", library}, {"themes", themes}, {"timeout_s", 60}};
}

}  // namespace

TEST_CASE("a matplotlib render answers a 3200x1800 PNG per theme and a ledger row each") {
  Server s;
  auto r = s.post(req("line", "matplotlib", {"light", "dark"}));
  REQUIRE(r.status == 200);
  json b = r.json();
  CHECK(b["job_id"] == "line");
  for (const char* theme : {"light", "dark"}) {
    INFO(theme);
    const json& t = b["outputs"][theme];
    CHECK(t["reason"].is_null());
    CHECK(t["exit_code"] == 0);
    CHECK(t["width"] == 3200);
    CHECK(t["height"] == 1800);
    CHECK(t["canvas"] == "exact");
    REQUIRE(t["png_base64"].is_string());
    CHECK(t["png_base64"].get<std::string>().rfind("iVBORw0KGgo", 0) == 0);  // the PNG signature
  }
  auto rows = s.ledger("line");
  CHECK(rows.size() == 2);
  // Each row names the runtime the render ran on: the id GET /status shows.
  auto status = http_request(s.d.port(), "GET", "/status").json();
  for (const auto& row : rows) CHECK(row.runtime_id == status["runtime"]["id"].get<std::string>());
  // The same request again is the stored answer, not a second render.
  auto again = s.post(req("line", "matplotlib", {"light", "dark"}));
  CHECK(again.json() == b);
  CHECK(s.ledger("line").size() == 2);
}

TEST_CASE("a render with no output file fails with its own reason") {
  Server s;
  auto r = s.post(req("noout", "matplotlib", {"light"},
                      "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([1, 2], [2, 1])\n"));
  REQUIRE(r.status == 200);
  CHECK(r.json()["outputs"]["light"]["reason"] == "no_output");
  CHECK(r.json()["outputs"]["light"]["png_base64"].is_null());
}

TEST_CASE("a PNG off the canvas is a render, answered with its size and canvas off") {
  Server s;
  auto r = s.post(req("tight", "matplotlib", {"light"},
                      "import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(8, 6), dpi=100)\n"
                      "ax.plot([1, 2], [2, 1])\nfig.savefig('plot-light.png')\n"));
  REQUIRE(r.status == 200);
  const json body = r.json();
  const json& t = body["outputs"]["light"];
  CHECK(t["reason"].is_null());
  CHECK(t["width"] == 800);
  CHECK(t["height"] == 600);
  CHECK(t["canvas"] == "off");
  CHECK(t["png_base64"].is_string());
  auto rows = s.ledger("tight");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].outcome == plotq::store::RunOutcome::ok);
}

TEST_CASE("a library plotq does not render is 422 invalid_library before any sandbox - and still a ledger row") {
  Server s;
  auto r = s.post(req("gg", "ggplot", {"light"}));
  CHECK(r.status == 422);
  CHECK(r.json() == json{{"detail", "invalid_library"}});
  auto rows = s.ledger("gg");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].refusal_code == "invalid_library");
  CHECK(rows[0].attempts == 1);
}

TEST_CASE("a figure library without a figure renderer is runtime_unavailable before any sandbox") {
  // No Chromium here: plotly and bokeh (figure mode) cannot be drawn; the plot-mode libraries can.
  TempDir dir;
  TestStore store(dir);
  Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", store.target()},
                           {"PLOTQ_ENVIRONMENT", "development"},
                           {"PLOTQ_CHROMIUM", "/nonexistent/chromium"}});
  REQUIRE(d.wait_listening(30s));
  for (const char* library : {"bokeh", "plotly"}) {
    INFO(library);
    auto r = http_request(d.port(), "POST", "/render", req(std::string("fig-") + library, library, {"light"}).dump());
    CHECK(r.status == 503);
    CHECK(r.json() == json{{"detail", "runtime_unavailable"}});
  }
  auto st = http_request(d.port(), "GET", "/status").json();
  CHECK(st["figures"] == false);
  auto db = store.open();
  plotq::store::LedgerQuery q;
  q.job_id = "fig-bokeh";
  auto rows = plotq::store::ledger::query(*db, q);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].refusal_code == "runtime_unavailable");
}

TEST_CASE("the render wire model is closed") {
  Server s;
  std::vector<json> bad = {
      req("x", "matplotlib", {"light", "light"}),             // not distinct
      req("x", "matplotlib", json::array()),                  // none
      req("x", "matplotlib", {"light", "dark", "light"}),     // too many
      req("x", "matplotlib", {"sepia"}),                      // unknown theme
      req("x", "Matplotlib!", {"light"}),                     // library pattern
      req("x/..", "matplotlib", {"light"}),                   // job id pattern
  };
  json extra = req("x", "matplotlib", {"light"});
  extra["interpreter"] = "python";  // a field the model does not have (`language` it has)
  bad.push_back(extra);
  json lang = req("x", "matplotlib", {"light"});
  lang["language"] = "cobol";  // a language no library table row names
  bad.push_back(lang);
  json slow = req("x", "matplotlib", {"light"});
  slow["timeout_s"] = 121;
  bad.push_back(slow);
  for (const auto& b : bad) {
    INFO(b.dump().substr(0, 120));
    auto r = s.post(b, 10s);
    CHECK(r.status == 422);
    CHECK(r.json() == json{{"detail", "invalid_job"}});
  }
  // A language of the table that is not the library's: the library is refused, not the body.
  json mismatch = req("x", "matplotlib", {"light"});
  mismatch["language"] = "r";
  auto m = s.post(mismatch, 10s);
  CHECK(m.status == 422);
  CHECK(m.json() == json{{"detail", "invalid_library"}});
}

TEST_CASE("cancel stops a running render and the waiter gets 499 cancelled") {
  TempDir runs;
  Server s({{"PLOTQ_RUNS_DIR", runs.path()}});
  const std::string spin = "open('spinning', 'w').close()\nwhile True:\n    pass\n";
  HttpResponse r;
  std::thread t([&] { r = s.post(req("spin", "matplotlib", {"light"}, spin)); });
  // Running: the job's own code wrote its marker in its work dir.
  const bool running = wait_job_file(runs.path(), "spinning");
  if (!running) {
    http_request(s.d.port(), "POST", "/render/spin/cancel");
    t.join();
  }
  REQUIRE(running);
  auto c = http_request(s.d.port(), "POST", "/render/spin/cancel");
  REQUIRE(c.status == 200);
  CHECK(c.json()["cancelled"] == 1);
  t.join();
  CHECK(r.status == 499);
  CHECK(r.json() == json{{"detail", "cancelled"}});
  // The sandbox job itself was stopped (the spin never ends by itself).
  auto job = s.d.wait_log("sandbox_job", 10s, [](const json& e) { return e.value("label", "") == "render spin light"; });
  REQUIRE(job);
  CHECK((*job)["reason"] == "cancelled");
  auto none = http_request(s.d.port(), "POST", "/render/spin/cancel");
  CHECK(none.json()["cancelled"] == 0);
}

TEST_CASE("GET /status reports the renderer") {
  Server s;
  auto r = http_request(s.d.port(), "GET", "/status");
  REQUIRE(r.status == 200);
  json b = r.json();
  CHECK(b["name"] == "plotq-renderer");
  CHECK(b["in_flight"] == 0);
  CHECK(b["waiting"] == 0);
  CHECK(b["sandbox"] == true);
  // The runtime's identity, as the venv's manifest has it: its id and each package's version.
  const json& rt = b["runtime"];
  REQUIRE(rt["id"].is_string());
  CHECK(rt["id"].get<std::string>().size() == 12);
  CHECK(rt["lock_sha256"].get<std::string>().rfind(rt["id"].get<std::string>(), 0) == 0);
  CHECK(rt["packages"]["matplotlib"].is_string());
  CHECK(rt["packages"]["bokeh"].is_string());
}
