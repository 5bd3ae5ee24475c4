// The HTTP request path in-process, no sockets: the bytes are what a client sent on one connection.
// Beast's request parser runs with HttpSession's limits and steps (header first, then the matched
// route's body limit), the router matches plotqd's route table, the query is parsed, the caller
// check reads the headers, and the body goes to its route's wire model. Up to four pipelined
// requests per input, as a keep-alive connection would carry them.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <memory>

#include "fuzz/wire_models.hpp"
#include "server/auth.hpp"
#include "server/router.hpp"
#include "server/server.hpp"
#include "server/turn_stream.hpp"

namespace http = boost::beast::http;
using namespace plotq::server;

namespace {

// Whatever a handler gets from the router: the route's wire model on the request.
using Model = void (*)(const Request&);

void no_body(const Request&) {}
void resume(const Request& r) {
  auto after = resume_after(r);
  PLOTQ_FUZZ_CHECK(!after || *after >= 0);
}

// plotqd's routes (server/routes*.cpp: pattern, method, body limit) with the model each applies.
struct RouteRow {
  const char* method;
  const char* pattern;
  std::size_t body_limit;  // 0: the server's
  Model model;
  Need need;
};
const RouteRow kRoutes[] = {
    {"GET", "/healthz", 0, no_body, Need::user},
    {"GET", "/", 0, no_body, Need::user},
    {"GET", "/static/app.js", 0, no_body, Need::user},
    {"GET", "/static/style.css", 0, no_body, Need::user},
    {"GET", "/v1/status", 0, no_body, Need::user},
    {"GET", "/status", 0, no_body, Need::assistant},
    {"POST", "/run-data", 64 * 1024, [](const Request& r) { plotq::fuzz::run_data_body(r.body); }, Need::assistant},
    {"POST", "/render", 8 * 1024 * 1024, [](const Request& r) { plotq::fuzz::render_body(r.body); }, Need::assistant},
    {"POST", "/render/{job_id}/cancel", 0, no_body, Need::assistant},
    {"POST", "/v1/sessions", 0, no_body, Need::user},
    {"POST", "/v1/sessions/{id}/messages", 2 * 1024 * 1024, [](const Request& r) { plotq::fuzz::message_body(r.body); }, Need::user},
    {"GET", "/v1/sessions/{id}/turns/{turn}/events", 0, resume, Need::user},
    {"POST", "/v1/sessions/{id}/turns/{turn}/cancel", 0, no_body, Need::user},
    {"GET", "/v1/sessions/{id}/turns/{turn}/plots/{file}", 0, no_body, Need::user},
    {"GET", "/v1/sessions/{id}/datasets", 0, no_body, Need::user},
    {"POST", "/v1/sessions/{id}/datasets", 2 * 1024 * 1024, [](const Request& r) { plotq::fuzz::paste_body(r.body); }, Need::user},
    {"GET", "/v1/sessions/{id}/datasets/{version}", 0, no_body, Need::user},
    {"POST", "/v1/sessions/{id}/datasets/{version}/confirm", 0, no_body, Need::user},
};

struct World {
  Router router;
  HttpConfig cfg;
  CallerCheck callers{AuthConfig{"fuzz-token-alice-0001=alice,fuzz-token-service-01=svc:assistant", "production"}};
  std::size_t max_body = 0;
  World() {
    for (const auto& row : kRoutes) {
      RouteOptions o;
      if (row.body_limit) o.body_limit = row.body_limit;
      Model model = row.model;
      Need need = row.need;
      const CallerCheck* check = &callers;
      router.add(row.method, row.pattern, [model, need, check](Request req, std::shared_ptr<Responder>) {
        CallerVerdict v = check->verify(req, need);
        PLOTQ_FUZZ_CHECK(v.caller.has_value() == v.error.empty());
        model(req);
      }, o);
    }
    max_body = router.max_body_limit(cfg.body_limit);
  }
};

// One request from buf, as HttpSession reads it; false when the connection would close.
bool one_request(const World& w, boost::beast::flat_buffer& buf) {
  http::request_parser<http::string_body> p;
  p.header_limit(static_cast<std::uint32_t>(w.cfg.header_limit));
  p.body_limit(w.max_body);
  boost::beast::error_code ec;
  RouteMatch match;
  bool header_seen = false;
  while (!p.is_done()) {
    std::size_t n = p.put(buf.data(), ec);
    buf.consume(n);
    if (ec == http::error::need_more) {
      p.put_eof(ec);  // the client sent nothing more
      if (ec) return false;
    } else if (ec) {
      return false;  // 400/413/431 and close
    }
    bool first_header = p.is_header_done() && !header_seen;
    if (first_header) {
      header_seen = true;
      auto& req = p.get();
      std::string_view target(req.target().data(), req.target().size());
      if (target.empty() || target[0] != '/') return false;
      std::string method(req.method_string());
      match = w.router.match(method, target.substr(0, target.find('?')));
      std::size_t limit = w.cfg.body_limit;
      if (match.kind == RouteMatch::found && match.route->options.body_limit) limit = *match.route->options.body_limit;
      if (auto cl = p.content_length(); cl && *cl > limit) return false;
      p.body_limit(limit);
    }
    if (n == 0 && !first_header && !p.is_done()) return false;  // no progress: would wait forever
  }
  auto msg = p.release();
  if (match.kind != RouteMatch::found) return msg.keep_alive();
  std::string_view target(msg.target().data(), msg.target().size());
  std::size_t q = target.find('?');
  auto query = parse_query(q == std::string_view::npos ? std::string_view{} : target.substr(q + 1));
  if (!query) return msg.keep_alive();
  Request r;
  r.method = std::string(msg.method_string());
  r.target = std::string(target);
  r.path = std::string(target.substr(0, q));
  r.route = match.route->pattern;
  r.params = std::move(match.params);
  r.query = std::move(*query);
  for (const auto& f : msg) r.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  r.body = std::move(msg.body());
  r.peer = Peer{"127.0.0.1", 40000, true};
  match.route->handler(std::move(r), nullptr);
  return msg.keep_alive();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const World world;
  boost::beast::flat_buffer buf;
  auto in = boost::asio::buffer_copy(buf.prepare(size), boost::asio::buffer(data, size));
  buf.commit(in);
  for (int i = 0; i < 4 && buf.size() > 0; ++i)
    if (!one_request(world, buf)) break;
  return 0;
}
