// A turn's plot action: the render slot, each theme drawn in the sandbox, the PNGs stored with the
// turn and served at the plot event's URLs; the daily pipeline runs.
#include <thread>

#include "tests/turns/turn_client.hpp"

using namespace turns_test;

namespace {

const std::string kSine =
    "import os\nimport matplotlib.pyplot as plt\nimport numpy as np\n"
    "THEME = os.getenv('ANYPLOT_THEME', 'light')\nt = np.linspace(0, 10, 200)\n"
    "fig, ax = plt.subplots(figsize=(16, 9), dpi=200)\nax.plot(t, np.sin(t), linewidth=3)\n"
    "fig.savefig(f'plot-{THEME}.png', dpi=200)\n";

json plot(const std::string& code, std::vector<std::string> themes) {
  return {{"text", "a sine wave"},
          {"action", {{"kind", "plot"}, {"code", code}, {"library", "matplotlib"}, {"themes", themes}}}};
}

}  // namespace

TEST_CASE("a plot turn: ready -> status{rendering} -> plot -> message -> done - the PNGs are served") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, plot(kSine, {"light", "dark"}));
  auto evs = until_done(*st, 180s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "plot", "message", "done"});
  CHECK(evs[1].data == json{{"step", "rendering"}, {"attempt", 1}});
  std::string turn = evs[0].data["turn"];
  const json& themes = evs[2].data["themes"];
  for (const std::string theme : {"light", "dark"}) {
    INFO(theme);
    REQUIRE(themes.contains(theme));
    CHECK(themes[theme]["width"] == 3200);
    CHECK(themes[theme]["height"] == 1800);
    std::string url = themes[theme]["url"];
    CHECK(url == "/v1/sessions/" + sid + "/turns/" + turn + "/plots/" + theme + ".png");
    auto png = s.get(url, {});  // an <img> sends no caller headers: the URL is the capability
    REQUIRE(png.status == 200);
    CHECK(png.header("content-type") == std::optional<std::string>("image/png"));
    CHECK(png.body.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
    // Another session's path to the same turn is not found.
    auto other = s.session("bob");
    CHECK(s.get("/v1/sessions/" + other + "/turns/" + turn + "/plots/" + theme + ".png", {}).status == 404);
  }
  CHECK(evs[4].data["state"] == "ok");
  CHECK(s.scalar("SELECT count(*) FROM runs WHERE turn_id = '" + turn + "' AND kind = 'render' AND outcome = 'ok'") == 2);
  CHECK(s.scalar("SELECT count FROM quota_days WHERE user_id = 'ann' AND counter = 'pipeline_runs'") == 1);
  CHECK(s.scalar("SELECT count(*) FROM turn_plots WHERE turn_id = '" + turn + "'") == 2);
}

TEST_CASE("a plot that fails says why in plotq's words and ends with error{run_failed}") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, plot("import matplotlib.pyplot as plt\nraise ValueError('SECRET-MESSAGE')\n", {"light"}));
  auto evs = until_done(*st, 180s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "status", "message", "error", "done"});
  CHECK(evs[3].data["code"] == "run_failed");
  CHECK(evs[2].data.dump().find("SECRET-MESSAGE") == std::string::npos);
  CHECK(s.scalar("SELECT count(*) FROM turn_plots") == 0);
}

// A plot turn books its ledger rows the way /render does (runs::book_render_rows): the theme that was
// running when the turn was cancelled failed, the theme that never started is refused.
TEST_CASE("a plot turn cancelled in its first theme books the second refused as /render does") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, plot("import time\nimport matplotlib.pyplot as plt\ntime.sleep(60)\n", {"light", "dark"}));
  auto ready = next_event(*st);
  REQUIRE(ready);
  std::string turn = ready->data["turn"];
  REQUIRE(wait_for(*st, "status", 30s));  // rendering: the light theme's job runs
  REQUIRE(s.cancel("ann", sid, turn).status == 200);
  REQUIRE(names(until_done(*st, 60s)).back() == "done");
  auto q = [&](const std::string& theme, const std::string& what) {
    return s.scalar("SELECT count(*) FROM runs WHERE turn_id = '" + turn + "' AND kind = 'render' AND theme = '" +
                    theme + "' AND " + what);
  };
  // The row is booked after the turn's done; give the cancelled job a moment to be reaped.
  for (int i = 0; i < 100 && s.scalar("SELECT count(*) FROM runs WHERE turn_id = '" + turn + "'") < 2; ++i)
    std::this_thread::sleep_for(100ms);
  CHECK(q("light", "outcome = 'failed' AND reason = 'cancelled'") == 1);
  CHECK(q("dark", "outcome = 'refused' AND refusal_code = 'cancelled'") == 1);
}

TEST_CASE("daily pipeline runs: at the limit a plot turn is refused before taking the slot") {
  Server s(Env{{"PLOTQ_DAILY_PIPELINE_RUNS", "0"}});
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, plot(kSine, {"light"}));
  auto evs = until_done(*st, 30s);
  REQUIRE(names(evs) == std::vector<std::string>{"ready", "refusal", "done"});
  CHECK(evs[1].data["code"] == "pipeline_runs_exhausted");
  CHECK(s.scalar_reaching("SELECT count(*) FROM runs WHERE kind = 'render' AND refusal_code = 'pipeline_runs_exhausted'", 1) == 1);
}
