#include <catch2/catch.hpp>

#include "common/sha256.hpp"

using plotq::sha256_hex;

TEST_CASE("sha256 matches the FIPS 180-4 test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 gives the same digest however the input is split") {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(char(i * 7 + 3));
  std::string whole = sha256_hex(data);
  for (size_t step : {1, 3, 55, 56, 63, 64, 65, 127}) {
    plotq::Sha256 h;
    for (size_t i = 0; i < data.size(); i += step) h.update(std::string_view(data).substr(i, step));
    CHECK(h.hex_digest() == whole);
  }
  // Lengths around the padding boundary (55/56/64 bytes) differ from each other.
  CHECK(sha256_hex(std::string(55, 'x')) != sha256_hex(std::string(56, 'x')));
}
