// JavaScript snippets on a real plotqd: POST /render with language "javascript" and a chat turn's
// plot action draw chart.js, d3, echarts, highcharts and MUI X snippets in the figure renderer's
// locked page. The answers, the ledger rows (with the JavaScript runtime's id), the refusals of the
// wire, a snippet's own error in plotq's words, and an escape tried against a loopback listener.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "tests/turns/turn_client.hpp"

using namespace turns_test;

namespace {

const std::string kChart =
    "//# anyplot-orientation: landscape\n"
    "const t = window.ANYPLOT_TOKENS;\n"
    "const c = document.createElement('canvas');\n"
    "document.getElementById('container').appendChild(c);\n"
    "new Chart(c, {type: 'bar', data: {labels: ['a', 'b', 'c'], datasets: [{data: [3, 1, 2], "
    "backgroundColor: t.palette[0]}]}, options: {animation: false, responsive: true, maintainAspectRatio: false}});\n";

const std::string kMuix =
    "//# anyplot-orientation: square\n"
    "import { BarChart } from \"@mui/x-charts/BarChart\";\n"
    "export default function Chart() {\n"
    "  return <BarChart width={1200} height={1200} skipAnimation\n"
    "    xAxis={[{ scaleType: \"band\", data: [\"a\", \"b\", \"c\"] }]} series={[{ data: [3, 1, 2] }]} />;\n"
    "}\n";

json render(const std::string& job_id, const std::string& library, const std::string& source,
            std::vector<std::string> themes = {"light"}) {
  return {{"job_id", job_id}, {"source", source}, {"library", library}, {"themes", themes}, {"timeout_s", 60}};
}

// The first render also starts the figure renderer (Chromium): more than the client's default wait.
HttpResponse post_render(Server& s, const json& body) {
  return http_request(s.port(), "POST", "/render", body.dump(), {}, 120s);
}

bool is_png(const std::string& b64) { return b64.rfind("iVBORw0KGgo", 0) == 0; }  // "\x89PNG\r\n\x1a\n"

// A TCP listener on 127.0.0.1 that counts the connections it accepts (the escape's marker).
struct Listener {
  int fd = -1;
  std::uint16_t port = 0;
  std::atomic<int> accepted{0};
  std::atomic<bool> stop{false};
  std::thread t;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
    t = std::thread([this] {
      while (!stop) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
          int c = ::accept(fd, nullptr, nullptr);
          if (c >= 0) {
            ++accepted;
            ::close(c);
          }
        }
      }
    });
  }
  ~Listener() {
    stop = true;
    t.join();
    ::close(fd);
  }
};

}  // namespace

TEST_CASE("POST /render draws a chart.js snippet in both themes and books it on the JavaScript runtime") {
  Server s;
  auto st = s.get("/status", {});
  REQUIRE(st.status == 200);
  INFO(st.body);
  const json js = st.json()["js_runtime"];
  REQUIRE(js["id"].is_string());
  CHECK(js["packages"]["chart.js"] == "4.4.7");
  CHECK(js["packages"]["@mui/x-charts"] == "7.29.1");

  auto r = post_render(s, render("js-bar", "chartjs", kChart, {"light", "dark"}));
  INFO(r.body.substr(0, 2000));
  REQUIRE(r.status == 200);
  const json out = r.json()["outputs"];
  for (const std::string theme : {"light", "dark"}) {
    INFO(theme);
    CHECK(out[theme]["reason"].is_null());
    CHECK(out[theme]["width"] == 3200);
    CHECK(out[theme]["height"] == 1800);
    CHECK(out[theme]["canvas"] == "exact");
    CHECK(is_png(out[theme]["png_base64"]));
  }
  CHECK(out["light"]["png_base64"] != out["dark"]["png_base64"]);  // the tokens follow the theme
  // Two ledger rows, on the JavaScript runtime's id (not the Python one's).
  const std::string id = js["id"];
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE job_id = 'js-bar' AND outcome = 'ok' AND runtime_id = '" + id + "'") == 2);

  // `language` may be given and must be the library's own.
  auto same = render("js-bar-2", "chartjs", kChart);
  same["language"] = "javascript";
  CHECK(post_render(s, same).status == 200);
  auto wrong = render("js-bar-3", "chartjs", kChart);
  wrong["language"] = "python";
  auto w = post_render(s, wrong);
  CHECK(w.status == 422);
  CHECK(w.json()["detail"] == "invalid_library");
  auto py = render("py-as-js", "matplotlib", "import matplotlib\n");
  py["language"] = "javascript";
  CHECK(post_render(s, py).json()["detail"] == "invalid_library");
  auto lang = render("js-bar-4", "chartjs", kChart);
  lang["language"] = "rust";
  CHECK(post_render(s, lang).json()["detail"] == "invalid_job");
  // A snippet's page has no files: data_csv is refused, not silently dropped.
  auto data = render("js-bar-5", "chartjs", kChart);
  data["data_csv"] = "a,b\n1,2\n";
  auto dr = post_render(s, data);
  CHECK(dr.status == 422);
  CHECK(dr.json()["detail"] == "invalid_job");
}

