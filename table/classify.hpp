// Decides what a paste is before any parser reads it: code, a formula, or a table.
// Lines are trimmed and capped at 400 characters; every check is a linear scan (no regex), so the
// cost is linear in the input whatever it holds.
#pragma once
#include <string_view>

namespace plotq::table {

enum class PasteKind { table, code, formula };
const char* to_string(PasteKind);

struct Classification {
  PasteKind kind = PasteKind::table;
  int lines = 0;        // non-blank lines looked at
  int code_lines = 0;   // code-shaped lines
  int strong = 0;       // lines with a code signal (import, definition, loop header, ...)
  bool table_shaped = false;
};

Classification classify_paste(std::string_view text);

// A strong code signal on one trimmed line: an import, a definition, an R assignment (<-), a loop
// header, a call of a data module (np., pd., math., random., scipy.), an arrow function.
bool has_code_signal(std::string_view line);
// A code-shaped line: a signal, an assignment, a call, a block opener/closer, a statement end.
bool is_code_shaped(std::string_view line);
// A closed formula such as "y = sin(x) * 2" or "f(x) = x^2 + 3x, x from 0 to 10".
bool looks_like_formula(std::string_view text);

}  // namespace plotq::table
