#include "server/dataset_json.hpp"

namespace plotq::server {

nlohmann::json columns_json(const table::Table& t) {
  nlohmann::json cols = nlohmann::json::array();
  for (const auto& c : t.columns) cols.push_back({{"name", c.name}, {"type", table::to_string(c.type)}});
  return cols;
}

std::string cut_utf8(std::string_view s, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (seen == chars) return std::string(s.substr(0, i)) + "\u2026";
    ++seen;
  }
  return std::string(s);
}

nlohmann::json dataset_event(std::int64_t version, const table::Table& t, const std::optional<std::string>& code,
                             std::size_t max_rows, std::size_t cell_chars, std::size_t max_bytes) {
  nlohmann::json preview = nlohmann::json::array();
  for (std::size_t r = 0; r < t.rows.size() && r < max_rows; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (const auto& cell : t.rows[r]) row.push_back(cut_utf8(cell, cell_chars));
    preview.push_back(std::move(row));
  }
  nlohmann::json ev = {{"version", version},
                       {"rows", t.row_count()},
                       {"cols", t.column_count()},
                       {"columns", columns_json(t)},
                       {"preview", std::move(preview)},
                       {"code", code ? nlohmann::json(*code) : nlohmann::json(nullptr)}};
  auto size = [&] { return ev.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size(); };
  while (size() > max_bytes && !ev["preview"].empty()) ev["preview"].erase(ev["preview"].size() - 1);
  if (size() > max_bytes) ev["code"] = nullptr;  // GET .../datasets/{version} still has it
  return ev;
}

}  // namespace plotq::server
