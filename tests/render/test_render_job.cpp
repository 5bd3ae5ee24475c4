// The pure parts of a render (runs/render_interpret, runs/libraries, runs/runtime): the PNG header,
// the canvas rule, the library table against a runtime's manifest, request checks, the job spec,
// and the interpretation of a plot step's JobResult against the harness's record (fake results:
// every path through interpret_render_job, incl. records that contradict the process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "runs/libraries.hpp"
#include "runs/render_job.hpp"
#include "runs/runtime.hpp"
#include "sandbox/config.hpp"

using plotq::runs::ThemeRun;
namespace runs = plotq::runs;
namespace sb = plotq::sandbox;

namespace {

std::string png_header(std::uint32_t w, std::uint32_t h) {
  std::string s = "\x89PNG\r\n\x1a\n";
  auto u32 = [&](std::uint32_t v) {
    s.push_back(static_cast<char>(v >> 24));
    s.push_back(static_cast<char>(v >> 16));
    s.push_back(static_cast<char>(v >> 8));
    s.push_back(static_cast<char>(v));
  };
  u32(13);
  s += "IHDR";
  u32(w);
  u32(h);
  s += std::string("\x08\x06\x00\x00\x00", 5);
  return s + "rest-of-the-file";
}

nlohmann::json record(const std::string& mode, const std::string& theme, int code, const std::string& reason) {
  return {{"mode", mode},       {"theme", theme},  {"output", "plot-" + theme + (mode == "figure" ? ".json" : ".png")},
          {"exit_code", code},  {"reason", reason}, {"error", nullptr}, {"refusal", nullptr}, {"exit_request", nullptr},
          {"measured", nullptr}, {"limit", nullptr}};
}

sb::JobResult job_with(int exit_code, const nlohmann::json& rec) {
  sb::JobResult j;
  j.reason = exit_code == 0 ? sb::Reason::ok : sb::Reason::nonzero_exit;
  j.exit_code = exit_code;
  j.attempts = 1;
  j.wall_s = 1.5;
  j.outputs["result.json"] = rec.dump();
  return j;
}

}  // namespace

TEST_CASE("png_size reads the IHDR chunk and refuses anything else", "[png]") {
  auto size = runs::png_size(png_header(3200, 1800));
  REQUIRE(size);
  CHECK(size->first == 3200);
  CHECK(size->second == 1800);
  CHECK_FALSE(runs::png_size(""));
  CHECK_FALSE(runs::png_size(png_header(3200, 1800).substr(0, 23)));
  std::string wrong_sig = png_header(10, 10);
  wrong_sig[1] = 'Q';
  CHECK_FALSE(runs::png_size(wrong_sig));
  std::string wrong_chunk = png_header(10, 10);
  wrong_chunk[12] = 'X';
  CHECK_FALSE(runs::png_size(wrong_chunk));
  CHECK_FALSE(runs::png_size(png_header(0, 10)));
  CHECK_FALSE(runs::png_size(png_header(0x80000000u, 10)));
}

TEST_CASE("canvas_ok: 3200x1800 or 2400x2400 within 16 px", "[png]") {
  CHECK(runs::canvas_ok(3200, 1800));
  CHECK(runs::canvas_ok(2400, 2400));
  CHECK(runs::canvas_ok(3216, 1784));
  CHECK(runs::canvas_ok(2384, 2416));
  CHECK_FALSE(runs::canvas_ok(3217, 1800));
  CHECK_FALSE(runs::canvas_ok(3200, 1783));
  CHECK_FALSE(runs::canvas_ok(1800, 3200));
  CHECK_FALSE(runs::canvas_ok(2400, 1800));
  CHECK_FALSE(runs::canvas_ok(800, 600));
}

TEST_CASE("canvas_of: exact on either canvas within 16 px, else off", "[png]") {
  CHECK(runs::canvas_of(3200, 1800) == "exact");
  CHECK(runs::canvas_of(2384, 2416) == "exact");
  CHECK(runs::canvas_of(4767, 2660) == "off");  // dpi 300 with bbox_inches="tight"
  CHECK(runs::canvas_of(800, 600) == "off");
}

namespace {
// Every package the table names, as a runtime's manifest lists them.
std::map<std::string, std::string> all_packages() {
  std::map<std::string, std::string> p;
  for (const auto& l : runs::kLibraries)
    for (auto name : l.packages)
      if (!name.empty()) p[std::string(name)] = "1.0";
  return p;
}
}  // namespace

