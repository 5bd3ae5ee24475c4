#include "common/theme.hpp"

#include <algorithm>

namespace plotq {

bool known_theme(std::string_view theme) { return std::find(kThemes.begin(), kThemes.end(), theme) != kThemes.end(); }

std::string_view themes_problem(const std::vector<std::string>& themes) {
  if (themes.empty() || themes.size() > kThemes.size()) return "count";
  for (const auto& t : themes)
    if (!known_theme(t)) return "unknown";
  if (themes.size() == 2 && themes[0] == themes[1]) return "repeated";
  return "";
}

}  // namespace plotq
