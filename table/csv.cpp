#include "table/csv.hpp"

namespace plotq::table {

std::optional<std::vector<Record>> read_records(std::string_view text, char delimiter,
                                                std::size_t max_records) {
  std::vector<Record> out;
  Record rec;
  std::string field;
  bool in_quotes = false;
  bool field_started = false;  // something (even "") was seen for this field
  auto end_field = [&] {
    rec.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&]() -> bool {
    bool blank = rec.empty() && !field_started && field.empty();
    if (!blank) {
      end_field();
      out.push_back(std::move(rec));
      if (out.size() > max_records) return false;
    }
    rec.clear();
    field.clear();
    field_started = false;
    return true;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        field.push_back(c);
      }
      continue;
    }
    if (c == '"' && field.empty() && !field_started) {
      in_quotes = true;
      field_started = true;
    } else if (c == delimiter) {
      // The next field starts unstarted, so a quote right after the delimiter opens it (setting
      // field_started here read every quoted field after the first column literally: found by
      // fuzz/table, where the canonical CSV of a pasted table did not parse again).
      end_field();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (!end_record()) return std::nullopt;
    } else {
      field.push_back(c);
      field_started = true;
    }
  }
  if (in_quotes) return std::nullopt;
  if (!end_record()) return std::nullopt;
  return out;
}

void append_csv_field(std::string& out, std::string_view field) {
  // Every delimiter the sniffer weighs is quoted, not only ',': so the CSV, pasted back (or read
  // by a tool that sniffs), is read with commas, never with a cell's ';' or '|'.
  // And a field that begins as the reader would take the text's start: '[' or '{' (JSON), or a
  // U+FEFF that would be stripped as a byte-order mark.
  const bool begins_oddly = !field.empty() && (field[0] == '[' || field[0] == '{' || field.substr(0, 3) == "\xEF\xBB\xBF");
  if (!begins_oddly && field.find_first_of(kDelimiters) == std::string_view::npos &&
      field.find_first_of("\"\r\n") == std::string_view::npos) {
    out.append(field);
    return;
  }
  out.push_back('"');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

namespace {

// One record: a lone empty field is written "" (an empty line would be read as no record).
void append_record(std::string& out, const std::vector<std::string>& fields) {
  if (fields.size() == 1 && fields[0].empty()) out.append("\"\"");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) out.push_back(',');
    append_csv_field(out, fields[i]);
  }
  out.push_back('\n');
}

}  // namespace

std::string write_csv(const Table& t) {
  std::string out;
  std::vector<std::string> names;
  for (const auto& c : t.columns) names.push_back(c.name);
  append_record(out, names);
  for (const auto& row : t.rows) append_record(out, row);
  return out;
}

}  // namespace plotq::table
