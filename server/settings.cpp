// The one table of plotqd's settings. One line per setting: name, field, help, then refinements.
#include <string_view>

#include "server/plotqd_config.hpp"

namespace plotq::server {
namespace {

std::string check_listen(std::string_view text) {
  std::string host;
  std::uint16_t port = 0;
  return parse_listen_address(text, &host, &port);
}

}  // namespace

void register_settings(Settings& s, PlotqdConfig& c) {
  // HTTP server
  s.add("PLOTQ_LISTEN", &c.http.listen, "address to listen on, IPv4:PORT or [IPv6]:PORT; port 0 picks a free port "
                                        "(the chosen one is logged as {\"event\":\"listening\"})")
      .check(check_listen);
  s.add("PLOTQ_HTTP_HEADER_LIMIT", &c.http.header_limit, "request line plus headers, bytes (over: 431 headers_too_large)")
      .range(1024, 1024 * 1024);
  s.add("PLOTQ_HTTP_BODY_LIMIT", &c.http.body_limit, "request body, bytes (over: 413 too_large, answered before reading it)")
      .range(1024, 1024L * 1024 * 1024);
  s.add("PLOTQ_HTTP_READ_TIMEOUT_S", &c.http.read_timeout, "seconds a client has to send one whole request")
      .range(0.01, 3600);
  s.add("PLOTQ_HTTP_IDLE_TIMEOUT_S", &c.http.idle_timeout, "seconds a kept-alive connection may wait for its next request")
      .range(0.01, 3600);
  s.add("PLOTQ_HTTP_WRITE_TIMEOUT_S", &c.http.write_timeout, "seconds an answer or a stream write may take to go out")
      .range(0.01, 3600);
  s.add("PLOTQ_HTTP_MAX_CONNECTIONS", &c.http.max_connections, "open connections; more are answered 503 unavailable")
      .range(1, 1'000'000);
  s.add("PLOTQ_SSE_BUFFER_BYTES", &c.http.stream_buffer_bytes, "bytes queued per event stream before it is closed (slow reader)")
      .range(1024, 64L * 1024 * 1024);
  s.add("PLOTQ_SSE_PING_S", &c.http.stream_ping, "seconds between ': ping' comments on open streams; 0 = none")
      .range(0, 3600);
  s.add("PLOTQ_LOG_REQUESTS", &c.http.log_requests, "log one line per request (method, route, status, ms)");
  s.add("PLOTQ_SHUTDOWN_GRACE_S", &c.shutdown_grace, "seconds in-flight requests may take to finish on SIGTERM/SIGINT")
      .range(0, 3600);

  // Caller check
  s.add("PLOTQ_ENVIRONMENT", &c.auth.environment,
        "production, or development (then, with no tokens, loopback callers pass as X-Plotq-User)")
      .choices({"production", "development"});
  s.add("PLOTQ_TOKENS", &c.auth.tokens, "bearer tokens: token=user[:role],... with role user (default) or assistant")
      .check(CallerCheck::validate_tokens)
      .secret();

  // Store
  s.add("PLOTQ_DB", &c.db_path, "the SQLite file (created with its directory when missing)")
      .check([](std::string_view t) { return t.empty() ? std::string("must not be empty") : std::string(); });
  s.add("PLOTQ_DB_SYNCHRONOUS_FULL", &c.db.synchronous_full, "synchronous=FULL instead of NORMAL (WAL)");
  s.add("PLOTQ_DB_BUSY_TIMEOUT_MS", &c.db.busy_timeout_ms, "milliseconds to wait for another writer (the plotq CLI)")
      .range(0, 600'000);
  s.add("PLOTQ_HOME", &c.home, "where the project's files are (sandbox harness, web page)");

  // Render slot and queue (queue/README.md)
  s.add("PLOTQ_SLOTS", &c.queue.slots, "sandbox jobs (turns) holding a render slot at once").range(1, 64);
  s.add("PLOTQ_RUNS_PER_MINUTE", &c.queue.starts_per_window, "slot starts allowed per rate window").range(1, 100000);
  s.add("PLOTQ_RATE_WINDOW_S", &c.queue.rate_window_s, "length of the sliding rate window, seconds").range(0.001, 86400);
  s.add("PLOTQ_QUEUE_MAX_WAIT_S", &c.queue.max_wait_s, "a waiting turn or job expires after this many seconds").range(0, 86400);
  s.add("PLOTQ_HEARTBEAT_S", &c.queue.heartbeat_s, "unchanged queue positions are re-sent this often, seconds").range(0.001, 3600);
  s.add("PLOTQ_TURN_DEADLINE_S", &c.queue.turn_deadline_s, "a turn's budget once it holds the slot, seconds").range(0.001, 86400);
}

std::vector<std::string> check_config(const PlotqdConfig& c) {
  std::vector<std::string> out;
  std::string host;
  std::uint16_t port = 0;
  bool dev = c.auth.environment == "development";
  if (dev && parse_listen_address(c.http.listen, &host, &port).empty() && !is_loopback_host(host))
    out.push_back("PLOTQ_ENVIRONMENT=development needs a loopback PLOTQ_LISTEN (127.0.0.1 or [::1])");
  if (c.http.stream_ping.count() > 0 && c.http.stream_ping < std::chrono::milliseconds(10))
    out.push_back("PLOTQ_SSE_PING_S must be 0 or at least 0.01");
  if (std::string q = c.queue.invalid_reason(); !q.empty()) out.push_back("queue settings: " + q);
  return out;
}

}  // namespace plotq::server
