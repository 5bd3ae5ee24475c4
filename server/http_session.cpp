// One HttpSession per connection and the Responder that handlers hold (the listener and the Server
// are in server.cpp). Style of Beast's advanced server: every async operation keeps its session
// alive through shared_from_this; everything runs on one io_context thread, so session state needs
// no lock.
#include "server/http_session.hpp"

#include <cxxabi.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstdlib>
#include <stdexcept>
#include <typeinfo>
#include <unordered_map>

#include "common/log.hpp"
#include "server/errors.hpp"
#include "server/request_head.hpp"
#include "server/router.hpp"
#include "server/server_metrics.hpp"

namespace plotq::server {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string class_name(const std::type_info& ti) {
  int status = 0;
  char* d = abi::__cxa_demangle(ti.name(), nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : ti.name();
  std::free(d);
  return out;
}

bool token_text(std::string_view s) {  // header field names
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool safe_value(std::string_view s) { return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

Peer peer_of(const tcp::socket& s) {
  Peer p;
  boost::system::error_code ec;
  tcp::endpoint ep = s.remote_endpoint(ec);
  if (ec) return p;
  asio::ip::address a = ep.address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  p.address = a.to_string();
  p.port = ep.port();
  p.loopback = a.is_loopback();
  return p;
}

}  // namespace

// The handler's side of one request. All real work happens in the session on the loop; off-loop
// calls are posted there. The atomics mirror session state for readers on other threads.
class ResponderImpl final : public Responder, public std::enable_shared_from_this<ResponderImpl> {
 public:
  ResponderImpl(std::shared_ptr<HttpSession> s, asio::io_context& ioc, std::uint64_t gen)
      : session_(std::move(s)), ioc_(ioc), gen_(gen) {}
  ~ResponderImpl() override;

  void send_json(int status, nlohmann::json body, Fields extra) override {
    send_body(status, "application/json", body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
              std::move(extra));
  }
  void send_body(int status, std::string content_type, std::string body, Fields extra) override;
  bool start_stream(StreamOptions options) override;
  bool write_event(std::string_view event, std::string_view data, std::string_view id) override {
    auto text = format_sse_event(event, data, id);
    if (!text) {
      log_event("stream_event_rejected", {{"why", "line break in event name or id"}});
      return false;
    }
    return write_raw(*text);
  }
  bool write_raw(std::string_view text) override;
  void close() override;
  void on_close(std::function<void(CloseReason)> hook) override;
  bool is_open() const override { return !finished_.load(); }
  bool answered() const override { return answered_.load(); }
  std::size_t pending_bytes() const override { return pending_.load(); }

  // Called by the session, on the loop.
  void finish(CloseReason reason) {
    if (finished_.exchange(true)) return;
    reason_ = reason;
  }
  void set_answered() { answered_ = true; }
  void set_pending(std::size_t n) { pending_ = n; }

  static void run_hook(const std::function<void(CloseReason)>& h, CloseReason r) {
    try {
      h(r);
    } catch (const std::exception& e) {
      log_event("close_hook_exception", {{"class", class_name(typeid(e))}});
    } catch (...) {
      log_event("close_hook_exception", {{"class", "unknown"}});
    }
  }

 private:
  bool on_loop() const { return ioc_.get_executor().running_in_this_thread(); }

  std::shared_ptr<HttpSession> session_;
  asio::io_context& ioc_;
  std::uint64_t gen_;
  std::atomic<bool> finished_{false};
  std::atomic<bool> answered_{false};
  std::atomic<std::size_t> pending_{0};
  CloseReason reason_ = CloseReason::done;  // loop only, valid once finished_
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, std::shared_ptr<ServerCore> core, std::uint64_t id)
      : socket_(std::move(socket)), timer_(core->ioc), core_(std::move(core)), id_(id) {}

  void start() {
    boost::system::error_code ec;
    socket_.set_option(tcp::no_delay(true), ec);
    // The client-gone watcher reads synchronously after a readiness wait; never let that block.
    socket_.non_blocking(true, ec);
    peer_ = peer_of(socket_);
    wait_request();
  }

  // Server shutdown: force closes now; otherwise only idle connections and streams close now.
  void shutdown(bool force) {
    draining_ = true;
    if (state_ == State::closed) return;
    if (force || state_ == State::idle || state_ == State::streaming || state_ == State::lingering)
      do_close(CloseReason::shutdown);
  }

  bool server_closed() const { return core_->closed.load(); }

  // ---- called by ResponderImpl, on the loop ----

  void send_plain(std::uint64_t gen, int status, std::string content_type, std::string body, Fields extra) {
    if (gen != req_gen_ || state_ != State::handling) {
      if (gen == req_gen_ && state_ != State::closed)
        log_event("answer_ignored", {{"route", route_}, {"why", "already answered"}});
      return;
    }
    http::response<http::string_body> res{static_cast<http::status>(status), req_version_};
    res.set(http::field::content_type, content_type);
    bool cache_set = false;
    for (const Field& f : extra) {
      if (!token_text(f.name) || !safe_value(f.value)) {
        log_event("header_rejected", {{"route", route_}});
        continue;
      }
      cache_set = cache_set || iequals(f.name, "Cache-Control");
      res.set(f.name, f.value);
    }
    if (!cache_set) res.set(http::field::cache_control, "no-store");
    res.body() = std::move(body);
    if (auto r = responder_.lock()) r->set_answered();
    write_response(std::move(res), !keep_alive_ || draining_);
  }

  bool start_stream(std::uint64_t gen, const StreamOptions& opt) {
    if (gen != req_gen_ || state_ != State::handling) return false;
    std::string head = "HTTP/1.1 " + std::to_string(opt.status) + " ";
    auto reason = http::obsolete_reason(static_cast<http::status>(opt.status));
    head.append(reason.data(), reason.size());
    head += "\r\n";
    if (!find_field(opt.headers, "Content-Type")) head += "Content-Type: text/event-stream\r\n";
    head += "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\nConnection: close\r\n";
    for (const Field& f : opt.headers) {
      if (!token_text(f.name) || !safe_value(f.value) || iequals(f.name, "Cache-Control") ||
          iequals(f.name, "Connection") || iequals(f.name, "Content-Length") || iequals(f.name, "Transfer-Encoding")) {
        log_event("header_rejected", {{"route", route_}});
        continue;
      }
      head += f.name + ": " + f.value + "\r\n";
    }
    head += "\r\n";
    if (opt.retry_ms) head += "retry: " + std::to_string(*opt.retry_ms) + "\n\n";
    state_ = State::streaming;
    keep_alive_ = false;
    if (auto r = responder_.lock()) r->set_answered();
    count_request(method_, route_, opt.status, ms_since(started_) / 1000);
    count_stream_open();
    if (core_->cfg.log_requests)
      log_event("request", {{"method", method_}, {"route", route_}, {"status", opt.status}, {"ms", ms_since(started_)},
                            {"stream", true}});
    // Bound the kernel's share of a stream as well: on loopback the send buffer autotunes up to
    // tcp_wmem's max (4 MiB), so a reader that never reads would take megabytes before the cap in
    // queue_write is ever reached (a slow reader must be closed at about the cap).
    boost::system::error_code sec;
    socket_.set_option(asio::socket_base::send_buffer_size(static_cast<int>(
                           std::min<std::size_t>(core_->cfg.stream_buffer_bytes, 1u << 20))), sec);
    stream_started_ = Clock::now();
    last_ping_ = stream_started_;
    pending_ = std::move(head);
    flush();
    arm_stream_timer();
    return true;
  }

  bool queue_write(std::uint64_t gen, std::string_view text) {
    if (gen != req_gen_ || state_ != State::streaming || close_after_flush_) return false;
    if (pending_.size() + inflight_.size() + text.size() > core_->cfg.stream_buffer_bytes) {
      log_event("stream_overflow", {{"route", route_}, {"pending", pending_.size() + inflight_.size()},
                                    {"cap", core_->cfg.stream_buffer_bytes}});
      do_close(CloseReason::overflow);
      return false;
    }
    pending_.append(text);
    flush();
    mirror_pending();
    return true;
  }

  void close_stream(std::uint64_t gen) {
    if (gen != req_gen_ || state_ != State::streaming) return;
    close_after_flush_ = true;
    if (!writing_ && pending_.empty()) end_stream();
  }

  // The hook lives here, not in the Responder, so it fires even after the handler let go of it.
  void set_hook(std::uint64_t gen, std::function<void(CloseReason)> hook) {
    if (gen == req_gen_) hook_ = std::move(hook);
  }

  // The last Responder reference is gone.
  void responder_dropped(std::uint64_t gen) {
    if (gen != req_gen_) return;
    if (state_ == State::handling) {
      log_event("answer_missing", {{"route", route_}});
      send_error_now("internal", !keep_alive_ || draining_);
    } else if (state_ == State::streaming) {
      close_stream(gen);
    }
  }

 private:
  enum class State { idle, reading, handling, writing, streaming, lingering, closed };

  // ---- timers ----
  // One timer per session: idle / read / write deadline, or the stream's ping tick. A generation
  // number tells a stale expiry from the current one.
  void arm(std::chrono::milliseconds d) {
    ++timer_gen_;
    timer_.expires_after(d);
    timer_.async_wait([self = shared_from_this(), g = timer_gen_](boost::system::error_code ec) {
      if (!ec && g == self->timer_gen_) self->on_timeout();
    });
  }
  void disarm() {
    ++timer_gen_;
    timer_.cancel();
  }
  void on_timeout() {
    switch (state_) {
      case State::idle:
        do_close(CloseReason::done);
        break;
      case State::reading:
        log_event("http_read_timeout", {{"peer", peer_.address}, {"ms", core_->cfg.read_timeout.count()}});
        do_close(CloseReason::client_gone);
        break;
      case State::writing:
        log_event("http_write_timeout", {{"route", route_}});
        do_close(CloseReason::write_timeout);
        break;
      case State::streaming:
        stream_tick();
        break;
      case State::lingering:
      case State::handling:
      case State::closed:
        do_close(CloseReason::done);
        break;
    }
  }

  // ---- reading a request ----
  void wait_request() {
    state_ = State::idle;
    if (draining_ || core_->stopping) return do_close(CloseReason::shutdown);
    if (buffer_.size() > 0) return read_request();  // pipelined bytes already here
    if (buffer_.capacity() > 4096) buffer_.shrink_to_fit();
    arm(core_->cfg.idle_timeout);
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](boost::system::error_code ec) {
      if (self->state_ != State::idle) return;
      if (ec) return self->do_close(CloseReason::done);
      self->read_request();
    });
  }

