// The HTTP request path in-process, no sockets: the bytes are what a client sent on one connection.
// Beast's request parser runs as HttpSession runs it (the header first, counted against the header
// limit, then the body under the limit the head check set), and every decision is HttpSession's own
// function (server/request_head.hpp): the head check, a read error's answer, the route and the query.
// The caller check reads the headers and the body goes to its route's parser (body_checks.hpp). Up to
// four pipelined requests per input, as a keep-alive connection would carry them.
#include <algorithm>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fstream>
#include <memory>

#include "fuzz/body_checks.hpp"
#include "server/auth.hpp"
#include "server/openapi.hpp"
#include "server/request_head.hpp"
#include "server/router.hpp"
#include "server/server.hpp"
#include "server/turn_stream.hpp"

namespace http = boost::beast::http;
using namespace plotq::server;

namespace {

// Whatever a handler gets from the router: the route's parser on the request.
using Model = void (*)(const Request&);

void no_body(const Request&) {}
void resume(const Request& r) {
  auto after = resume_after(r);
  PLOTQ_FUZZ_CHECK(!after || *after >= 0);
}

// Which caller check a route makes: CallerCheck's, or GET /metrics' own.
enum class Check { user, assistant, metrics };

// plotqd's routes (server/routes*.cpp: pattern, method, body limit) with the parser each applies.
// World checks that they are the operations of docs/openapi.json, which tests/contract holds to
// plotqd's router, so that a route added there is not left unfuzzed here.
struct RouteRow {
  const char* method;
  const char* pattern;
  std::size_t body_limit;  // 0: the server's
  Model model;
  Check check;
};
const RouteRow kRoutes[] = {
    {"GET", "/healthz", 0, no_body, Check::user},
    {"GET", "/readyz", 0, no_body, Check::user},
    {"GET", "/openapi.json", 0, no_body, Check::user},
    {"GET", "/metrics", 0, no_body, Check::metrics},
    {"GET", "/", 0, no_body, Check::user},
    {"GET", "/static/app.js", 0, no_body, Check::user},
    {"GET", "/static/style.css", 0, no_body, Check::user},
    {"GET", "/v1/status", 0, no_body, Check::user},
    {"GET", "/v1/sentences", 0, no_body, Check::user},
    {"GET", "/v1/libraries", 0, no_body, Check::user},
    {"GET", "/status", 0, no_body, Check::assistant},
    {"POST", "/run-data", kRunDataBodyLimit, [](const Request& r) { plotq::fuzz::run_data_body(r.body); }, Check::assistant},
    {"POST", "/render", kRenderBodyLimit, [](const Request& r) { plotq::fuzz::render_body(r.body); }, Check::assistant},
    {"POST", "/render/{job_id}/cancel", 0, no_body, Check::assistant},
    {"POST", "/v1/sessions", 0, no_body, Check::user},
    {"POST", "/v1/sessions/{id}/messages", 2 * 1024 * 1024, [](const Request& r) { plotq::fuzz::message_body(r.body); }, Check::user},
    {"GET", "/v1/sessions/{id}/turns/{turn}/events", 0, resume, Check::user},
    {"POST", "/v1/sessions/{id}/turns/{turn}/cancel", 0, no_body, Check::user},
    {"GET", "/v1/sessions/{id}/turns/{turn}/plots/{file}", 0, no_body, Check::user},
    {"GET", "/v1/sessions/{id}/datasets", 0, no_body, Check::user},
    {"POST", "/v1/sessions/{id}/datasets", kPasteBodyLimit, [](const Request& r) { plotq::fuzz::paste_body(r.body); }, Check::user},
    {"GET", "/v1/sessions/{id}/datasets/{version}", 0, no_body, Check::user},
    {"POST", "/v1/sessions/{id}/datasets/{version}/confirm", 0, no_body, Check::user},
};

struct World {
  Router router;
  HttpConfig cfg;
  AuthConfig auth{"fuzz-token-alice-0001=alice,fuzz-token-service-01=svc:assistant", "production",
                  "fuzz-metrics-token-0001"};
  CallerCheck callers{auth};
  std::size_t max_body = 0;
  World() {
    std::vector<std::string> operations;
    for (const auto& row : kRoutes) {
      RouteOptions o;
      if (row.body_limit) o.body_limit = row.body_limit;
      Model model = row.model;
      Check check = row.check;
      const CallerCheck* users = &callers;
      std::string metrics_token = auth.metrics_token;
      router.add(row.method, row.pattern, [model, check, users, metrics_token](Request req, std::shared_ptr<Responder>) {
        if (check == Check::metrics) {
          std::string_view code = check_metrics_caller(req, metrics_token);
          PLOTQ_FUZZ_CHECK(code.empty() || find_error(code) != nullptr);
        } else {
          CallerVerdict v = users->verify(req, check == Check::user ? Need::user : Need::assistant);
          PLOTQ_FUZZ_CHECK(v.caller.has_value() == v.error.empty());
        }
        model(req);
      }, o);
      operations.push_back(std::string(row.method) + " " + row.pattern);
    }
    max_body = router.max_body_limit(cfg.body_limit);
    std::ifstream doc(PLOTQ_SOURCE_DIR "/docs/openapi.json");
    std::sort(operations.begin(), operations.end());
    PLOTQ_FUZZ_CHECK(operations == openapi_operations(nlohmann::json::parse(doc)));
  }
};

// The session answers an error code of the vocabulary, or closes without one.
void check_answer(std::string_view code) { PLOTQ_FUZZ_CHECK(code.empty() || find_error(code) != nullptr); }

// A read that failed: the session answers (or not) and closes.
bool read_failed(boost::beast::error_code ec) {
  check_answer(read_error_answer(ec));
  return false;
}

// One request from buf, as HttpSession reads it; false when the connection would close.
bool one_request(const World& w, boost::beast::flat_buffer& buf) {
  http::request_parser<http::string_body> p;
  p.header_limit(static_cast<std::uint32_t>(w.cfg.header_limit));
  p.body_limit(w.max_body);
  boost::beast::error_code ec;
  HeadCheck head;
  std::size_t header_bytes = 0;
  bool header_seen = false;
  while (!p.is_done()) {
    std::size_t n = p.put(buf.data(), ec);
    buf.consume(n);
    if (!header_seen) {
      header_bytes += n;
      if ((!ec || ec == http::error::need_more) &&
          header_over_limit(header_bytes, buf.size(), p.is_header_done(), w.cfg.header_limit))
        return read_failed(http::error::header_limit);
    }
    if (ec == http::error::need_more) {
      p.put_eof(ec);  // the client sent nothing more
      if (ec) return read_failed(ec);
    } else if (ec) {
      return read_failed(ec);
    }
    bool first_header = p.is_header_done() && !header_seen;
    if (first_header) {
      header_seen = true;
      auto& req = p.get();
      auto expect = req[http::field::expect];
      std::optional<std::uint64_t> length;
      if (auto cl = p.content_length()) length = *cl;
      head = check_request_head(w.router, w.cfg.body_limit, std::string(req.method_string()),
                                std::string_view(req.target().data(), req.target().size()), length,
                                std::string_view(expect.data(), expect.size()), p.is_done());
      if (!head.error.empty()) {
        check_answer(head.error);
        return false;
      }
      p.body_limit(head.body_limit);
    }
    if (n == 0 && !first_header && !p.is_done()) return false;  // no progress: would wait forever
  }
  auto msg = p.release();
  Fields headers;
  for (const auto& f : msg) headers.push_back({std::string(f.name_string()), std::string(f.value())});
  Routed routed = route_request(std::move(head.match), std::string(msg.method_string()),
                                std::string_view(msg.target().data(), msg.target().size()), std::move(headers),
                                std::move(msg.body()));
  PLOTQ_FUZZ_CHECK(routed.request.has_value() == routed.error.empty());
  if (!routed.request) {
    check_answer(routed.error);
    PLOTQ_FUZZ_CHECK((routed.error == "method_not_allowed") == !routed.allow.empty());
    return msg.keep_alive();
  }
  routed.request->peer = Peer{"127.0.0.1", 40000, true};
  routed.route->handler(std::move(*routed.request), nullptr);
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
