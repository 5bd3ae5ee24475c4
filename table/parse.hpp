// Turns pasted text (CSV, TSV, ;- or |-separated, or JSON records / column map) into a Table under
// the parser's caps. Errors are a fixed vocabulary; a message never quotes the input.
#pragma once
#include <string>
#include <string_view>
#include <variant>

#include "table/table.hpp"

namespace plotq::table {

// Codes: too_long (HTTP 413), control_chars, encoding, empty, too_many_columns, too_many_rows,
// cell_too_long, unparseable (all 422).
struct ParseError {
  std::string code;
  int http_status = 422;
  std::string detail;  // which check refused it (for logs and tests; the code is the contract)
};

using ParseResult = std::variant<Table, ParseError>;

ParseResult parse_table(std::string_view text, const Caps& caps = {});

// Picks the delimiter among , ; tab | from the first 10 non-blank lines ('\0' = one column).
char sniff_delimiter(std::string_view text);

bool valid_utf8(std::string_view s);

}  // namespace plotq::table
