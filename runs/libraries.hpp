// The plotting libraries plotq renders, in one table: the name a request uses, the file stem the
// anyplot catalogue uses for it (plots/<spec>/implementations/python/<stem>.py; lets-plot's files
// are letsplot.py), the runtime packages a render needs (runtime/venv/plotq-runtime.json), and the
// render mode: plot (the PNG is drawn inside the sandbox), figure (the sandbox writes the
// figure's JSON, the host's Chromium draws it) or snippet (JavaScript: no Python sandbox at all, the
// snippet is drawn in a locked page of the host's Chromium with its library from runtime/js).
#pragma once
#include "runs/outcome.hpp"

#include <array>
#include <map>
#include <string>
#include <string_view>

namespace plotq::runs {

// How a library's plot is drawn: plot (the PNG inside the Python sandbox), figure (the sandbox
// writes the figure's JSON, the host's Chromium draws it), snippet (JavaScript, drawn in a locked
// page of the host's Chromium; no Python sandbox), r (an R file drawn by R in the sandbox, under
// the same layers: sandbox/harness/rharness.R), none (a language plotq has no runtime for: every
// render is runtime_unavailable). One string table: the wire's and the sandbox's mode names.
enum class RenderMode { plot, figure, snippet, r, none };
inline constexpr std::string_view kRenderModeNames[] = {"plot", "figure", "snippet", "r", "none"};
constexpr std::string_view to_string(RenderMode m) { return kRenderModeNames[static_cast<int>(m)]; }

struct Library {
  std::string_view name;                    // wire name (POST /render, a turn's plot action, --library)
  std::string_view stem;                    // catalogue file stem
  RenderMode mode;
  // What the runtime must hold ("" = unused slot): the Python runtime's packages, or for mode r the
  // R runtime's (runtime/r); a snippet library's JavaScript is the figure renderer's to check
  // (FigureRenderer::available(name), from runtime/js/node_modules).
  std::array<std::string_view, 2> packages;
  std::string_view language;                // python | javascript | r | julia (POST /render's `language`)
};

inline constexpr Library kLibraries[] = {
    {"matplotlib", "matplotlib", RenderMode::plot, {"matplotlib", ""}, "python"},
    {"seaborn", "seaborn", RenderMode::plot, {"seaborn", "matplotlib"}, "python"},
    {"plotnine", "plotnine", RenderMode::plot, {"plotnine", "matplotlib"}, "python"},
    // chart.save("plot-<theme>.png") goes through vl-convert (no browser).
    {"altair", "altair", RenderMode::plot, {"altair", "vl-convert-python"}, "python"},
    // render_to_png goes through cairosvg.
    {"pygal", "pygal", RenderMode::plot, {"pygal", "cairosvg"}, "python"},
    {"lets-plot", "letsplot", RenderMode::plot, {"lets-plot", ""}, "python"},
    {"plotly", "plotly", RenderMode::figure, {"plotly", ""}, "python"},
    {"bokeh", "bokeh", RenderMode::figure, {"bokeh", ""}, "python"},
    // JavaScript snippets (plots/<spec>/implementations/javascript/<stem>.js; MUI X's are .tsx).
    {"chartjs", "chartjs", RenderMode::snippet, {"", ""}, "javascript"},
    {"d3", "d3", RenderMode::snippet, {"", ""}, "javascript"},
    {"echarts", "echarts", RenderMode::snippet, {"", ""}, "javascript"},
    {"highcharts", "highcharts", RenderMode::snippet, {"", ""}, "javascript"},
    {"muix", "muix", RenderMode::snippet, {"", ""}, "javascript"},
    // R (plots/<spec>/implementations/r/ggplot2.R): ggplot2 saving through ragg::agg_png.
    {"ggplot2", "ggplot2", RenderMode::r, {"ggplot2", "ragg"}, "r"},
    // Julia (implementations/julia/makie.jl): no Julia runtime exists here, so never available.
    {"makie", "makie", RenderMode::none, {"", ""}, "julia"},
};

// The file a snippet is handed to the renderer as: MUI X's are TSX modules, the others scripts.
inline std::string_view snippet_extension(std::string_view library) { return library == "muix" ? ".tsx" : ".js"; }

// The row for a wire name, or nullptr.
const Library* find_library(std::string_view name);
// The library a catalogue file stem names ("letsplot" -> lets-plot), or nullptr. A wire name is
// accepted too, so that a file named lets-plot.py is lets-plot as well.
const Library* library_for_stem(std::string_view stem);

// ok, or invalid_library (not in the table), or "runtime_unavailable" (a package the runtime
// does not hold, by its manifest's package names; or figure or snippet mode without a working
// figure renderer for that library; or mode none). Pure: the caller passes what the library's
// runtime holds (Python's, or R's for mode r) and whether Chromium draws this library here.
Outcome library_support(std::string_view library, const std::map<std::string, std::string>& packages,
                        bool figures_available);

}  // namespace plotq::runs
