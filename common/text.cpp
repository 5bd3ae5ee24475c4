#include "common/text.hpp"

#include <algorithm>

namespace plotq {

std::size_t utf8_chars(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::size_t json_depth(std::string_view s) {
  std::size_t depth = 0, max = 0;
  bool in_str = false, esc = false;
  for (char c : s) {
    if (in_str) {
      if (esc) esc = false;
      else if (c == '\\') esc = true;
      else if (c == '"') in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    else if (c == '[' || c == '{') max = std::max(max, ++depth);
    else if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return max;
}

}  // namespace plotq
