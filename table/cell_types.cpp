#include "table/cell_types.hpp"

#include <cctype>
#include <vector>

namespace plotq::table {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// Parses exactly n digits at s[pos], advancing pos.
bool digits(std::string_view s, std::size_t& pos, std::size_t n, int& value) {
  if (pos + n > s.size()) return false;
  value = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!digit(s[pos + i])) return false;
    value = value * 10 + (s[pos + i] - '0');
  }
  pos += n;
  return true;
}

bool valid_day(int y, int m, int d) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  int max = days[m - 1] + (m == 2 && leap ? 1 : 0);
  return d <= max;
}

std::string two(int v) { return std::string(1, char('0' + v / 10)) + char('0' + v % 10); }

}  // namespace

const char* to_string(ColumnType t) {
  switch (t) {
    case ColumnType::integer: return "integer";
    case ColumnType::number: return "number";
    case ColumnType::boolean: return "boolean";
    case ColumnType::date: return "date";
    case ColumnType::text: return "text";
    case ColumnType::empty: return "empty";
  }
  return "text";
}

bool Table::has_number_or_date_column() const {
  for (const auto& c : columns)
    if (c.type == ColumnType::integer || c.type == ColumnType::number || c.type == ColumnType::date)
      return true;
  return false;
}

bool is_integer(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i == s.size() || s.size() - i > 18) return false;
  for (; i < s.size(); ++i)
    if (!digit(s[i])) return false;
  return true;
}

bool is_number(std::string_view s) {
  std::size_t i = 0, n = s.size();
  if (i < n && (s[i] == '-' || s[i] == '+')) ++i;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < n && digit(s[i])) ++i, ++int_digits;
  if (i < n && s[i] == '.') {
    ++i;
    while (i < n && digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t exp_digits = 0;
    while (i < n && digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0 || exp_digits > 3) return false;
  }
  return i == n;
}

std::optional<std::string> decimal_comma(std::string_view s) {
  std::size_t i = 0, n = s.size();
  if (i < n && s[i] == '-') ++i;
  std::size_t a = 0, b = 0;
  while (i < n && digit(s[i])) ++i, ++a;
  if (i >= n || s[i] != ',') return std::nullopt;
  ++i;
  while (i < n && digit(s[i])) ++i, ++b;
  if (i != n || a == 0 || b == 0) return std::nullopt;
  std::string out(s);
  out[out.find(',')] = '.';
  return out;
}

std::optional<std::string> as_boolean(std::string_view s) {
  std::string l;
  for (char c : s) l.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  if (l == "true" || l == "yes") return "true";
  if (l == "false" || l == "no") return "false";
  return std::nullopt;
}

std::optional<std::string> as_date(std::string_view s) {
  int y = 0, m = 0, d = 0;
  std::size_t pos = 0;
  if (s.size() >= 10 && s[4] == '-') {  // YYYY-MM-DD
    if (!digits(s, pos, 4, y) || s[pos++] != '-' || !digits(s, pos, 2, m) || s[pos++] != '-' ||
        !digits(s, pos, 2, d))
      return std::nullopt;
  } else if (s.size() >= 10 && (s[2] == '.' || s[2] == '/')) {  // DD.MM.YYYY or DD/MM/YYYY
    char sep = s[2];
    if (!digits(s, pos, 2, d) || s[pos++] != sep || !digits(s, pos, 2, m) || s[pos++] != sep ||
        !digits(s, pos, 4, y))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!valid_day(y, m, d)) return std::nullopt;
  std::string out = std::to_string(y);
  while (out.size() < 4) out.insert(out.begin(), '0');
  out += "-" + two(m) + "-" + two(d);
  if (pos == s.size()) return out;
  if (s[pos] != 'T' && s[pos] != ' ') return std::nullopt;
  ++pos;
  int hh = 0, mm = 0, ss = 0;
  if (!digits(s, pos, 2, hh) || pos >= s.size() || s[pos++] != ':' || !digits(s, pos, 2, mm))
    return std::nullopt;
  if (pos < s.size()) {
    if (s[pos++] != ':' || !digits(s, pos, 2, ss)) return std::nullopt;
  }
  if (pos != s.size() || hh > 23 || mm > 59 || ss > 59) return std::nullopt;
  return out + " " + two(hh) + ":" + two(mm) + ":" + two(ss);
}

ColumnType infer_and_canonicalize(std::vector<std::string*>& cells, bool allow_decimal_comma) {
  bool all_int = true, all_num = true, all_comma = allow_decimal_comma, all_bool = true,
       all_date = true, any = false;
  for (const std::string* c : cells) {
    if (c->empty()) continue;
    any = true;
    if (all_int && !is_integer(*c)) all_int = false;
    if (all_num && !is_number(*c)) all_num = false;
    if (all_comma && !decimal_comma(*c) && !is_integer(*c)) all_comma = false;
    if (all_bool && !as_boolean(*c)) all_bool = false;
    if (all_date && !as_date(*c)) all_date = false;
    if (!all_int && !all_num && !all_comma && !all_bool && !all_date) break;
  }
  if (!any) return ColumnType::empty;
  auto strip_plus = [](std::string& s) {
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
  };
  if (all_int) {
    for (std::string* c : cells) strip_plus(*c);
    return ColumnType::integer;
  }
  if (all_num) {
    for (std::string* c : cells) strip_plus(*c);
    return ColumnType::number;
  }
  if (all_comma) {
    // Its integers lose a '+' as a number column's do: "+0" is written "0" either way.
    for (std::string* c : cells) {
      if (auto v = decimal_comma(*c)) *c = *v;
      else strip_plus(*c);
    }
    return ColumnType::number;
  }
  if (all_bool) {
    for (std::string* c : cells)
      if (!c->empty()) *c = *as_boolean(*c);
    return ColumnType::boolean;
  }
  if (all_date) {
    for (std::string* c : cells)
      if (!c->empty()) *c = *as_date(*c);
    return ColumnType::date;
  }
  return ColumnType::text;
}

}  // namespace plotq::table