TEST_CASE("library_support: the table against what the runtime holds", "[support]") {
  auto all = all_packages();
  for (const auto& l : runs::kLibraries) {
    INFO(l.name);
    // plot- and r-mode libraries need only their packages; figure-mode ones also a working
    // Chromium; a language with no runtime here (Julia, mode none) is never available.
    bool none = l.mode == runs::RenderMode::none;
    bool chromium = l.mode == runs::RenderMode::figure || l.mode == runs::RenderMode::snippet;
    CHECK(runs::library_support(l.name, all, true) == (none ? runs::Outcome::runtime_unavailable : runs::Outcome::ok));
    CHECK(runs::library_support(l.name, all, false) ==
          (none || chromium ? runs::Outcome::runtime_unavailable : runs::Outcome::ok));
  }
  // R: its packages are the R runtime's; one missing (or no R runtime at all) is runtime_unavailable.
  auto no_ragg = all;
  no_ragg.erase("ragg");
  CHECK(runs::library_support("ggplot2", no_ragg, false) == runs::Outcome::runtime_unavailable);
  CHECK(runs::library_support("ggplot2", {}, true) == runs::Outcome::runtime_unavailable);
  runs::Runtime r_rt;
  r_rt.id = "0123456789ab";
  r_rt.r = "4.2.2";
  r_rt.packages = {{"R", "4.2.2"}, {"ggplot2", "3.4.1"}, {"ragg", "1.2.5"}};
  CHECK(runs::render_support("ggplot2", r_rt, nullptr) == runs::Outcome::ok);  // no Chromium needed
  r_rt.packages.erase("ragg");
  CHECK(runs::render_support("ggplot2", r_rt, nullptr) == runs::Outcome::runtime_unavailable);
  CHECK(runs::library_support("makie", all, true) == runs::Outcome::runtime_unavailable);
  // A package the manifest does not list: runtime_unavailable, for that library only.
  auto no_cairo = all;
  no_cairo.erase("cairosvg");
  CHECK(runs::library_support("pygal", no_cairo, true) == runs::Outcome::runtime_unavailable);
  CHECK(runs::library_support("altair", no_cairo, true) == runs::Outcome::ok);
  auto no_vl = all;
  no_vl.erase("vl-convert-python");
  CHECK(runs::library_support("altair", no_vl, true) == runs::Outcome::runtime_unavailable);
  auto no_mpl = all;
  no_mpl.erase("matplotlib");
  for (const char* l : {"matplotlib", "seaborn", "plotnine"}) CHECK(runs::library_support(l, no_mpl, true) == runs::Outcome::runtime_unavailable);
  CHECK(runs::library_support("plotly", no_mpl, true) == runs::Outcome::ok);
  // An unknown runtime (no manifest) holds nothing.
  CHECK(runs::library_support("matplotlib", {}, true) == runs::Outcome::runtime_unavailable);
  // Names not in the table, whatever the runtime holds.
  CHECK(runs::library_support("ggplot", all, true) == runs::Outcome::invalid_library);
  CHECK(runs::library_support("letsplot", all, true) == runs::Outcome::invalid_library);  // a file stem, not a name
  CHECK(runs::library_support("", all, true) == runs::Outcome::invalid_library);
  // render_support is the same rule over a Runtime and a FigureRenderer (null: none here).
  runs::Runtime rt;
  rt.id = "0123456789ab";
  rt.packages = all;
  CHECK(runs::render_support("lets-plot", rt, nullptr) == runs::Outcome::ok);
  CHECK(runs::render_support("bokeh", rt, nullptr) == runs::Outcome::runtime_unavailable);
  // A JavaScript snippet needs no Python package, only the figure renderer's page for it.
  CHECK(runs::library_support("chartjs", {}, true) == runs::Outcome::ok);
  CHECK(runs::render_support("muix", rt, nullptr) == runs::Outcome::runtime_unavailable);
  CHECK(runs::render_support("ggplot", rt, nullptr) == runs::Outcome::invalid_library);
}

