// RFC 4180 reading and canonical writing. Reading is single-pass and linear in the input.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "table/table.hpp"

namespace plotq::table {

using Record = std::vector<std::string>;

// Splits text into records with the given delimiter, honouring double quotes ("" escapes a quote,
// quoted fields may hold delimiters and newlines). Blank lines are skipped. Returns nullopt on an
// unterminated quote. Stops and returns nullopt once more than max_records records were read.
std::optional<std::vector<Record>> read_records(std::string_view text, char delimiter,
                                                std::size_t max_records);

// The delimiters a paste may use, in the sniffer's order of preference (a tie goes to the first).
inline constexpr std::string_view kDelimiters = ",;\t|";

// Canonical CSV: comma, \n line ends, a field quoted only when it holds one of kDelimiters, a
// quote, CR or LF, or begins with '[', '{' or U+FEFF (so a paste of it is read back to the same table);
// a record of one empty field is "".
std::string write_csv(const Table& t);
void append_csv_field(std::string& out, std::string_view field);

}  // namespace plotq::table
