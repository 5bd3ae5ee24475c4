#include "common/base64.hpp"

#include <openssl/evp.h>

#include <algorithm>

namespace plotq {

namespace {

bool in_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// libcrypto's block functions take an int length: larger inputs go through in parts of this many
// bytes (a multiple of 3, so every part but the last encodes without padding).
constexpr std::size_t kPart = std::size_t{3} << 28;

}  // namespace

std::string base64_encode(std::string_view in) {
  std::string out((in.size() + 2) / 3 * 4 + 1, '\0');  // + the NUL EVP_EncodeBlock writes
  std::size_t written = 0;
  for (std::size_t at = 0; at < in.size(); at += kPart) {
    std::size_t n = std::min(kPart, in.size() - at);
    written += static_cast<std::size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + written),
                                                        reinterpret_cast<const unsigned char*>(in.data() + at),
                                                        static_cast<int>(n)));
  }
  out.resize(written);
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  // EVP_DecodeBlock is lenient where this contract is strict: it skips outer whitespace, reads '='
  // anywhere as zero bits, and counts padding as decoded bytes. So the form is checked here first.
  if (in.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  if (!in.empty() && in.back() == '=') pad = in[in.size() - 2] == '=' ? 2 : 1;
  for (std::size_t i = 0; i < in.size() - pad; ++i)
    if (!in_alphabet(in[i])) return std::nullopt;
  std::string out(in.size() / 4 * 3 + 1, '\0');
  std::size_t written = 0;
  constexpr std::size_t kTextPart = kPart / 3 * 4;
  for (std::size_t at = 0; at < in.size(); at += kTextPart) {
    std::size_t n = std::min(kTextPart, in.size() - at);
    int got = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data() + written),
                              reinterpret_cast<const unsigned char*>(in.data() + at), static_cast<int>(n));
    if (got < 0) return std::nullopt;
    written += static_cast<std::size_t>(got);
  }
  out.resize(written - pad);
  return out;
}

}  // namespace plotq
