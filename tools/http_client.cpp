#include "tools/http_client.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace plotq::cli {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<int>(ms);
}

bool wait_fd(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    int n = ::poll(&p, 1, remaining_ms(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

HttpResult http_call(const std::string& url, const std::string& method, const std::string& path,
                     const std::string& body, double timeout_s, std::optional<std::string> token) {
  HttpResult r;
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) {
    r.error = "only http:// URLs are supported";
    return r;
  }
  std::string hostport = url.substr(scheme.size());
  hostport = hostport.substr(0, hostport.find('/'));
  std::string host = hostport, port = "80";
  if (auto colon = hostport.rfind(':'); colon != std::string::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  if (!host.empty() && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (!token) {
    if (const char* t = std::getenv("PLOTQ_TOKEN"); t && *t) token = t;
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res) {
    r.error = "cannot resolve " + host;
    return r;
  }
  int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    ::freeaddrinfo(res);
    r.error = "socket failed";
    return r;
  }
  int rc = ::connect(fd, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  if (rc != 0 && errno != EINPROGRESS) {
    ::close(fd);
    r.error = std::string("connect failed: ") + std::strerror(errno);
    return r;
  }
  if (rc != 0) {
    int err = 0;
    socklen_t len = sizeof err;
    if (!wait_fd(fd, POLLOUT, deadline) || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      ::close(fd);
      r.error = err ? std::string("connect failed: ") + std::strerror(err) : "connect timed out";
      return r;
    }
  }

  std::string req = method + " " + path + " HTTP/1.1\r\nHost: " + hostport +
                    "\r\nConnection: close\r\nAccept: application/json\r\n";
  if (token) req += "Authorization: Bearer " + *token + "\r\n";
  if (!body.empty() || method == "POST")
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  std::size_t off = 0;
  while (off < req.size()) {
    if (!wait_fd(fd, POLLOUT, deadline)) {
      ::close(fd);
      r.error = "send timed out";
      return r;
    }
    ssize_t n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      ::close(fd);
      r.error = "send failed";
      return r;
    }
    off += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buf[65536];
  for (;;) {
    if (!wait_fd(fd, POLLIN, deadline)) {
      ::close(fd);
      r.error = "answer timed out";
      return r;
    }
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) break;
    if (n == 0) break;
    raw.append(buf, static_cast<std::size_t>(n));
    if (raw.size() > 64u * 1024 * 1024) break;
  }
  ::close(fd);
  auto head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos) {
    r.error = "malformed answer";
    return r;
  }
  r.status = std::atoi(raw.c_str() + 9);
  std::string head = raw.substr(0, head_end);
  std::size_t pos = head.find("\r\n");
  bool chunked = false;
  while (pos != std::string::npos && pos + 2 < head.size()) {
    std::size_t next = head.find("\r\n", pos + 2);
    std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    if (auto c = line.find(':'); c != std::string::npos) {
      std::string name = line.substr(0, c), value = line.substr(c + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (name == "transfer-encoding" && value.find("chunked") != std::string::npos) chunked = true;
      r.headers.emplace_back(name, value);
    }
    pos = next;
  }
  std::string payload = raw.substr(head_end + 4);
  if (chunked) {
    std::string out;
    std::size_t p = 0;
    while (p < payload.size()) {
      std::size_t eol = payload.find("\r\n", p);
      if (eol == std::string::npos) break;
      std::size_t size = std::strtoul(payload.c_str() + p, nullptr, 16);
      if (size == 0) break;
      out += payload.substr(eol + 2, size);
      p = eol + 2 + size + 2;
    }
    payload = out;
  }
  r.body = std::move(payload);
  return r;
}

}  // namespace plotq::cli