  void read_request() {
    state_ = State::reading;
    started_ = Clock::now();
    method_.clear();
    route_.clear();
    req_version_ = 11;
    keep_alive_ = false;
    arm(core_->cfg.read_timeout);
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(core_->cfg.header_limit));
    parser_->body_limit(core_->max_body);
    header_bytes_ = 0;
    read_header_part();
  }

  // The header is read part by part and its bytes counted against the limit (header_over_limit).
  void read_header_part() {
    http::async_read_some(socket_, buffer_, *parser_, [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
      self->on_header_part(ec, n);
    });
  }
  void on_header_part(boost::system::error_code ec, std::size_t n) {
    if (state_ != State::reading) return;
    header_bytes_ += n;
    bool done = !ec && parser_->is_header_done();
    if (!ec && header_over_limit(header_bytes_, buffer_.size(), done, core_->cfg.header_limit)) ec = http::error::header_limit;
    if (ec || done) return on_header(ec);
    read_header_part();
  }

  // A read error: its answer (400/413/431, then close) or a silent close.
  void read_failed(boost::system::error_code ec) {
    if (state_ == State::closed) return;
    std::string_view answer = read_error_answer(ec);
    if (answer.empty()) return do_close(CloseReason::client_gone);
    return send_error_now(answer, true);
  }

  void on_header(boost::system::error_code ec) {
    if (state_ != State::reading) return;
    if (ec) return read_failed(ec);
    auto& req = parser_->get();
    method_ = std::string(req.method_string());
    route_.clear();
    req_version_ = req.version();
    keep_alive_ = req.keep_alive();
    auto expect = req[http::field::expect];
    std::optional<std::uint64_t> length;
    if (auto cl = parser_->content_length()) length = *cl;
    HeadCheck head = check_request_head(core_->router, core_->cfg.body_limit, method_,
                                        std::string_view(req.target().data(), req.target().size()), length,
                                        std::string_view(expect.data(), expect.size()), parser_->is_done());
    if (!head.error.empty()) return send_error_now(head.error, true);
    match_ = std::move(head.match);
    parser_->body_limit(head.body_limit);  // also bounds a chunked body
    if (parser_->is_done()) return on_body({});
    if (head.send_continue) {
      static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(socket_, asio::buffer(kContinue, sizeof kContinue - 1),
                        [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                          if (self->state_ != State::reading) return;
                          if (ec) return self->do_close(CloseReason::client_gone);
                          self->read_body();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](boost::system::error_code ec, std::size_t) { self->on_body(ec); });
  }

  void on_body(boost::system::error_code ec) {
    if (state_ != State::reading) return;
    if (ec) return read_failed(ec);
    disarm();
    auto msg = parser_->release();
    parser_.reset();
    Fields headers;
    for (const auto& f : msg) headers.push_back({std::string(f.name_string()), std::string(f.value())});
    Routed routed = route_request(std::move(match_), method_, std::string_view(msg.target().data(), msg.target().size()),
                                  std::move(headers), std::move(msg.body()));
    if (!routed.request) {
      allow_ = std::move(routed.allow);
      return send_error_now(routed.error, !keep_alive_);
    }
    Request& r = *routed.request;
    r.peer = peer_;
    r.id = core_->next_request++;
    r.received = started_;
    route_ = r.route;
    const Handler& handler = routed.route->handler;

    state_ = State::handling;
    ++req_gen_;
    auto responder = std::make_shared<ResponderImpl>(shared_from_this(), core_->ioc, req_gen_);
    responder_ = responder;
    if (buffer_.size() == 0) buffer_.shrink_to_fit();  // a long-lived stream keeps no read buffer
    watch();
    try {
      handler(std::move(r), responder);
    } catch (const std::exception& e) {
      log_event("handler_exception", {{"route", route_}, {"class", class_name(typeid(e))}});
      fail_request(*responder);
    } catch (...) {
      log_event("handler_exception", {{"route", route_}, {"class", "unknown"}});
      fail_request(*responder);
    }
  }

  void fail_request(Responder& res) {
    if (!res.answered()) res.send_error("internal");
    else res.close();
  }

  // ---- noticing a client that goes away while its request is handled or streamed ----
  void watch() {
    watching_ = true;
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this(), g = ++watch_gen_](boost::system::error_code ec) {
      self->on_watch(ec, g);
    });
  }
  void unwatch() {
    if (!watching_) return;
    watching_ = false;
    ++watch_gen_;
    boost::system::error_code ec;
    socket_.cancel(ec);  // the watcher is the only pending operation here
  }
  void on_watch(boost::system::error_code ec, unsigned g) {
    if (g != watch_gen_ || (state_ != State::handling && state_ != State::streaming)) return;
    watching_ = false;
    if (ec) return;
    boost::system::error_code rec;
    std::size_t n = 0;
    if (state_ == State::streaming) {
      char scratch[512];  // clients send nothing on a stream; whatever comes is dropped
      n = socket_.read_some(asio::buffer(scratch), rec);
    } else {
      // Keep pipelined bytes for the next request, up to the header limit.
      if (buffer_.size() >= core_->cfg.header_limit) return;  // stop watching; cannot tell any more
      n = socket_.read_some(buffer_.prepare(core_->cfg.header_limit - buffer_.size()), rec);
      buffer_.commit(n);
    }
    if (rec == asio::error::would_block || rec == asio::error::try_again) return watch();
    if (rec) return do_close(CloseReason::client_gone);
    watch();
  }

  // ---- writing ----
  void write_response(http::response<http::string_body> res, bool close_after) {
    unwatch();
    state_ = State::writing;
    status_ = res.result_int();
    res.keep_alive(!close_after);
    if (!allow_.empty()) {
      res.set(http::field::allow, allow_);
      allow_.clear();
    }
    res.prepare_payload();
    auto sp = std::make_shared<http::response<http::string_body>>(std::move(res));
    arm(core_->cfg.write_timeout);
    http::async_write(socket_, *sp, [self = shared_from_this(), sp, close_after](boost::system::error_code ec, std::size_t) {
      self->on_written(ec, close_after);
    });
  }

  void send_error_now(std::string_view code, bool close_after) {
    const ErrorCode* e = find_error(code);
    http::response<http::string_body> res{static_cast<http::status>(e->status), req_version_ ? req_version_ : 11};
    res.set(http::field::content_type, "application/json");
    res.set(http::field::cache_control, "no-store");
    res.body() = error_body(code);
    if (state_ == State::handling)
      if (auto r = responder_.lock()) r->set_answered();
    if (state_ == State::reading) disarm();
    write_response(std::move(res), close_after || draining_);
  }

  void on_written(boost::system::error_code ec, bool close_after) {
    if (state_ != State::writing) return;
    disarm();
    count_request(method_, route_, status_, ms_since(started_) / 1000);
    if (core_->cfg.log_requests)
      log_event("request", {{"method", method_}, {"route", route_.empty() ? nlohmann::json() : nlohmann::json(route_)},
                            {"status", status_}, {"ms", ms_since(started_)}});
    finish_responder(ec ? CloseReason::client_gone : CloseReason::done);
    if (ec) return do_close(CloseReason::client_gone);
    if (close_after) return linger_close();
    wait_request();
  }

  void finish_responder(CloseReason reason) {
    if (auto r = responder_.lock()) r->finish(reason);
    responder_.reset();
    if (hook_) {
      auto h = std::move(hook_);
      hook_ = nullptr;
      ResponderImpl::run_hook(h, reason);
    }
  }

  // Closing right after an answer while the client still sends (an unread oversized body) would
  // make the kernel reset the connection and the client could lose the answer. So: send FIN, read
  // and drop what still comes for a short while, then close.
  void linger_close() {
    state_ = State::lingering;
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return do_close(CloseReason::done);
    arm(std::chrono::milliseconds(2000));
    linger_read();
  }
  void linger_read() {
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](boost::system::error_code ec) {
      if (self->state_ != State::lingering) return;
      if (ec) return self->do_close(CloseReason::done);
      char scratch[4096];
      boost::system::error_code rec;
      std::size_t n = self->socket_.read_some(asio::buffer(scratch), rec);
      self->lingered_ += n;
      if (rec == asio::error::would_block || rec == asio::error::try_again) return self->linger_read();
      if (rec || self->lingered_ > 16 * 1024 * 1024) return self->do_close(CloseReason::done);
      self->linger_read();
    });
  }

  // ---- streams ----
  void flush() {
    if (writing_ || pending_.empty() || state_ != State::streaming) return;
    inflight_.swap(pending_);
    pending_.clear();
    writing_ = true;
    write_started_ = Clock::now();
    asio::async_write(socket_, asio::buffer(inflight_), [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
      self->on_stream_written(ec, n);
    });
  }

  void on_stream_written(boost::system::error_code ec, std::size_t n) {
    writing_ = false;
    stream_bytes_ += n;
    if (state_ != State::streaming) return;
    if (ec) return do_close(CloseReason::client_gone);
    inflight_.clear();
    if (inflight_.capacity() > 16 * 1024) inflight_.shrink_to_fit();
    mirror_pending();
    if (!pending_.empty()) return flush();
    if (close_after_flush_) end_stream();
  }

  void end_stream() {
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    do_close(CloseReason::done);
  }

  void arm_stream_timer() {
    auto ping = core_->cfg.stream_ping, wt = core_->cfg.write_timeout;
    arm(ping.count() > 0 ? std::min(ping, wt) : wt);
  }

  void stream_tick() {
    auto now = Clock::now();
    if (writing_ && now - write_started_ > core_->cfg.write_timeout) {
      log_event("http_write_timeout", {{"route", route_}, {"stream", true}});
      return do_close(CloseReason::write_timeout);
    }
    auto ping = core_->cfg.stream_ping;
    if (ping.count() > 0 && now - last_ping_ >= ping && !close_after_flush_) {
      last_ping_ = now;
      if (!queue_write(req_gen_, ": ping\n\n")) return;
    }
    arm_stream_timer();
  }

  void mirror_pending() {
    if (auto r = responder_.lock()) r->set_pending(pending_.size() + inflight_.size());
  }

  // ---- the end ----
  void do_close(CloseReason reason) {
    if (state_ == State::closed) return;
    State was = state_;
    state_ = State::closed;
    disarm();
    boost::system::error_code ec;
    socket_.close(ec);
    if (was == State::streaming) {
      count_stream_closed(reason);
      log_event("stream_end", {{"route", route_}, {"reason", std::string(to_string(reason))},
                               {"ms", ms_since(stream_started_)}, {"bytes", stream_bytes_}});
    } else if (was == State::handling) {
      count_request(method_, route_, 499, ms_since(started_) / 1000);
      if (core_->cfg.log_requests)
        log_event("request", {{"method", method_}, {"route", route_}, {"status", 499}, {"ms", ms_since(started_)},
                              {"closed", std::string(to_string(reason))}});
    }
    if (was == State::handling || was == State::streaming || was == State::writing) finish_responder(reason);
    pending_.clear();
    pending_.shrink_to_fit();
    core_->remove(id_);
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  std::shared_ptr<ServerCore> core_;
  std::uint64_t id_;
  Peer peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  RouteMatch match_;
  State state_ = State::idle;
  unsigned timer_gen_ = 0;
  unsigned watch_gen_ = 0;
  bool watching_ = false;
  bool keep_alive_ = false;
  bool draining_ = false;
  unsigned req_version_ = 11;
  std::uint64_t req_gen_ = 0;
  std::weak_ptr<ResponderImpl> responder_;
  std::function<void(CloseReason)> hook_;  // of the current request
  std::string method_, route_, allow_;
  int status_ = 0;
  Clock::time_point started_{};
  std::size_t lingered_ = 0;
  std::size_t header_bytes_ = 0;  // of the request being read, as the parser took them
  // stream state
  std::string pending_, inflight_;
  bool writing_ = false;
  bool close_after_flush_ = false;
  std::size_t stream_bytes_ = 0;
  Clock::time_point stream_started_{}, write_started_{}, last_ping_{};
};

