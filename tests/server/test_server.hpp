// The HTTP server in-process for the server tests (server_test.cpp, sse_test.cpp): a Server on its
// own io_context thread with test routes, and small helpers for what handlers see.
#pragma once
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "common/log.hpp"
#include "server/router.hpp"
#include "server/server.hpp"
#include "tests/support/test_client.hpp"

namespace plotq::server::test_server {

using namespace plotq::test;
namespace asio = boost::asio;

struct TestServer {
  asio::io_context ioc{1};
  Router router;
  std::unique_ptr<Server> server;
  std::thread thread;
  std::uint16_t port = 0;

  void start(HttpConfig cfg = {}) {
    cfg.listen = "127.0.0.1:0";
    cfg.log_requests = false;
    server = std::make_unique<Server>(ioc, cfg, router);
    std::string a = server->listen();
    port = static_cast<std::uint16_t>(std::stoi(a.substr(a.rfind(':') + 1)));
    thread = std::thread([this] { ioc.run(); });
  }
  // Starts the server's shutdown on the loop; done fires when every connection is gone.
  bool shut = false;
  std::future<void> shutdown(Ms grace) {
    shut = true;
    auto p = std::make_shared<std::promise<void>>();
    auto f = p->get_future();
    asio::post(ioc, [this, grace, p] { server->shutdown(grace, [p] { p->set_value(); }); });
    return f;
  }
  template <class F>
  void on_loop(F f) {
    asio::post(ioc, std::move(f));
  }
  ~TestServer() {
    if (thread.joinable()) {
      if (!shut) shutdown(Ms(0)).wait_for(5s);
      ioc.stop();
      thread.join();
    }
    server.reset();
  }
};

// Collects what handlers see on the loop for the test thread (Catch2 is not thread-safe).
template <class T>
struct Box {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<T> value;
  void set(T v) {
    std::lock_guard l(mu);
    value = std::move(v);
    cv.notify_all();
  }
  std::optional<T> wait(Ms timeout = 5s) {
    std::unique_lock l(mu);
    cv.wait_for(l, timeout, [&] { return value.has_value(); });
    return value;
  }
};

inline Handler echo_json(int status = 200) {
  return [status](Request req, std::shared_ptr<Responder> res) {
    nlohmann::json params = nlohmann::json::object(), query = nlohmann::json::array();
    for (auto& [k, v] : req.params) params[k] = v;
    for (auto& [k, v] : req.query) query.push_back({k, v});
    res->send_json(status, {{"method", req.method},
                            {"path", req.path},
                            {"route", req.route},
                            {"params", params},
                            {"query", query},
                            {"body", req.body},
                            {"loopback", req.peer.loopback},
                            {"peer", req.peer.address},
                            {"agent", std::string(req.header("x-agent").value_or(""))}});
  };
}

struct Silence {
  Silence() { plotq::set_log_enabled(getenv("PLOTQ_TEST_LOG") != nullptr); }
  ~Silence() { plotq::set_log_enabled(true); }
};


}  // namespace plotq::server::test_server
