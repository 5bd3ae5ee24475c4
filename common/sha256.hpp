// SHA-256 (FIPS 180-4), small and dependency-free: migration checksums and idempotency fingerprints.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace plotq {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::array<std::uint8_t, 32> digest();  // finishes the hash; call once
  std::string hex_digest();               // 64 lowercase hex digits; finishes the hash

 private:
  void block(const std::uint8_t* p);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buf_{};
  std::size_t buf_len_ = 0;
  std::uint64_t total_ = 0;
};

// Lowercase hex SHA-256 of data, e.g. sha256_hex("abc") = "ba7816bf...".
std::string sha256_hex(std::string_view data);

}  // namespace plotq