// ---- ResponderImpl: forward to the session on the loop ----

ResponderImpl::~ResponderImpl() {
  // May run on any thread; the session decides on the loop whether an answer is still owed.
  // Nothing to do once the loop has stopped (e.g. handlers destroyed with the io_context).
  if (ioc_.stopped() || session_->server_closed()) return;
  asio::post(ioc_, [s = session_, g = gen_] { s->responder_dropped(g); });
}

void ResponderImpl::send_body(int status, std::string content_type, std::string body, Fields extra) {
  if (!on_loop()) {
    asio::post(ioc_, [self = shared_from_this(), status, ct = std::move(content_type), b = std::move(body),
                      x = std::move(extra)]() mutable { self->send_body(status, std::move(ct), std::move(b), std::move(x)); });
    return;
  }
  if (status < 100 || status > 999) {
    log_event("answer_bad_status", {{"status", status}});
    status = 500;
    content_type = "application/json";
    body = error_body("internal");
  }
  session_->send_plain(gen_, status, std::move(content_type), std::move(body), std::move(extra));
}

bool ResponderImpl::start_stream(StreamOptions options) {
  if (!on_loop()) {
    asio::post(ioc_, [self = shared_from_this(), o = std::move(options)]() mutable { self->start_stream(std::move(o)); });
    return !finished_;
  }
  if (options.status < 100 || options.status > 999) options.status = 200;
  return session_->start_stream(gen_, options);
}