TEST_CASE("a MUI X snippet is bundled and drawn square and a snippet's error is its class and line") {
  Server s;
  auto m = post_render(s, render("js-muix", "muix", kMuix));
  INFO(m.body.substr(0, 2000));
  REQUIRE(m.status == 200);
  CHECK(m.json()["outputs"]["light"]["width"] == 2400);
  CHECK(m.json()["outputs"]["light"]["height"] == 2400);

  // Line 3 reads a name that does not exist: plot_error, ReferenceError at line 3, never the message.
  const std::string bad = "const t = window.ANYPLOT_TOKENS;\nconst x = 1;\nSECRET_MESSAGE_NAME.draw(x);\n";
  auto e = post_render(s, render("js-bad", "d3", bad));
  INFO(e.body.substr(0, 2000));
  REQUIRE(e.status == 200);
  const json light = e.json()["outputs"]["light"];
  CHECK(light["reason"] == "plot_error");
  CHECK(light["error"]["class"] == "ReferenceError");
  CHECK(light["error"]["line"] == 3);
  CHECK(light["png_base64"].is_null());
  CHECK(e.body.find("SECRET_MESSAGE_NAME") == std::string::npos);
  INFO("rows of js-bad: " << s.scalar("SELECT count(*) FROM runs WHERE job_id = 'js-bad'"));
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE job_id = 'js-bad' AND outcome = 'failed' AND reason = 'plot_error'") == 1);

  // An import the page does not provide is the guard's refusal, with its line.
  // (TypeScript drops an import whose name is never used, so this one is used.)
  const std::string imp = "import { BarChart } from \"@mui/x-charts/BarChart\";\nimport fs from \"fs\";\n"
                          "export default function C() { return <BarChart width={10} height={10} series={[]} title={String(fs)} />; }\n";
  auto i = post_render(s, render("js-import", "muix", imp));
  REQUIRE(i.status == 200);
  CHECK(i.json()["outputs"]["light"]["reason"] == "guard_refused");
  CHECK(i.json()["outputs"]["light"]["error"]["line"] == 2);

  // A snippet that draws nothing is blank, not a render.
  auto b = post_render(s, render("js-blank", "echarts", "const t = window.ANYPLOT_TOKENS;\n"));
  REQUIRE(b.status == 200);
  CHECK(b.json()["outputs"]["light"]["reason"] == "blank");
}

TEST_CASE("a snippet that reaches for the network leaves a loopback listener untouched and still draws") {
  Server s;
  Listener l;
  const std::string url = "http://127.0.0.1:" + std::to_string(l.port) + "/";
  const std::string hostile = kChart +
                              "try { fetch('" + url + "f').catch(() => {}); } catch (e) {}\n"
                              "try { new Image().src = '" + url + "i'; } catch (e) {}\n"
                              "try { new WebSocket('ws://127.0.0.1:" + std::to_string(l.port) + "/'); } catch (e) {}\n"
                              "try { navigator.sendBeacon('" + url + "b', 'x'); } catch (e) {}\n"
                              "try { window.open('" + url + "o'); } catch (e) {}\n";
  auto r = post_render(s, render("js-net", "chartjs", hostile));
  INFO(r.body.substr(0, 2000));
  REQUIRE(r.status == 200);
  CHECK(r.json()["outputs"]["light"]["width"] == 3200);
  // A navigation away ends the render as navigated, and goes nowhere either.
  auto n = post_render(s, render("js-nav", "chartjs", kChart + "location.href = '" + url + "n';\n"));
  REQUIRE(n.status == 200);
  CHECK(n.json()["outputs"]["light"]["reason"] == "navigated");
  std::this_thread::sleep_for(500ms);  // kept: a late connection's window (absence is checked over time)
  CHECK(l.accepted == 0);
}

TEST_CASE("a plot turn with a chart.js snippet: rendering -> plot -> done with the PNGs served") {
  Server s;
  auto sid = s.session("ann");
  json body = {{"text", "a bar chart"},
               {"action", {{"kind", "plot"}, {"code", kChart}, {"library", "chartjs"}, {"language", "javascript"},
                           {"themes", {"light", "dark"}}}}};
  auto st = s.turn("ann", sid, body);
  auto evs = until_done(*st, 180s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "plot", "message", "done"});
  const json& themes = evs[2].data["themes"];
  CHECK(themes["light"]["width"] == 3200);
  CHECK(themes["dark"]["height"] == 1800);
  auto png = s.get(themes["light"]["url"].get<std::string>(), {});
  CHECK(png.status == 200);
  std::string turn = evs[0].data["turn"];
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE turn_id = '" + turn + "' AND kind = 'render' AND outcome = 'ok'") == 2);
  // The wire refuses a language that is not the library's (422 before any turn starts).
  body["action"]["language"] = "python";
  auto bad = s.message("ann", sid, body);
  CHECK(bad.status == 422);
  CHECK(bad.json()["detail"] == "invalid_job");
}
