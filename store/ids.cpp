#include "store/ids.hpp"

#include <sys/random.h>

#include <cerrno>
#include <stdexcept>
#include <vector>

#include "store/error.hpp"

namespace plotq::store {

std::string new_id(std::size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  std::size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(buf.data() + got, bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw StoreError("io", "getrandom failed");
    }
    got += std::size_t(n);
  }
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(2 * bytes);
  for (unsigned char b : buf) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

}  // namespace plotq::store
