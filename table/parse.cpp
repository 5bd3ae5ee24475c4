#include "table/parse.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/text.hpp"
#include "table/cell_types.hpp"
#include "table/csv.hpp"

namespace plotq::table {
namespace {

using plotq::json_depth;
using plotq::utf8_chars;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<std::string> json_cell(const nlohmann::json& v) {
  if (v.is_null()) return std::string();
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
  if (v.is_number()) return v.dump();
  return std::nullopt;  // nested structures are not table cells
}

ParseResult from_json(std::string_view text, const Caps& caps, Table& t) {
  // A table is records or a column map: two levels. Deeper is refused before the parser runs.
  if (json_depth(text) > 2) return ParseError{"unparseable", 422, "nested deeper than a table"};
  nlohmann::json doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return ParseError{"unparseable", 422, "not JSON"};
  std::vector<std::string> names;
  std::map<std::string, std::size_t> index;
  auto column = [&](const std::string& name) -> std::optional<std::size_t> {
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    if (names.size() >= caps.max_columns) return std::nullopt;
    index[name] = names.size();
    names.push_back(name);
    return names.size() - 1;
  };
  std::vector<std::map<std::size_t, std::string>> rows;
  if (doc.is_array()) {  // records
    if (doc.size() > caps.max_rows) return ParseError{"too_many_rows"};
    for (const auto& rec : doc) {
      if (!rec.is_object()) return ParseError{"unparseable"};
      std::map<std::size_t, std::string> row;
      for (const auto& [k, v] : rec.items()) {
        auto col = column(k);
        if (!col) return ParseError{"too_many_columns"};
        auto cell = json_cell(v);
        if (!cell) return ParseError{"unparseable"};
        row[*col] = *cell;
      }
      rows.push_back(std::move(row));
    }
  } else if (doc.is_object()) {  // column map
    std::size_t len = SIZE_MAX;
    for (const auto& [k, v] : doc.items()) {
      if (!v.is_array()) return ParseError{"unparseable"};
      if (len == SIZE_MAX) len = v.size();
      if (v.size() != len) return ParseError{"unparseable"};
    }
    if (len == SIZE_MAX) return ParseError{"empty"};
    if (len > caps.max_rows) return ParseError{"too_many_rows"};
    rows.resize(len);
    for (const auto& [k, v] : doc.items()) {
      auto col = column(k);
      if (!col) return ParseError{"too_many_columns"};
      for (std::size_t r = 0; r < len; ++r) {
        auto cell = json_cell(v[r]);
        if (!cell) return ParseError{"unparseable"};
        rows[r][*col] = *cell;
      }
    }
  } else {
    return ParseError{"unparseable"};
  }
  if (names.empty() || rows.empty()) return ParseError{"empty"};
  for (auto& n : names) t.columns.push_back(Column{n, ColumnType::text});
  for (auto& r : rows) {
    std::vector<std::string> row(names.size());
    for (auto& [c, v] : r) row[c] = std::move(v);
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  std::size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = s[i];
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n) return false;
    unsigned cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (std::size_t k = 1; k < len; ++k) {
      unsigned char cc = s[i + k];
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

namespace {

// How often `d` separates fields in each of the first `max_records` non-blank records, read as
// read_records reads them: a quote opens a field only at its start, and what it quotes (a
// delimiter, a newline) is not counted; `stray` is set by a quote inside an unquoted field.
// Counting quoted characters made the canonical CSV of a table whose cells hold '|' re-parse with
// '|' (found by fuzz/table's round trip).
struct DelimiterCounts {
  std::vector<std::size_t> per_record;
  bool stray = false;
};
DelimiterCounts delimiters_per_record(std::string_view text, char d, std::size_t max_records) {
  DelimiterCounts out;
  std::size_t count = 0;
  bool in_quotes = false, field_start = true, blank = true;
  auto end_record = [&] {
    if (!blank) out.per_record.push_back(count);
    count = 0;
    field_start = blank = true;
  };
  for (std::size_t i = 0; i < text.size() && out.per_record.size() < max_records; ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') ++i;
      else if (c == '"') in_quotes = false;
      continue;
    }
    if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      continue;
    }
    if (c != ' ' && c != '\t') blank = false;
    if (c == '"' && field_start) {
      in_quotes = true;
      field_start = false;
    } else if (c == d) {
      ++count;
      field_start = true;
    } else {
      if (c == '"') out.stray = true;
      field_start = false;
    }
  }
  if (out.per_record.size() < max_records) end_record();
  return out;
}

}  // namespace

char sniff_delimiter(std::string_view text) {
  char best = '\0';
  std::size_t best_score = 0;
  for (char d : kDelimiters) {
    DelimiterCounts counts = delimiters_per_record(text, d, 10);
    bool consistent = counts.per_record.size() >= 2 && !counts.stray;
    std::size_t total = 0;
    for (std::size_t n : counts.per_record) {
      if (n != counts.per_record.front()) consistent = false;
      total += n;
    }
    // A delimiter found the same number of times on every line wins over one that is not.
    std::size_t score = total == 0 ? 0 : (consistent ? 1'000'000 : 0) + total;
    if (score > best_score) best_score = score, best = d;
  }
  return best;
}

ParseResult parse_table(std::string_view text, const Caps& caps, Delimiter how) {
  if (text.size() > caps.max_bytes) return ParseError{"too_long", 413};
  if (!valid_utf8(text)) return ParseError{"encoding"};
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) return ParseError{"control_chars"};
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return ParseError{"empty"};

