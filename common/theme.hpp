// The plot themes, declared once: every route, the sweep, the renderer's requests and the CLI read
// this table. A plot job gets one as ANYPLOT_THEME and writes plot-<theme>.png (or .json).
#pragma once
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace plotq {

inline constexpr std::array<std::string_view, 2> kThemes = {"light", "dark"};
inline constexpr std::string_view kDefaultTheme = kThemes[0];

bool known_theme(std::string_view theme);

// "" when `themes` is one or two distinct known themes (either order), else what is wrong:
// "count" (none, or more than two), "unknown" (a name not in kThemes), "repeated".
std::string_view themes_problem(const std::vector<std::string>& themes);

}  // namespace plotq