TEST_CASE("the library table: fifteen libraries, their modes, languages and catalogue file stems", "[support]") {
  std::map<std::string, std::string> modes;
  for (const auto& l : runs::kLibraries) {
    modes[std::string(l.name)] = std::string(runs::to_string(l.mode));
    INFO(l.name);
    // Snippets are JavaScript and nothing else is; they need no Python package. R files are mode
    // r, Julia's mode none (no runtime); everything else is Python.
    CHECK((l.mode == runs::RenderMode::snippet) == (l.language == "javascript"));
    CHECK((l.mode == runs::RenderMode::r) == (l.language == "r"));
    CHECK((l.mode == runs::RenderMode::none) == (l.language == "julia"));
    if (l.mode == runs::RenderMode::snippet || l.mode == runs::RenderMode::none)
      CHECK((l.packages[0].empty() && l.packages[1].empty()));
    else if (l.mode != runs::RenderMode::r) CHECK(l.language == "python");
  }
  CHECK(modes == std::map<std::string, std::string>{{"altair", "plot"},     {"bokeh", "figure"},     {"lets-plot", "plot"},
                                                     {"matplotlib", "plot"},  {"plotly", "figure"},    {"plotnine", "plot"},
                                                     {"pygal", "plot"},       {"seaborn", "plot"},     {"chartjs", "snippet"},
                                                     {"d3", "snippet"},       {"echarts", "snippet"},  {"highcharts", "snippet"},
                                                     {"muix", "snippet"},     {"ggplot2", "r"},        {"makie", "none"}});
  CHECK(runs::snippet_extension("muix") == ".tsx");
  CHECK(runs::snippet_extension("d3") == ".js");
  for (const auto& [name, mode] : modes) CHECK(runs::to_string(runs::render_mode(name)) == mode);
  CHECK(runs::render_mode("ggplot") == runs::RenderMode::plot);  // refused before it runs
  // anyplot names lets-plot's files letsplot.py; every other stem is the library's name.
  REQUIRE(runs::library_for_stem("letsplot"));
  CHECK(runs::library_for_stem("letsplot")->name == "lets-plot");
  REQUIRE(runs::library_for_stem("lets-plot"));
  CHECK(runs::library_for_stem("lets-plot")->name == "lets-plot");
  CHECK(runs::library_for_stem("bokeh")->name == "bokeh");
  REQUIRE(runs::library_for_stem("chartjs"));  // plots/<spec>/implementations/javascript/chartjs.js
  CHECK(runs::library_for_stem("chartjs")->name == "chartjs");
  CHECK_FALSE(runs::library_for_stem("chart"));
  CHECK_FALSE(runs::find_library("letsplot"));
  REQUIRE(runs::library_for_stem("ggplot2"));  // plots/<spec>/implementations/r/ggplot2.R
  CHECK(runs::library_for_stem("ggplot2")->language == "r");
  REQUIRE(runs::library_for_stem("makie"));  // plots/<spec>/implementations/julia/makie.jl
  CHECK(runs::library_for_stem("makie")->mode == runs::RenderMode::none);
  // Every package the table names is in the runtime's lock (the real manifest, when installed).
  runs::Runtime real = runs::read_runtime(PLOTQ_DEFAULT_PYTHON);
  // (R libraries: the R runtime's, runtime/r, when setup wrote its manifest.)
  runs::Runtime real_r = runs::r_runtime();
  if (real.known())
    for (const auto& l : runs::kLibraries)
      for (auto p : l.packages) {
        if (l.mode == runs::RenderMode::r) {
          if (real_r.known() && !p.empty()) CHECK(real_r.packages.count(std::string(p)) == 1);
          continue;
        }
        INFO(l.name << " needs " << p);
        if (!p.empty()) CHECK(real.packages.count(std::string(p)) == 1);
      }
}

TEST_CASE("every render mode is warm by default: plot and figure get a zygote", "[support]") {
  // Issue 6's plotly target (p50 <= 400 ms end to end) leaves no room for a cold plot step
  // (importing plotly alone takes longer), so figure is a default warm mode like plot.
  const auto modes = sb::Config{}.warm_modes;
  for (const auto& l : runs::kLibraries) {
    std::string library(l.name);
    INFO(library);
    if (l.mode == runs::RenderMode::snippet) continue;  // no sandbox child: the host's Chromium draws snippets
    // R jobs run cold (no R zygote: bench/README.md, "R renders", has the measurement); Julia none.
    if (l.mode == runs::RenderMode::r || l.mode == runs::RenderMode::none) continue;
    CHECK(std::find(modes.begin(), modes.end(), std::string(runs::to_string(runs::render_mode(library)))) != modes.end());
  }
}

