// The one table of plotqd's settings. One line per setting: name, field, help, then refinements.
#include <string_view>

#include "common/limits.hpp"
#include "runs/data_job.hpp"
#include "server/plotqd_config.hpp"
#include "store/target.hpp"

namespace plotq::server {
namespace {

std::string check_listen(std::string_view text) {
  std::string host;
  std::uint16_t port = 0;
  return parse_listen_address(text, &host, &port);
}

void register_turn_settings(Settings& s, TurnConfig& t) {
  s.add("PLOTQ_USER_MESSAGES_PER_MINUTE", &t.messages_per_minute, "chat messages per user per UTC minute (refusal rate_limited)")
      .range(1, 1'000'000);
  s.add("PLOTQ_USER_MESSAGES_PER_DAY", &t.messages_per_day, "chat messages per user per UTC day (refusal daily_limit)")
      .range(1, 100'000'000);
  s.add("PLOTQ_DAILY_DATA_RUNS", &t.data_runs_per_day, "data runs of chat turns per user per UTC day (refusal data_runs_exhausted)")
      .range(0, 100'000'000);
  s.add("PLOTQ_DAILY_PIPELINE_RUNS", &t.pipeline_runs_per_day,
        "plot renders of chat turns per user per UTC day (refusal pipeline_runs_exhausted)")
      .range(0, 100'000'000);
  s.add("PLOTQ_TURN_DATA_RUNS", &t.data_runs_per_turn, "data runs one chat turn may start (refusal turn_run_limit)").range(0, 100);
  s.add("PLOTQ_SESSION_REFUSALS", &t.session_refusals, "scope refusals (out_of_scope, attack) that close a session; 0 = never")
      .range(0, 1'000'000);
  s.add("PLOTQ_ATTACK_STRIKES", &t.attack_strikes, "attack strikes within the window that lock a user out; 0 = never")
      .range(0, 1'000'000);
  s.add("PLOTQ_ATTACK_STRIKE_WINDOW_S", &t.attack_strike_window_s, "seconds an attack strike counts towards the lockout")
      .range(1, 365LL * 86'400);
  s.add("PLOTQ_TURN_TEXT_MAX_CHARS", &t.text_max_chars, "characters of a message's text (over: 413 too_long)").range(1, 1'000'000);
  s.add("PLOTQ_TURN_DATA_CODE_MAX_CHARS", &t.data_code_max_chars, "characters of a data action's code (over: 413 too_long)")
      .range(1, static_cast<std::int64_t>(limits::kMaxDataCodeChars));
  s.add("PLOTQ_TURN_PLOT_CODE_MAX_CHARS", &t.plot_code_max_chars, "characters of a plot action's code (over: 413 too_long)")
      .range(1, static_cast<std::int64_t>(limits::kMaxRenderSourceChars));
  s.add("PLOTQ_TURN_DATA_TIMEOUT_S", &t.data_timeout_s,
        "sandbox timeout of one data run of a chat turn, seconds (PLOTQ_SANDBOX_MAX_TIMEOUT_S and the turn deadline still cap it)")
      .range(0.1, 3600);
  s.add("PLOTQ_TURN_RENDER_TIMEOUT_S", &t.render_timeout_s, "sandbox timeout of one theme of a turn's plot, seconds").range(0.1, limits::kMaxRenderTimeoutS);
  s.add("PLOTQ_LOG_SLOW_FLUSH_MS", &t.slow_flush_log_ms,
        "log event_flush_slow when one loop turn's events take this long to write and store, ms; 0 = every time")
      .range(0, 60'000);
  s.add("PLOTQ_SSE_RETRY_MS", &t.retry_ms, "the 'retry:' a turn's stream starts with, milliseconds").range(0, 3'600'000);
  s.add("PLOTQ_TURN_PREVIEW_ROWS", &t.preview_rows, "rows of the dataset event's preview").range(0, 1000);
  s.add("PLOTQ_TURN_PREVIEW_CELL_CHARS", &t.preview_cell_chars, "characters per preview cell; longer cells are cut").range(1, 200);
}

}  // namespace

void register_settings(Settings& s, PlotqdConfig& c) {
  s.section("HTTP server, caller check, paths", "server/settings.cpp");
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
  s.add("PLOTQ_HTTP_MAX_CONNECTIONS", &c.http.max_connections, "open connections; more are answered 503 unavailable (lowered at start to the soft RLIMIT_NOFILE less the descriptors plotqd keeps for itself, logged connection_cap_lowered)")
      .range(1, 1'000'000);
  s.add("PLOTQ_SSE_BUFFER_BYTES", &c.http.stream_buffer_bytes, "bytes queued per event stream before it is closed (slow reader)")
      .range(1024, 64L * 1024 * 1024);
  s.add("PLOTQ_SSE_PING_S", &c.http.stream_ping, "seconds between ': ping' comments on open streams; 0 = none")
      .range(0, 3600);
  s.add("PLOTQ_LOG_REQUESTS", &c.http.log_requests, "log one line per request (method, route, status, ms)");
  s.add("PLOTQ_SHUTDOWN_GRACE_S", &c.shutdown_grace, "seconds SIGTERM/SIGINT's drain gives running turns and jobs (then they are cancelled) and in-flight answers")
      .range(0, 3600);

  // Caller check
  s.add("PLOTQ_ENVIRONMENT", &c.auth.environment,
        "production, or development (then, with no tokens, loopback callers pass as X-Plotq-User)")
      .choices({"production", "development"});
  s.add("PLOTQ_TOKENS", &c.auth.tokens, "bearer tokens: token=user[:role],... with role user (default) or assistant")
      .check(CallerCheck::validate_tokens)
      .secret();
  s.add("PLOTQ_METRICS_TOKEN", &c.auth.metrics_token,
        "bearer token a Prometheus scraper off loopback sends for GET /metrics (loopback needs none); empty = loopback only")
      .check(validate_metrics_token)
      .secret();

  // Store
  // Shown redacted: a PostgreSQL target may carry a password (store/target.hpp).
  s.add_custom(
      "PLOTQ_DB", "string",
      "the store: a SQLite file (the default; created with its directory when missing), or a PostgreSQL "
      "URI (postgresql://...) or libpq conninfo (host=... dbname=...), whose password is never printed",
      [&c](std::string_view t) {
        if (t.empty()) return std::string("must not be empty");
        c.db_path = std::string(t);
        return std::string();
      },
      [&c] { return nlohmann::json(store::redacted(c.db_path)); });
  s.add("PLOTQ_HOME", &c.home, "where the project's files are (sandbox harness, web page)");
  s.section("Store (store/README.md)", "store/db.cpp");
  store::register_settings(s, c.db);
  s.section("Retention (docs/store.md#retention)", "store/retention.cpp");
  store::register_settings(s, c.retention);

  // Render slot and queue (queue/README.md)
  s.section("Render slot and queue (queue/README.md)", "queue/config.cpp");
  queue::register_settings(s, c.queue);

  s.section("Cluster: many nodes on one PostgreSQL (docs/scale-out.md)", "server/settings.cpp");
  s.add("PLOTQ_CLUSTER", &c.cluster.on,
        "join a cluster of plotqd nodes sharing one PostgreSQL store: one queue, one set of limits (needs PLOTQ_DB on PostgreSQL)");
  s.add("PLOTQ_NODE_ID", &c.cluster.node_id, "this node's name in the cluster (1-128 chars); empty = hostname-pid");
  s.add("PLOTQ_NODE_ADDRESS", &c.cluster.address, "where operators reach this node, shown by `plotq nodes`; empty = PLOTQ_LISTEN");
  s.add("PLOTQ_NODE_LEASE_S", &c.cluster.lease_s,
        "a node that cannot renew its lease within this fences itself (kills its jobs, claims nothing); others then end its running work node_lost")
      .range(1, 600);
  s.add("PLOTQ_NODE_HEARTBEAT_S", &c.cluster.heartbeat_s, "the node renews its lease this often, seconds (well below the lease)")
      .range(0.1, 300);
  s.add("PLOTQ_CLUSTER_POLL_MS", &c.cluster.poll_ms,
        "a node with a free slot looks for waiting work, and reads new events of turns run on other nodes, this often")
      .range(5, 10'000);
  s.add("PLOTQ_CLUSTER_NOTIFY_MS", &c.cluster.notify_ms,
        "a node merges what it has to tell the others (work waiting, events stored) into at most one NOTIFY per this interval, ms; they act on it at once instead of at their next poll. 0 = no hints: polling only")
      .range(0, 1000);
  s.add("PLOTQ_CLUSTER_RESCUE_S", &c.cluster.rescue_s,
        "how often a node looks for lost nodes and waits past PLOTQ_QUEUE_MAX_WAIT_S (one node at a time acts)")
      .range(0.05, 600);

  // Chat turns: per-user limits, wire caps, run timeouts (server/limits.hpp)
  s.section("Chat turns: per-user limits, wire caps, run timeouts", "server/settings.cpp");
  register_turn_settings(s, c.turns);
  // Sandbox (sandbox/README.md) and figure renderer (sandbox/figure/README.md)
  s.section("Sandbox (sandbox/README.md)", "sandbox/config_settings.cpp");
  sandbox::register_settings(s, c.sandbox);
  s.section("Figure renderer (sandbox/figure/README.md)", "sandbox/figure_settings.cpp");
  sandbox::register_figure_settings(s, c.figure);
  s.section("Renders (runs/README.md)", "runs/settings.cpp");
  runs::register_settings(s, c.render);
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
  if (c.cluster.on && store::engine_of(c.db_path) != store::Engine::postgresql)
    out.push_back("PLOTQ_CLUSTER=on needs PLOTQ_DB to name a PostgreSQL server");
  if (c.cluster.on && c.cluster.heartbeat_s * 2 > c.cluster.lease_s)
    out.push_back("PLOTQ_NODE_HEARTBEAT_S must be at most half of PLOTQ_NODE_LEASE_S");
  return out;
}

}  // namespace plotq::server
