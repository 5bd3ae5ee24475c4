// A plotly render cancelled over HTTP while Chromium draws it, against a real plotqd: POST
// /render/{job_id}/cancel answers the waiter 499 and stops the draw (the figure renderer closes the
// page and lets go of the job; it is not killed and not restarted).
#include <catch2/catch.hpp>

#include <filesystem>
#include <thread>

#include "tests/support/test_client.hpp"

using namespace plotq::test;
using nlohmann::json;

namespace {

// 300,000 SVG markers: the plot step writes the JSON in well under a second, Chromium takes
// many seconds to draw it.
const std::string kHeavy =
    "import os\nimport numpy as np\nimport plotly.graph_objects as go\n"
    "THEME = os.getenv('ANYPLOT_THEME', 'light')\nn = 300000\n"
    "fig = go.Figure(go.Scatter(x=np.arange(n), y=(np.arange(n) * 7919) % 1000, mode='markers'))\n"
    "fig.write_image(f'plot-{THEME}.png')\n";

const std::string kSmall =
    "import os\nimport plotly.graph_objects as go\nTHEME = os.getenv('ANYPLOT_THEME', 'light')\n"
    "fig = go.Figure(go.Bar(x=['a', 'b'], y=[1, 2]))\nfig.write_image(f'plot-{THEME}.png')\n";

json req(const std::string& job_id, const std::string& source) {
  return {{"job_id", job_id}, {"source", source}, {"library", "plotly"}, {"themes", {"light"}}, {"timeout_s", 90}};
}

}  // namespace

TEST_CASE("POST /render/{job_id}/cancel stops a plotly figure while Chromium draws it", "[server][cancel]") {
  TempDir dir, render_tmp;
  Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", dir.file("plotq.db")},
                           {"PLOTQ_ENVIRONMENT", "development"},
                           {"PLOTQ_RUNS_PER_MINUTE", "10000"},
                           {"PLOTQ_RENDER_TMP_DIR", render_tmp.path()}});
  REQUIRE(d.wait_listening(30s));
  auto entries = [&] {
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(render_tmp.path(), ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
      ++n;
    return n;
  };
  const std::size_t at_start = entries();  // the turn service's Renderer, made at start
  CHECK(at_start <= 1);
  // A first figure: the figure zygote and the figure renderer are up and warm.
  auto warm = http_request(d.port(), "POST", "/render", req("warm", kSmall).dump(), {}, 300s);
  INFO(warm.body);
  REQUIRE(warm.status == 200);
  REQUIRE(warm.json()["outputs"]["light"]["width"] == 3200);  // a 3200x1800 PNG (reason null: ok)

  const std::size_t drawn_before = d.log_events("figure_drawing").size();  // the warm figure's
  HttpResponse r;
  std::thread t([&] { r = http_request(d.port(), "POST", "/render", req("heavy", kHeavy).dump(), {}, 300s); });
  // The plot step is over (its sandbox job logged) and Chromium's page began to draw the figure
  // (figure_drawing: the renderer says so); cancel mid-draw.
  auto step = d.wait_log("sandbox_job", 120s, [](const json& e) { return e.value("label", "") == "render heavy light"; });
  std::size_t drawing_seen = 0;
  auto drawing = step ? d.wait_log("figure_drawing", 60s, [&](const json&) { return ++drawing_seen > drawn_before; })
                      : std::nullopt;
  if (!drawing) t.join();
  REQUIRE(step);
  CHECK((*step)["reason"] == "ok");
  REQUIRE(drawing);
  auto c = http_request(d.port(), "POST", "/render/heavy/cancel");
  CHECK(c.status == 200);
  CHECK(c.json()["cancelled"] == 1);
  t.join();
  CHECK(r.status == 499);
  // The draw itself was stopped: the renderer got the cancel while drawing and acknowledged it.
  auto cancel = d.wait_log("figure_cancel", 10s);
  REQUIRE(cancel);
  CHECK((*cancel)["state"] == "drawing");
  CHECK((*cancel)["id"] == (*drawing)["id"]);
  auto done = d.wait_log("figure_cancel_done", 10s);
  REQUIRE(done);
  CHECK((*done)["acknowledged"] == true);
  CHECK(d.log_events("figure_renderer_kill").empty());
  CHECK(d.log_events("figure_renderer_start").size() == 1);

  // The renderer serves on.
  auto after = http_request(d.port(), "POST", "/render", req("after", kSmall).dump(), {}, 120s);
  REQUIRE(after.status == 200);
  CHECK(after.json()["outputs"]["light"]["width"] == 3200);
  CHECK(d.log_events("figure_renderer_start").size() == 1);

  // Each render's private figure dir goes with its Renderer once the render answered (not when
  // the job entry expires): only the server's own (the turn service's Renderer) is left.
  for (int i = 0; i < 50 && entries() > at_start; ++i) std::this_thread::sleep_for(100ms);
  CHECK(entries() == at_start);
}
