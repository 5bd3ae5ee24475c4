// SHA-256 through OpenSSL's libcrypto (EVP): migration checksums, idempotency fingerprints, the
// harness's out.csv digest check, the sweep's file identities and its report's style hash.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace plotq {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::array<std::uint8_t, 32> digest();  // finishes the hash; call once
  std::string hex_digest();               // 64 lowercase hex digits; finishes the hash

 private:
  struct Free {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
};

// Lowercase hex SHA-256 of data, e.g. sha256_hex("abc") = "ba7816bf...".
std::string sha256_hex(std::string_view data);

}  // namespace plotq
