#include "store/pg_sql.hpp"

#include <algorithm>
#include <cctype>

namespace plotq::store {

PgSql to_pg_placeholders(std::string_view s) {
  PgSql out;
  out.text.reserve(s.size() + 8);
  int next = 0;  // SQLite: a bare `?` takes one more than the largest number so far
  size_t i = 0;
  auto copy_until = [&](size_t from, std::string_view end) {
    size_t e = s.find(end, from);
    size_t stop = e == std::string_view::npos ? s.size() : e + end.size();
    out.text.append(s.substr(i, stop - i));
    i = stop;
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\'') {
      copy_until(i + 1, "'");  // '' inside a string is two strings back to back: same result
    } else if (c == '"') {
      copy_until(i + 1, "\"");
    } else if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') {
      copy_until(i + 2, "\n");
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      copy_until(i + 2, "*/");
    } else if (c == '?') {
      size_t j = i + 1;
      int n = 0;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && n < 100000) n = n * 10 + (s[j++] - '0');
      if (j == i + 1) n = next + 1;
      while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;  // absurd numbers: cut
      if (n == 0) {  // ?0 is no parameter (SQLite refuses it): the text stays as it is
        out.text.append(s.substr(i, j - i));
        i = j;
        continue;
      }
      next = std::max(next, n);
      if (out.pg_number.size() <= size_t(n)) out.pg_number.resize(n + 1, 0);
      if (out.pg_number[n] == 0) out.pg_number[n] = ++out.params;
      out.text += '$';
      out.text += std::to_string(out.pg_number[n]);
      i = j;
    } else {
      out.text += c;
      ++i;
    }
  }
  return out;
}

}  // namespace plotq::store
