#include "table/classify.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "table/parse.hpp"

namespace plotq::table {
namespace {

constexpr std::size_t kLineCap = 400;
constexpr std::size_t kFormulaMaxChars = 2000;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "ident" followed by optional spaces and then `what` at the start of s.
bool ident_then(std::string_view s, std::string_view what) {
  std::size_t i = 0;
  if (i >= s.size() || !(std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_')) return false;
  while (i < s.size() && (ident_char(s[i]) || s[i] == '.' || s[i] == '[' || s[i] == ']' || s[i] == '$'))
    ++i;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i, what.size()) == what;
}

// identifier immediately followed by "(" somewhere in the line.
bool has_call(std::string_view s) {
  for (std::size_t i = 1; i < s.size(); ++i)
    if (s[i] == '(' && ident_char(s[i - 1])) return true;
  return false;
}

bool data_module_call(std::string_view s) {
  static const std::string_view mods[] = {"np.", "pd.", "numpy.", "pandas.", "math.",
                                          "random.", "scipy.", "Math.", "stats."};
  for (auto m : mods) {
    std::size_t pos = 0;
    while ((pos = s.find(m, pos)) != std::string_view::npos) {
      bool boundary = pos == 0 || !ident_char(s[pos - 1]);
      std::size_t j = pos + m.size();
      while (j < s.size() && (ident_char(s[j]) || s[j] == '.')) ++j;
      if (boundary && j > pos + m.size() && j < s.size() && s[j] == '(') return true;
      pos += m.size();
    }
  }
  return false;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(start, end - start));
    if (line.size() > kLineCap) line = line.substr(0, kLineCap);
    if (!line.empty()) out.push_back(line);
    if (end == text.size()) break;
    start = end + 1;
  }
  return out;
}

// Every line splits into the same number (>= 2) of fields on the sniffed delimiter.
bool table_shaped(const std::vector<std::string_view>& lines, std::string_view text) {
  if (lines.size() < 2) return false;
  char d = sniff_delimiter(text);
  if (d == '\0') return false;
  std::size_t first = std::count(lines[0].begin(), lines[0].end(), d);
  if (first == 0) return false;
  for (auto l : lines)
    if (static_cast<std::size_t>(std::count(l.begin(), l.end(), d)) != first) return false;
  return true;
}

}  // namespace

const char* to_string(PasteKind k) {
  switch (k) {
    case PasteKind::table: return "table";
    case PasteKind::code: return "code";
    case PasteKind::formula: return "formula";
  }
  return "table";
}

bool has_code_signal(std::string_view l) {
  if (starts_with(l, "import ") || (starts_with(l, "from ") && contains(l, " import "))) return true;
  if (starts_with(l, "library(") || starts_with(l, "require(") || starts_with(l, "#include"))
    return true;
  if (starts_with(l, "def ") || starts_with(l, "function ") || starts_with(l, "function(") ||
      starts_with(l, "class ") || starts_with(l, "fn ") || starts_with(l, "lambda "))
    return true;
  if ((starts_with(l, "const ") || starts_with(l, "let ") || starts_with(l, "var ")) && contains(l, "="))
    return true;
  if (ident_then(l, "<-") || contains(l, " <- ")) return true;
  if ((starts_with(l, "for ") && (contains(l, " in ") || contains(l, "("))) ||
      starts_with(l, "for(") || starts_with(l, "while ") || starts_with(l, "while("))
    return true;
  if (contains(l, "=>")) return true;
  return data_module_call(l);
}

bool is_code_shaped(std::string_view l) {
  if (has_code_signal(l)) return true;
  if (starts_with(l, "#") || starts_with(l, "//")) return true;
  if (starts_with(l, "return") || starts_with(l, "if ") || starts_with(l, "if(") ||
      starts_with(l, "else") || starts_with(l, "print(") || starts_with(l, "console."))
    return true;
  char last = l.back();
  if (last == ':' || last == ';' || last == '{' || last == '}' || last == ')') {
    if (has_call(l) || last == '{' || last == '}' || last == ':') return true;
  }
  // assignment "name = ..." or "name += ..."
  if (ident_then(l, "=") && !ident_then(l, "==")) return true;
  if (ident_then(l, "+=") || ident_then(l, "-=") || ident_then(l, "*=")) return true;
  return has_call(l) && !contains(l, ",") ? true : false;
}

bool looks_like_formula(std::string_view text) {
  if (text.size() > kFormulaMaxChars) return false;
  auto lines = lines_of(text);
  if (lines.empty() || lines.size() > 3) return false;
  bool has_eq_or_fn = false, has_var = false;
  static const std::string_view fns[] = {"sin", "cos", "tan", "exp", "log", "sqrt", "abs", "ln"};
  for (auto l : lines) {
    for (char c : l) {
      unsigned char u = static_cast<unsigned char>(c);
      if (!(std::isalnum(u) || std::string_view(" +-*/^().,=<>_:'\t").find(c) != std::string_view::npos ||
            u >= 0x80))
        return false;
    }
    if (contains(l, "=")) has_eq_or_fn = true;
    for (auto f : fns)
      if (contains(l, std::string(f) + "(")) has_eq_or_fn = true;
    for (std::size_t i = 0; i < l.size(); ++i) {
      char c = l[i];
      bool lone = (c == 'x' || c == 't' || c == 'n') && (i == 0 || !std::isalpha(static_cast<unsigned char>(l[i - 1]))) &&
                  (i + 1 == l.size() || !std::isalpha(static_cast<unsigned char>(l[i + 1])));
      if (lone) has_var = true;
    }
  }
  return has_eq_or_fn && has_var;
}

Classification classify_paste(std::string_view text) {
  Classification c;
  auto lines = lines_of(text);
  c.lines = static_cast<int>(lines.size());
  for (auto l : lines) {
    if (has_code_signal(l)) ++c.strong;
    if (is_code_shaped(l)) ++c.code_lines;
  }
  c.table_shaped = table_shaped(lines, text);
  bool code = c.strong > 0 && c.code_lines * 2 >= c.lines;
  if (code && c.table_shaped) {
    // A table whose cells look like code stays a table: its header is not code, and code needs a
    // signal on at least half of the lines, not one cell among rows.
    bool header_code = is_code_shaped(lines[0]);
    if (!header_code && c.strong * 2 < c.lines) code = false;
  }
  if (code) c.kind = PasteKind::code;
  else if (looks_like_formula(text)) c.kind = PasteKind::formula;
  return c;
}

}  // namespace plotq::table
