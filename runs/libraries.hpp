// The plotting libraries plotq renders, in one table: the name a request uses, the file stem the
// anyplot catalogue uses for it (plots/<spec>/implementations/python/<stem>.py; lets-plot's files
// are letsplot.py), the runtime packages a render needs (runtime/venv/plotq-runtime.json), and the
// render mode: plot (the PNG is drawn inside the sandbox) or figure (the sandbox writes the
// figure's JSON, the host's Chromium draws it).
#pragma once
#include <array>
#include <map>
#include <string>
#include <string_view>

namespace plotq::runs {

struct Library {
  std::string_view name;                    // wire name (POST /render, a turn's plot action, --library)
  std::string_view stem;                    // catalogue file stem
  std::string_view mode;                    // plot | figure
  std::array<std::string_view, 2> packages;  // what the runtime must hold ("" = unused slot)
};

inline constexpr Library kLibraries[] = {
    {"matplotlib", "matplotlib", "plot", {"matplotlib", ""}},
    {"seaborn", "seaborn", "plot", {"seaborn", "matplotlib"}},
    {"plotnine", "plotnine", "plot", {"plotnine", "matplotlib"}},
    // chart.save("plot-<theme>.png") goes through vl-convert (no browser).
    {"altair", "altair", "plot", {"altair", "vl-convert-python"}},
    // render_to_png goes through cairosvg.
    {"pygal", "pygal", "plot", {"pygal", "cairosvg"}},
    {"lets-plot", "letsplot", "plot", {"lets-plot", ""}},
    {"plotly", "plotly", "figure", {"plotly", ""}},
    {"bokeh", "bokeh", "figure", {"bokeh", ""}},
};

// The row for a wire name, or nullptr.
const Library* find_library(std::string_view name);
// The library a catalogue file stem names ("letsplot" -> lets-plot), or nullptr. A wire name is
// accepted too, so that a file named lets-plot.py is lets-plot as well.
const Library* library_for_stem(std::string_view stem);

// "ok", or "invalid_library" (not in the table), or "runtime_unavailable" (a package the runtime
// does not hold, by its manifest's package names; or figure mode without a working figure
// renderer). Pure: the caller passes what the runtime holds and whether Chromium draws here.
std::string library_support(std::string_view library, const std::map<std::string, std::string>& packages,
                            bool figures_available);

}  // namespace plotq::runs