TEST_CASE("validate_render_request follows the wire model", "[request]") {
  runs::RenderRequest r;
  r.job_id = "job_1-a";
  r.source = "print(1)";
  r.library = "matplotlib";
  r.themes = {"light", "dark"};
  r.timeout_s = 60;
  CHECK(runs::validate_render_request(r).empty());
  auto bad = [&](auto change, const std::string& why) {
    runs::RenderRequest c = r;
    change(c);
    CHECK(runs::validate_render_request(c) == why);
  };
  bad([](auto& c) { c.job_id = "../x"; }, "job_id");
  bad([](auto& c) { c.job_id = std::string(65, 'a'); }, "job_id");
  bad([](auto& c) { c.library = "Matplotlib"; }, "library");
  bad([](auto& c) { c.source = ""; }, "source");
  bad([](auto& c) { c.source = std::string(131'073, 'x'); }, "source");
  bad([](auto& c) { c.data_csv = std::string(2'097'153, 'x'); }, "data_csv");
  bad([](auto& c) { c.timeout_s = 0; }, "timeout_s");
  bad([](auto& c) { c.timeout_s = 120.5; }, "timeout_s");
  bad([](auto& c) { c.themes = {}; }, "themes");
  bad([](auto& c) { c.themes = {"light", "light"}; }, "themes");
  bad([](auto& c) { c.themes = {"sepia"}; }, "themes");
  bad([](auto& c) { c.themes = {"light", "dark", "light"}; }, "themes");
  // characters, not bytes: 131,072 two-byte characters are within the cap
  runs::RenderRequest wide = r;
  wide.source.clear();
  for (int i = 0; i < 131'072; ++i) wide.source += "\xc3\xa9";
  CHECK(runs::validate_render_request(wide).empty());
}

TEST_CASE("render_job_spec: one theme's plot step", "[spec]") {
  runs::RenderRequest r;
  r.job_id = "j";
  r.source = "x = 1";
  r.library = "plotly";
  r.themes = {"dark"};
  r.data_csv = "a,b\n1,2\n";
  sb::JobSpec s = runs::render_job_spec(r, "dark", 12.5, 1234567);
  CHECK(s.mode == "figure");
  CHECK(s.argv == std::vector<std::string>{"--figure", "plot.py"});
  CHECK(s.env.at("ANYPLOT_THEME") == "dark");
  CHECK(s.files.at("plot.py") == "x = 1");
  CHECK(s.files.at("data.csv") == "a,b\n1,2\n");
  CHECK(s.outputs.at("plot-dark.json") == 1234567);  // the figure renderer's cap (PLOTQ_FIGURE_MAX_BYTES), not a constant
  CHECK(s.outputs.at("result.json") == runs::kMaxRenderRecordBytes);
  CHECK(s.outputs.size() == 2);
  CHECK(s.timeout_s == 12.5);
  r.library = "seaborn";
  r.data_csv.clear();
  sb::JobSpec p = runs::render_job_spec(r, "light", 5, 1234567);
  CHECK(p.mode == "plot");
  CHECK(p.argv == std::vector<std::string>{"--plot", "plot.py"});
  CHECK(p.outputs.at("plot-light.png") == runs::kMaxPngBytes);
  CHECK(p.files.count("data.csv") == 0);
}

TEST_CASE("interpret_render_job: success and the host's own checks of the PNG", "[interpret]") {
  SECTION("exit 0, record ok, a 3200x1800 PNG: ok with the bytes") {
    auto j = job_with(0, record("plot", "light", 0, "ok"));
    j.outputs["plot-light.png"] = png_header(3200, 1800);
    ThemeRun r = runs::interpret_render_job(j, runs::RenderMode::plot, "light");
    CHECK(r.outcome == runs::Outcome::ok);
    REQUIRE(r.png);
    CHECK(*r.png == png_header(3200, 1800));
    CHECK(r.width == 3200);
    CHECK(r.height == 1800);
    CHECK(r.exit_code == 0);
    CHECK(r.job.outputs.empty());  // the PNG is not kept twice
    CHECK(r.message == "Rendered a 3200x1800 image.");
    CHECK(r.canvas == "exact");
  }
  SECTION("no PNG: no_output") {
    ThemeRun r = runs::interpret_render_job(job_with(0, record("plot", "dark", 0, "ok")), runs::RenderMode::plot, "dark");
    CHECK(r.outcome == runs::Outcome::no_output);
    CHECK_FALSE(r.png);
  }
  SECTION("another size is still a render, off the canvas (issue 14: a PNG the file drew is a render)") {
    // Was canvas_size: the catalogue's files save at dpi 300 with bbox_inches="tight" and the like;
    // the catalogue's review judges the drift, plotq answers the PNG with its size.
    auto j = job_with(0, record("plot", "light", 0, "ok"));
    j.outputs["plot-light.png"] = png_header(800, 600);
    ThemeRun r = runs::interpret_render_job(j, runs::RenderMode::plot, "light");
    CHECK(r.outcome == runs::Outcome::ok);
    CHECK(r.canvas == "off");
    CHECK(r.width == 800);
    CHECK(r.height == 600);
    CHECK_FALSE(r.measured);
    CHECK_FALSE(r.limit);
    REQUIRE(r.png);
    CHECK(*r.png == png_header(800, 600));
    CHECK(r.message.find("800x600") != std::string::npos);
    CHECK(r.message.find("not the 3200x1800") != std::string::npos);
  }
  SECTION("not a PNG: output_rejected") {
    auto j = job_with(0, record("plot", "light", 0, "ok"));
    j.outputs["plot-light.png"] = "GIF89a....";
    CHECK(runs::interpret_render_job(j, runs::RenderMode::plot, "light").outcome == runs::Outcome::output_rejected);
  }
  SECTION("figure mode keeps the JSON for the screenshot step") {
    auto j = job_with(0, record("figure", "light", 0, "ok"));
    j.outputs["plot-light.json"] = R"({"data": []})";
    ThemeRun r = runs::interpret_render_job(j, runs::RenderMode::figure, "light");
    CHECK(r.outcome == runs::Outcome::ok);
    CHECK_FALSE(r.png);
    CHECK(r.job.outputs.at("plot-light.json") == R"({"data": []})");
    CHECK(r.job.outputs.size() == 1);
  }
}

TEST_CASE("interpret_render_job: the harness's failures and the record cross-check", "[interpret]") {
  SECTION("plot_error with class and line") {
    auto rec = record("plot", "light", 30, "plot_error");
    rec["error"] = {{"class", "AttributeError"}, {"line", 8}};
    ThemeRun r = runs::interpret_render_job(job_with(30, rec), runs::RenderMode::plot, "light");
    CHECK(r.outcome == runs::Outcome::plot_error);
    CHECK(r.error_class == "AttributeError");
    CHECK(r.error_line == 8);
    CHECK(r.exit_code == 30);
    CHECK(r.message == "The plot raised AttributeError at line 8.");
  }
  SECTION("guard_refused with the rule") {
    auto rec = record("plot", "light", 31, "guard_refused");
    rec["refusal"] = {{"rule", "open"}, {"line", 3}};
    ThemeRun r = runs::interpret_render_job(job_with(31, rec), runs::RenderMode::plot, "light");
    CHECK(r.outcome == runs::Outcome::guard_refused);
    CHECK(r.refusal_rule == "open");
    CHECK(r.error_line == 3);
  }
  SECTION("a class name that is not a name is dropped") {
    auto rec = record("plot", "light", 30, "plot_error");
    rec["error"] = {{"class", "<script>"}, {"line", 1}};
    CHECK_FALSE(runs::interpret_render_job(job_with(30, rec), runs::RenderMode::plot, "light").error_class);
  }
  SECTION("source_invalid carries measured and limit") {
    auto rec = record("plot", "light", 34, "source_invalid");
    rec["measured"] = 600001;
    rec["limit"] = 524288;
    ThemeRun r = runs::interpret_render_job(job_with(34, rec), runs::RenderMode::plot, "light");
    CHECK(r.outcome == runs::Outcome::source_invalid);
    CHECK(r.measured == 600001);
    CHECK(r.limit == 524288);
  }
  SECTION("records that contradict the process: harness_error, never success") {
    auto j = job_with(0, record("plot", "light", 30, "plot_error"));  // record says 30, process 0
    j.outputs["plot-light.png"] = png_header(3200, 1800);
    CHECK(runs::interpret_render_job(j, runs::RenderMode::plot, "light").outcome == runs::Outcome::harness_error);
    auto k = job_with(0, record("plot", "light", 0, "plot_error"));  // exit 0 with a failure reason
    k.outputs["plot-light.png"] = png_header(3200, 1800);
    CHECK(runs::interpret_render_job(k, runs::RenderMode::plot, "light").outcome == runs::Outcome::harness_error);
    auto m = job_with(0, record("figure", "light", 0, "ok"));  // another mode's record
    m.outputs["plot-light.png"] = png_header(3200, 1800);
    CHECK(runs::interpret_render_job(m, runs::RenderMode::plot, "light").outcome == runs::Outcome::harness_error);
    auto t = job_with(0, record("plot", "dark", 0, "ok"));  // another theme's record
    t.outputs["plot-light.png"] = png_header(3200, 1800);
    CHECK(runs::interpret_render_job(t, runs::RenderMode::plot, "light").outcome == runs::Outcome::harness_error);
    auto n = job_with(7, record("plot", "light", 7, "plot_error"));  // a code outside the vocabulary
    CHECK(runs::interpret_render_job(n, runs::RenderMode::plot, "light").outcome == runs::Outcome::harness_error);
    sb::JobResult none;
    none.reason = sb::Reason::ok;
    none.exit_code = 0;
    none.outputs["plot-light.png"] = png_header(3200, 1800);
    CHECK(runs::interpret_render_job(none, runs::RenderMode::plot, "light").outcome == runs::Outcome::harness_error);
    sb::JobResult deep = job_with(0, record("plot", "light", 0, "ok"));
    deep.outputs["result.json"] = std::string(5000, '[') + std::string(5000, ']');
    deep.outputs["plot-light.png"] = png_header(3200, 1800);
    CHECK(runs::interpret_render_job(deep, runs::RenderMode::plot, "light").outcome == runs::Outcome::harness_error);
  }
  SECTION("the sandbox's verdict comes first") {
    sb::JobResult j = job_with(0, record("plot", "light", 0, "ok"));
    j.reason = sb::Reason::timeout;
    j.timed_out = true;
    j.exit_code.reset();
    j.outputs["plot-light.png"] = png_header(3200, 1800);
    ThemeRun r = runs::interpret_render_job(j, runs::RenderMode::plot, "light");
    CHECK(r.outcome == runs::Outcome::timeout);
    CHECK(r.timed_out);
    CHECK_FALSE(r.exit_code);
    CHECK_FALSE(r.png);
    sb::JobResult big;
    big.reason = sb::Reason::output_too_large;
    big.measured = 11e6;
    big.limit = 10485760;
    ThemeRun b = runs::interpret_render_job(big, runs::RenderMode::plot, "light");
    CHECK(b.outcome == runs::Outcome::output_too_large);
    CHECK(b.measured == 11e6);
    CHECK(b.message == "The image is larger than 10 MiB.");
    sb::JobResult link;
    link.reason = sb::Reason::output_rejected;
    CHECK(runs::interpret_render_job(link, runs::RenderMode::figure, "light").outcome == runs::Outcome::output_rejected);
  }
}

TEST_CASE("figure_outcome maps the screenshot step's codes like the sweep does", "[figure]") {
  CHECK(runs::figure_outcome("figure_too_deep") == runs::Outcome::figure_invalid);
  CHECK(runs::figure_outcome("figure_invalid") == runs::Outcome::figure_invalid);
  CHECK(runs::figure_outcome("figure_empty") == runs::Outcome::figure_invalid);
  CHECK(runs::figure_outcome("figure_size_invalid") == runs::Outcome::figure_invalid);
  CHECK(runs::figure_outcome("figure_not_regular") == runs::Outcome::output_rejected);
  CHECK(runs::figure_outcome("figure_too_large") == runs::Outcome::output_too_large);
  CHECK(runs::figure_outcome("no_webgl") == runs::Outcome::no_webgl);
  CHECK(runs::figure_outcome("draw_failed") == runs::Outcome::draw_failed);
  CHECK(runs::figure_outcome("timeout") == runs::Outcome::timeout);
  CHECK(runs::figure_outcome("size_mismatch") == runs::Outcome::canvas_size);
  CHECK(runs::figure_outcome("browser_failed") == runs::Outcome::renderer_error);
  CHECK(runs::figure_outcome("busy") == runs::Outcome::renderer_error);
  CHECK(runs::figure_outcome("shutdown") == runs::Outcome::cancelled);
  // JavaScript snippets, in the Python render's own words.
  CHECK(runs::figure_outcome("snippet_error") == runs::Outcome::plot_error);
  CHECK(runs::figure_outcome("import_refused") == runs::Outcome::guard_refused);
  CHECK(runs::figure_outcome("blank") == runs::Outcome::blank);
  CHECK(runs::figure_outcome("navigated") == runs::Outcome::navigated);
  CHECK(runs::figure_outcome("library_unavailable") == runs::Outcome::runtime_unavailable);
}
