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

// How a text's fields are separated: a paste's is sniffed (any of kDelimiters); text plotq wrote
// itself, the canonical CSV and a data run's out.csv (pandas, sep ','), is known to use commas,
// and sniffing it could take a cell's ';' or '|' for the delimiter (nor is it ever JSON: a first
// column named "[x]" is a name).
enum class Delimiter { sniff, comma };

ParseResult parse_table(std::string_view text, const Caps& caps = {}, Delimiter delimiter = Delimiter::sniff);

// Picks the delimiter among kDelimiters from the first 10 non-blank records ('\0' = one column).
// Quoted text is not counted; a delimiter is consistent when it reads at least two records, each
// with the same count and no quote inside an unquoted field (the mark of the wrong delimiter),
// and a consistent one wins over any other; then the higher count, then kDelimiters' order.
char sniff_delimiter(std::string_view text);

bool valid_utf8(std::string_view s);

}  // namespace plotq::table
