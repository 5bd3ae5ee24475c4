// plotqd's HTTP/1.1 server: one acceptor and one session object per connection, all on the caller's
// io_context (one thread). Beast lives in server.cpp/http_session.cpp only.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace boost::asio {
class io_context;
}

namespace plotq::server {

class Router;

struct HttpConfig {
  std::string listen = "127.0.0.1:8080";  // IPv4:port or [IPv6]:port; port 0 = any free port
  std::size_t header_limit = 8 * 1024;    // request line + headers, bytes
  std::size_t body_limit = 4 * 1024 * 1024;  // bigger bodies get 413 too_large before being read
  std::chrono::milliseconds read_timeout{30'000};   // one request, from its first byte to its last
  std::chrono::milliseconds idle_timeout{60'000};   // waiting for a request on an open connection
  std::chrono::milliseconds write_timeout{30'000};  // one answer, or one stream write, to go out
  std::size_t max_connections = 16'384;   // more are answered 503 unavailable and closed
  std::size_t stream_buffer_bytes = 64 * 1024;  // per SSE stream: queued bytes above this close it
  std::chrono::milliseconds stream_ping{15'000};  // ": ping" on every open stream; 0 = none
  bool log_requests = true;               // one "request" log line per request
};

class Server {
 public:
  Server(boost::asio::io_context& ioc, HttpConfig config, const Router& router);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds config.listen and starts accepting. Returns the bound "ip:port" (port 0 resolved).
  // Throws std::runtime_error when the address is malformed or cannot be bound.
  std::string listen();

  // Stops accepting. Idle connections close now, streams end (CloseReason::shutdown), requests in
  // flight may finish (answered with Connection: close) until grace has passed; then every connection
  // is closed. done() runs on the loop once no connection is left. A second call closes all at once.
  void shutdown(std::chrono::milliseconds grace, std::function<void()> done);

  std::size_t connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// "127.0.0.1:8080", "[::1]:0" -> host + port. Returns "" or what is wrong. IP literals only.
std::string parse_listen_address(std::string_view text, std::string* host, std::uint16_t* port);
// True for 127.0.0.0/8 and ::1 (and IPv4-mapped loopback).
bool is_loopback_host(std::string_view host);

}  // namespace plotq::server
