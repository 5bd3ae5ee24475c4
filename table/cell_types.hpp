// Column type inference for pasted and code-made tables. Every check is a linear scan.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "table/table.hpp"

namespace plotq::table {

bool is_integer(std::string_view s);
bool is_number(std::string_view s);                    // dot decimal, optional exponent
std::optional<std::string> decimal_comma(std::string_view s);  // "3,5" -> "3.5"
std::optional<std::string> as_boolean(std::string_view s);     // true/false/yes/no -> true|false
// ISO (YYYY-MM-DD), DD.MM.YYYY and DD/MM/YYYY, each with an optional HH:MM[:SS] time;
// answers the canonical ISO form "YYYY-MM-DD" or "YYYY-MM-DD HH:MM:SS".
std::optional<std::string> as_date(std::string_view s);

// Infers the column's type from its non-empty cells and rewrites them in canonical form.
// allow_decimal_comma: only when the delimiter is not a comma.
ColumnType infer_and_canonicalize(std::vector<std::string*>& cells, bool allow_decimal_comma);

}  // namespace plotq::table
