// JSON shapes of dataset versions shared by the turn's dataset event and the dataset routes.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "table/table.hpp"

namespace plotq::server {

// [{name, type}, ...]
nlohmann::json columns_json(const table::Table& t);

// The first `chars` code points of valid UTF-8 text s, with "…" when something was cut.
std::string cut_utf8(std::string_view s, std::size_t chars);

// The dataset event of a turn: {version, rows, cols, columns, preview, code}. preview holds the
// first max_rows rows as arrays of strings, cells cut at cell_chars; rows are dropped from the end
// (and then the code left out) until the compact JSON fits max_bytes, so one event never fills a
// stream's buffer.
nlohmann::json dataset_event(std::int64_t version, const table::Table& t, const std::optional<std::string>& code,
                             std::size_t max_rows, std::size_t cell_chars, std::size_t max_bytes);

}  // namespace plotq::server
