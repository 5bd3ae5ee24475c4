#include "common/sha256.hpp"

#include <openssl/evp.h>

#include <new>
#include <stdexcept>

namespace plotq {

// libcrypto fails here only when it cannot allocate or the digest is missing from its provider:
// nothing a caller could go on from, and never something an input causes.
static void check(int ok) {
  if (ok != 1) throw std::runtime_error("libcrypto SHA-256 failed");
}

void Sha256::Free::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) throw std::bad_alloc();
  check(EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr));
}

void Sha256::update(std::string_view data) { check(EVP_DigestUpdate(ctx_.get(), data.data(), data.size())); }

std::array<std::uint8_t, 32> Sha256::digest() {
  std::array<std::uint8_t, 32> out{};
  unsigned int n = 0;
  check(EVP_DigestFinal_ex(ctx_.get(), out.data(), &n));
  if (n != out.size()) throw std::runtime_error("libcrypto SHA-256: wrong digest length");
  return out;
}

std::string Sha256::hex_digest() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (std::uint8_t b : digest()) out += kHex[b >> 4], out += kHex[b & 15];
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

}  // namespace plotq
