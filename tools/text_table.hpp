// Aligned plain-text tables for plotq's listings (header row, then one line per row).
#pragma once
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace plotq::cli {

inline void print_table(FILE* out, const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(headers.size());
  for (size_t i = 0; i < headers.size(); ++i) width[i] = headers[i].size();
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string c = i < cells.size() ? cells[i] : "";
      if (i + 1 < width.size()) c.resize(width[i], ' ');
      s += c;
      if (i + 1 < width.size()) s += "  ";
    }
    std::fprintf(out, "%s\n", s.c_str());
  };
  line(headers);
  for (const auto& r : rows) line(r);
}

}  // namespace plotq::cli
