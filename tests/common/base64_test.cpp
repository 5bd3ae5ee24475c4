#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "common/base64.hpp"

using plotq::base64_decode;
using plotq::base64_encode;

TEST_CASE("base64 matches RFC 4648's test vectors both ways") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},  {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    CHECK(base64_encode(plain) == encoded);
    CHECK(base64_decode(encoded) == std::string(plain));
  }
}

TEST_CASE("base64 carries every byte value and length through a round trip") {
  std::mt19937 rng(20261206);
  for (std::size_t n = 0; n < 300; ++n) {
    std::string bytes;
    for (std::size_t i = 0; i < n; ++i) bytes.push_back(static_cast<char>(rng()));
    std::string text = base64_encode(bytes);
    CHECK(text.size() == (n + 2) / 3 * 4);
    CHECK(text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == std::string::npos);
    CHECK(base64_decode(text) == bytes);
  }
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  CHECK(base64_decode(base64_encode(all)) == all);
}

TEST_CASE("base64 decoding refuses anything but padded base64") {
  // libcrypto's own decoder would take several of these (outer whitespace, '=' inside): the
  // contract is common/base64.hpp's.
  const std::string refused[] = {"Zg=",      "Zg",       "Z===",      "====",          "Zm=v",     "=m9v",
                                 " Zm9v",    "Zm9v\n",   "Zm9v ",     "Zm9-",          "Zm9_",     "Zg==Zm9v",
                                 "Zm9v\r\n", "Zm\tv",    "Zm9v====",  std::string("Zm\0v", 4), "Zm9\x80"};
  for (const auto& text : refused) {
    INFO("refused: " << text);
    CHECK_FALSE(base64_decode(text).has_value());
  }
  // Bits below the last whole byte are not checked (as before libcrypto): "AB==" is one zero byte.
  CHECK(base64_decode("AB==") == std::string(1, '\0'));
}
