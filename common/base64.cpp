#include "common/base64.hpp"

namespace plotq {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(in[k])); };
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += kAlphabet[v >> 18 & 63], out += kAlphabet[v >> 12 & 63], out += kAlphabet[v >> 6 & 63],
        out += kAlphabet[v & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = byte(i) << 16;
    out += kAlphabet[v >> 18 & 63], out += kAlphabet[v >> 12 & 63], out += "==";
  } else if (i + 2 == in.size()) {
    unsigned v = byte(i) << 16 | byte(i + 1) << 8;
    out += kAlphabet[v >> 18 & 63], out += kAlphabet[v >> 12 & 63], out += kAlphabet[v >> 6 & 63], out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    bool last = i + 4 == in.size();
    int pad = 0;
    if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      int d = k >= 4 - pad ? 0 : value_of(in[i + k]);
      if (d < 0) return std::nullopt;
      v = v << 6 | static_cast<unsigned>(d);
    }
    out += static_cast<char>(v >> 16 & 255);
    if (pad < 2) out += static_cast<char>(v >> 8 & 255);
    if (pad < 1) out += static_cast<char>(v & 255);
  }
  return out;
}

}  // namespace plotq
