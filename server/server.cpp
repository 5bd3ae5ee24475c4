// The listener and the Server: accepts connections (refusing past PLOTQ_MAX_CONNECTIONS or while
// stopping) and hands each to an HttpSession (http_session.cpp), the only other Beast unit.
#include "server/server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <stdexcept>
#include <vector>

#include "common/log.hpp"
#include "server/errors.hpp"
#include "server/http_session.hpp"

namespace plotq::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// ---- listener ----

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  explicit Listener(std::shared_ptr<ServerCore> core) : core_(std::move(core)), acceptor_(core_->ioc), backoff_(core_->ioc) {}

  std::string open(const std::string& address) {
    std::string host;
    std::uint16_t port = 0;
    std::string err = parse_listen_address(address, &host, &port);
    if (!err.empty()) throw std::runtime_error("PLOTQ_LISTEN " + err);
    tcp::endpoint ep(asio::ip::make_address(host), port);
    boost::system::error_code ec;
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) throw std::runtime_error("cannot listen on " + address + ": " + ec.message());
    tcp::endpoint bound = acceptor_.local_endpoint();
    std::string a = bound.address().to_string();
    return (bound.address().is_v6() ? "[" + a + "]" : a) + ":" + std::to_string(bound.port());
  }

  void accept() {
    acceptor_.async_accept([self = shared_from_this()](boost::system::error_code ec, tcp::socket s) {
      self->on_accept(ec, std::move(s));
    });
  }

  void close() {
    boost::system::error_code ec;
    acceptor_.close(ec);
    backoff_.cancel();
  }

 private:
  void on_accept(boost::system::error_code ec, tcp::socket s) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      log_event("accept_failed", {{"error", ec.message()}});
      // Out of descriptors or memory: retrying at once would spin; wait a little.
      backoff_.expires_after(std::chrono::milliseconds(100));
      backoff_.async_wait([self = shared_from_this()](boost::system::error_code e) {
        if (!e) self->accept();
      });
      return;
    }
    if (core_->stopping || core_->sessions.size() >= core_->cfg.max_connections) {
      refuse(std::move(s));
    } else {
      start_http_session(std::move(s), core_);
    }
    accept();
  }

  // A fresh socket's send buffer is empty, so this short non-blocking write goes out whole.
  void refuse(tcp::socket s) {
    static const std::string kBody = error_body("unavailable");
    static const std::string kAnswer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                       "Cache-Control: no-store\r\nConnection: close\r\nContent-Length: " +
                                       std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
    boost::system::error_code ec;
    s.non_blocking(true, ec);
    s.write_some(asio::buffer(kAnswer), ec);
    s.shutdown(tcp::socket::shutdown_send, ec);
    s.close(ec);
    log_event("connection_refused", {{"why", core_->stopping ? "shutdown" : "max_connections"},
                                     {"connections", core_->sessions.size()}});
  }

  std::shared_ptr<ServerCore> core_;
  tcp::acceptor acceptor_;
  asio::steady_timer backoff_;
};

// ---- the cap and the descriptors ----

// Past the descriptors plotqd has, a connection is not refused with a 503: accept() fails
// (EMFILE), the peer waits in the backlog unanswered, and the store and the sandbox find no
// descriptor either. So the cap is at most the soft RLIMIT_NOFILE less what plotqd needs besides
// its connections (the same 256 main.cpp raises the limit by).
constexpr std::size_t kFdReserve = 256;

std::size_t connection_cap(std::size_t configured, std::uint64_t* nofile) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return configured;
  *nofile = rl.rlim_cur;
  std::size_t room = rl.rlim_cur > kFdReserve + 1 ? static_cast<std::size_t>(rl.rlim_cur) - kFdReserve : 1;
  return std::min(configured, room);
}

// ---- Server ----

struct Server::Impl {
  std::shared_ptr<ServerCore> core;
  std::shared_ptr<Listener> listener;
  asio::steady_timer grace;
  bool shutdown_started = false;
  Impl(asio::io_context& ioc, HttpConfig cfg, const Router& router)
      : core(std::make_shared<ServerCore>(ioc, std::move(cfg), router)), grace(ioc) {}

  void close_all(bool force) {
    std::vector<std::shared_ptr<HttpSession>> live;
    for (auto& [id, w] : core->sessions)
      if (auto s = w.lock()) live.push_back(std::move(s));
    for (auto& s : live) shutdown_http_session(s, force);
  }
};

Server::Server(asio::io_context& ioc, HttpConfig config, const Router& router)
    : impl_(std::make_shared<Impl>(ioc, std::move(config), router)) {}

Server::~Server() {
  impl_->core->closed = true;
  if (impl_->listener) impl_->listener->close();
}

std::string Server::listen() {
  auto& cfg = impl_->core->cfg;
  std::uint64_t nofile = 0;
  if (std::size_t cap = connection_cap(cfg.max_connections, &nofile); cap < cfg.max_connections) {
    log_event("connection_cap_lowered", {{"configured", cfg.max_connections}, {"effective", cap}, {"nofile", nofile}});
    cfg.max_connections = cap;
  }
  impl_->listener = std::make_shared<Listener>(impl_->core);
  std::string bound = impl_->listener->open(impl_->core->cfg.listen);
  impl_->listener->accept();
  return bound;
}

void Server::shutdown(std::chrono::milliseconds grace, std::function<void()> done) {
  auto& core = *impl_->core;
  if (impl_->shutdown_started) {  // second call: no more waiting
    impl_->close_all(true);
    return;
  }
  impl_->shutdown_started = true;
  core.stopping = true;
  if (impl_->listener) impl_->listener->close();
  auto finished = std::make_shared<bool>(false);
  auto impl = impl_;
  core.on_empty = [impl, finished, done = std::move(done)] {
    if (*finished) return;
    *finished = true;
    impl->grace.cancel();
    if (done) done();
  };
  impl_->close_all(false);
  if (core.sessions.empty() && core.on_empty) {
    auto f = std::move(core.on_empty);
    core.on_empty = nullptr;
    asio::post(core.ioc, std::move(f));
    return;
  }
  impl_->grace.expires_after(grace);
  impl_->grace.async_wait([impl](boost::system::error_code ec) {
    if (ec) return;
    log_event("shutdown_grace_expired", {{"connections", impl->core->sessions.size()}});
    impl->close_all(true);
  });
}

std::size_t Server::connections() const { return impl_->core->sessions.size(); }

}  // namespace plotq::server
