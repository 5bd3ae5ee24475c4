// Internal to server/: what the listener (server.cpp) and the sessions (http_session.cpp) share.
// Not part of server.hpp's interface.
#pragma once
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "server/router.hpp"
#include "server/server.hpp"

namespace plotq::server {

namespace asio = boost::asio;

class HttpSession;

// Shared by the listener and every session of one Server.
struct ServerCore {
  asio::io_context& ioc;
  HttpConfig cfg;
  const Router& router;
  std::size_t max_body = 0;  // largest body any route takes; the parser's ceiling
  std::unordered_map<std::uint64_t, std::weak_ptr<HttpSession>> sessions;
  std::uint64_t next_session = 1;
  std::uint64_t next_request = 1;
  bool stopping = false;
  std::atomic<bool> closed{false};  // the Server object is gone; late Responder drops do nothing
  std::function<void()> on_empty;  // set by shutdown(); called once when the last session is gone

  ServerCore(asio::io_context& io, HttpConfig c, const Router& r) : ioc(io), cfg(std::move(c)), router(r) {
    max_body = router.max_body_limit(cfg.body_limit);
  }
  void remove(std::uint64_t id) {
    sessions.erase(id);
    if (stopping && sessions.empty() && on_empty) {
      auto done = std::move(on_empty);
      on_empty = nullptr;
      asio::post(ioc, std::move(done));
    }
  }
};

// Makes the session for an accepted socket, registers it in core->sessions and starts reading.
void start_http_session(boost::asio::ip::tcp::socket socket, const std::shared_ptr<ServerCore>& core);
// Ends a session: after its response in flight (force = false) or at once.
void shutdown_http_session(const std::shared_ptr<HttpSession>& s, bool force);

}  // namespace plotq::server
