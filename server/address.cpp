// Listen-address parsing, kept out of the Beast translation unit so config checks stay cheap.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

#include "server/server.hpp"

namespace plotq::server {

std::string parse_listen_address(std::string_view text, std::string* host, std::uint16_t* port) {
  std::string_view h, p;
  if (!text.empty() && text[0] == '[') {
    std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return "must be IPv4:PORT or [IPv6]:PORT";
    h = text.substr(1, close - 1);
    p = text.substr(close + 2);
    in6_addr a6;
    if (!inet_pton(AF_INET6, std::string(h).c_str(), &a6)) return "the host must be an IPv6 literal inside [ ]";
  } else {
    std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return "must be IPv4:PORT or [IPv6]:PORT";
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
    in_addr a4;
    if (!inet_pton(AF_INET, std::string(h).c_str(), &a4)) return "the host must be an IPv4 literal (use [::1] for IPv6)";
  }
  unsigned v = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size() || v > 65535) return "the port must be 0..65535";
  *host = std::string(h);
  *port = static_cast<std::uint16_t>(v);
  return {};
}

bool is_loopback_host(std::string_view host) {
  std::string h(host);
  in_addr a4;
  if (inet_pton(AF_INET, h.c_str(), &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
  in6_addr a6;
  if (inet_pton(AF_INET6, h.c_str(), &a6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&a6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) return a6.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace plotq::server
