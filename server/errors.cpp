#include "server/errors.hpp"

namespace plotq::server {

const ErrorCode* find_error(std::string_view code) {
  for (const ErrorCode& e : kErrorCodes)
    if (e.code == code) return &e;
  return nullptr;
}

std::string error_body(std::string_view code) {
  // Codes are [a-z_] only, so no escaping is needed.
  std::string s = "{\"detail\":\"";
  s.append(code);
  s += "\"}";
  return s;
}

}  // namespace plotq::server