bool ResponderImpl::write_raw(std::string_view text) {
  if (!on_loop()) {
    asio::post(ioc_, [self = shared_from_this(), t = std::string(text)] { self->write_raw(t); });
    return !finished_;
  }
  return session_->queue_write(gen_, text);
}

void ResponderImpl::close() {
  if (!on_loop()) {
    asio::post(ioc_, [self = shared_from_this()] { self->close(); });
    return;
  }
  session_->close_stream(gen_);
}

void ResponderImpl::on_close(std::function<void(CloseReason)> hook) {
  if (!on_loop()) {
    asio::post(ioc_, [self = shared_from_this(), h = std::move(hook)]() mutable { self->on_close(std::move(h)); });
    return;
  }
  if (finished_) {
    asio::post(ioc_, [h = std::move(hook), r = reason_] { run_hook(h, r); });
    return;
  }
  session_->set_hook(gen_, std::move(hook));
}

void start_http_session(tcp::socket socket, const std::shared_ptr<ServerCore>& core) {
  std::uint64_t id = core->next_session++;
  auto session = std::make_shared<HttpSession>(std::move(socket), core, id);
  core->sessions.emplace(id, session);
  session->start();
}

void shutdown_http_session(const std::shared_ptr<HttpSession>& s, bool force) { s->shutdown(force); }

}  // namespace plotq::server