  Table t;
  char delimiter = ',';
  if (how == Delimiter::sniff && (text[first] == '[' || text[first] == '{')) {  // plotq's own text is CSV
    auto r = from_json(text, caps, t);
    if (std::holds_alternative<ParseError>(r)) return r;
  } else {
    delimiter = how == Delimiter::comma ? ',' : sniff_delimiter(text);
    auto records = read_records(text, delimiter == '\0' ? '\x01' : delimiter, caps.max_rows + 1);
    if (!records) {
      // Either an unterminated quote or more rows than the cap allows.
      std::size_t lines = std::count(text.begin(), text.end(), '\n');
      return ParseError{lines > caps.max_rows ? "too_many_rows" : "unparseable"};
    }
    if (records->size() < 2) return ParseError{records->empty() ? "empty" : "unparseable"};
    if (records->size() - 1 > caps.max_rows) return ParseError{"too_many_rows"};
    const Record& header = records->front();
    if (header.size() > caps.max_columns) return ParseError{"too_many_columns"};
    for (const auto& h : header) t.columns.push_back(Column{h, ColumnType::text});
    for (std::size_t r = 1; r < records->size(); ++r) {
      Record& rec = (*records)[r];
      if (rec.size() > header.size()) return ParseError{"unparseable"};
      rec.resize(header.size());  // short rows: missing trailing cells are empty
      t.rows.push_back(std::move(rec));
    }
  }

  // Names and cells without their outer spaces, whichever way they came (JSON's as CSV's: a
  // table reads the same as its canonical CSV, which cannot keep them).
  for (auto& col : t.columns) col.name = std::string(trim(col.name));
  for (auto& row : t.rows)
    for (auto& c : row) c = std::string(trim(c));

  // Header names: non-empty, unique, capped.
  std::set<std::string> seen;
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    std::string& n = t.columns[i].name;
    if (utf8_chars(n) > caps.max_cell_chars) return ParseError{"cell_too_long"};
    if (n.empty()) n = "column_" + std::to_string(i + 1);
    std::string base = n;
    for (int k = 2; seen.count(n); ++k) n = base + "_" + std::to_string(k);
    seen.insert(n);
  }
  for (const auto& row : t.rows)
    for (const auto& c : row)
      if (utf8_chars(c) > caps.max_cell_chars) return ParseError{"cell_too_long"};

  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    std::vector<std::string*> cells;
    cells.reserve(t.rows.size());
    for (auto& row : t.rows) cells.push_back(&row[c]);
    t.columns[c].type = infer_and_canonicalize(cells, delimiter != ',');
  }
  return t;
}

}  // namespace plotq::table
