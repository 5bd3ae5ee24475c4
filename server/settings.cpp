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

// Comma-separated lists (empty items dropped), as sandbox::config_from_env() reads them.
Setting& add_list(Settings& s, std::string name, std::vector<std::string>* field, std::string help) {
  return s.add_custom(
      std::move(name), "list", std::move(help),
      [field](std::string_view text) {
        std::vector<std::string> out;
        std::size_t start = 0;
        while (start <= text.size()) {
          std::size_t comma = text.find(',', start);
          if (comma == std::string_view::npos) comma = text.size();
          if (comma > start) out.emplace_back(text.substr(start, comma - start));
          start = comma + 1;
        }
        *field = std::move(out);
        return std::string();
      },
      [field] { return nlohmann::json(*field); });
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
      .range(1, 16'384);
  s.add("PLOTQ_TURN_PLOT_CODE_MAX_CHARS", &t.plot_code_max_chars, "characters of a plot action's code (over: 413 too_long)")
      .range(1, 131'072);
  s.add("PLOTQ_TURN_DATA_TIMEOUT_S", &t.data_timeout_s,
        "sandbox timeout of one data run of a chat turn, seconds (PLOTQ_SANDBOX_MAX_TIMEOUT_S and the turn deadline still cap it)")
      .range(0.1, 3600);
  s.add("PLOTQ_TURN_RENDER_TIMEOUT_S", &t.render_timeout_s, "sandbox timeout of one theme of a turn's plot, seconds").range(0.1, 120);
  s.add("PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S", &t.queue_status_min_interval_s,
        "a waiting turn's queued statuses are at least this far apart (changes in between are merged); 0 = every change")
      .range(0, 60);
  s.add("PLOTQ_LOG_SLOW_FLUSH_MS", &t.slow_flush_log_ms,
        "log event_flush_slow when one loop turn's events take this long to write and store, ms; 0 = every time")
      .range(0, 60'000);
  s.add("PLOTQ_SSE_RETRY_MS", &t.retry_ms, "the 'retry:' a turn's stream starts with, milliseconds").range(0, 3'600'000);
  s.add("PLOTQ_TURN_PREVIEW_ROWS", &t.preview_rows, "rows of the dataset event's preview").range(0, 1000);
  s.add("PLOTQ_TURN_PREVIEW_CELL_CHARS", &t.preview_cell_chars, "characters per preview cell; longer cells are cut").range(1, 200);
}

// One line per sandbox::Config field; names and ranges as sandbox::config_from_env() reads them.
void register_sandbox_settings(Settings& s, sandbox::Config& c) {
  s.add("PLOTQ_PYTHON", &c.python, "interpreter of every sandbox job (never the one on PATH)");
  s.add("PLOTQ_HARNESS_DIR", &c.harness_dir, "the sandbox harness (entry.py, zygote.py, harness.py); empty = <PLOTQ_HOME>/sandbox/harness");
  s.add("PLOTQ_CONFINE_LIB", &c.confine_lib, "libplotq_confine.so; empty = the one built with this binary");
  s.add("PLOTQ_RUNS_DIR", &c.runs_dir, "one fresh work dir per job attempt is made (and removed) here");
  s.add("PLOTQ_SANDBOX_LOCK_DIR", &c.sandbox_lock_dir, "flock files reserving uid blocks between processes");
  add_list(s, "PLOTQ_HIDDEN_PATHS", &c.hidden_paths, "directories hidden behind an empty read-only tmpfs in every job, comma separated");
  s.add("PLOTQ_SANDBOX_UID_BASE", &c.sandbox_uid_base, "first uid/gid of the sandbox range").range(1000, 4'000'000'000LL);
  s.add("PLOTQ_SANDBOX_UID_COUNT", &c.sandbox_uid_count, "size of the sandbox uid range").range(2, 1'000'000);
  s.add("PLOTQ_SANDBOX_MAX_JOBS", &c.sandbox_max_jobs, "sandbox jobs running at once per launcher (one uid each)").range(1, 256);
  s.add("PLOTQ_RLIMIT_AS_MB", &c.rlimit_as_mb, "address space per job process, MiB; 0 = leave as is").range(0, 1 << 20);
  s.add("PLOTQ_RLIMIT_NPROC", &c.rlimit_nproc, "processes+threads of the job uid; 0 = leave as is").range(0, 100'000);
  s.add("PLOTQ_RLIMIT_CPU_S", &c.rlimit_cpu_s, "CPU seconds per job: min(this, ceil(timeout))").range(1, 86'400);
  s.add("PLOTQ_RLIMIT_FSIZE_MB", &c.rlimit_fsize_mb, "largest file a job may write, MiB").range(1, 1 << 20);
  s.add("PLOTQ_RLIMIT_NOFILE", &c.rlimit_nofile, "open files per job process").range(16, 1 << 20);
  s.add("PLOTQ_SANDBOX_NICE", &c.sandbox_nice, "niceness of every job (only raised; the job cannot lower it)").range(0, 19);
  s.add("PLOTQ_SANDBOX_CGROUP", &c.sandbox_cgroup, "use a cgroup (memory, pids) per job when one is writable");
  s.add("PLOTQ_CGROUP_MEMORY_MB", &c.cgroup_memory_mb, "memory of a whole job (all its processes), MiB").range(16, 1 << 20);
  s.add("PLOTQ_CGROUP_PIDS_MAX", &c.cgroup_pids_max, "tasks of a whole job").range(4, 100'000);
  s.add("PLOTQ_CGROUP_PARENT", &c.cgroup_parent, "parent cgroup of the jobs; empty = plotq-<pid> under plotqd's own");
  s.add("PLOTQ_WATCH_INTERVAL_MS", &c.watch_interval_ms, "watchdog sampling interval, milliseconds").range(5, 10'000);
  s.add("PLOTQ_RUN_BUDGET_MB", &c.run_budget_mb, "bytes on disk in a job's work dir, MiB (reason disk)").range(1, 1 << 20);
  s.add("PLOTQ_MAX_RUN_ENTRIES", &c.max_run_entries, "files and dirs in a job's work dir (reason files)").range(10, 10'000'000);
  s.add("PLOTQ_MAX_RUN_DEPTH", &c.max_run_depth, "directory depth in a job's work dir (reason files)").range(2, 1000);
  s.add("PLOTQ_MIN_MEM_AVAILABLE_MB", &c.min_mem_available_mb, "refuse to start a job below this MemAvailable, MiB; 0 = off")
      .range(0, 1 << 24);
  s.add("PLOTQ_KILL_MEM_AVAILABLE_MB", &c.kill_mem_available_mb, "kill a running job below this MemAvailable, MiB; 0 = off")
      .range(0, 1 << 24);
  s.add("PLOTQ_STDOUT_HEAD_BYTES", &c.stdout_head_bytes, "first bytes of a job's stdout kept").range(0, 1 << 24);
  s.add("PLOTQ_STDOUT_TAIL_BYTES", &c.stdout_tail_bytes, "last bytes of a job's stdout kept").range(0, 1 << 24);
  s.add("PLOTQ_STDERR_KEEP_BYTES", &c.stderr_keep_bytes, "bytes of a job's stderr kept").range(0, 1 << 24);
  s.add("PLOTQ_STDERR_TAIL_CHARS", &c.stderr_tail_chars, "characters of stderr in a job's result").range(0, 1 << 24);
  s.add("PLOTQ_READER_GRACE_MS", &c.reader_grace_ms, "wait for pipe EOF after a job is gone, milliseconds").range(0, 60'000);
  s.add("PLOTQ_SANDBOX_MAX_TIMEOUT_S", &c.sandbox_max_timeout_s, "a job's timeout is clamped to (0, this], seconds").range(0.1, 86'400);
  s.add("PLOTQ_MIN_RETRY_S", &c.min_retry_s, "a launcher failure is retried once when this much time remains, seconds").range(0, 3600);
  s.add("PLOTQ_KILL_GRACE_S", &c.kill_grace_s, "after SIGKILL, wait this long before calling a job stuck, seconds").range(0.1, 3600);
  s.add("PLOTQ_SANDBOX_COLD", &c.sandbox_cold, "never use a zygote (every job starts a fresh interpreter)");
  add_list(s, "PLOTQ_WARM_MODES", &c.warm_modes, "job modes that get a zygote, comma separated (raw, data, plot, figure)");
  s.add("PLOTQ_ZYGOTE_FALLBACK_COLD", &c.zygote_fallback_cold, "a job waiting for a (re)starting zygote runs cold instead");
  s.add("PLOTQ_ZYGOTE_START_TIMEOUT_S", &c.zygote_start_timeout_s, "a zygote's preload must finish within this, seconds").range(1, 3600);
  s.add("PLOTQ_ZYGOTE_MAX_RESTARTS", &c.zygote_max_restarts, "consecutive failed zygote starts before a mode goes cold for good")
      .range(0, 1000);
  add_list(s, "PLOTQ_RAW_PRELOAD", &c.raw_preload, "modules the raw-mode zygote imports before forking, comma separated");
  add_list(s, "PLOTQ_REQUIRED_LAYERS", &c.required_layers, "sandbox layers that must be active, else every job is refused, comma separated");
  s.add("PLOTQ_REQUIRE_EXEC_FILTER", &c.require_exec_filter, "a job exits exec_denied when the exec filter cannot be armed");
}

// One line per sandbox::FigureConfig field (plotly figures drawn by a warm Chromium).
void register_figure_settings(Settings& s, sandbox::FigureConfig& c) {
  s.add("PLOTQ_NODE", &c.node, "node binary of the figure renderer");
  s.add("PLOTQ_CHROMIUM", &c.chromium, "Chromium binary of the figure renderer");
  s.add("PLOTQ_PLOTLY_JS", &c.plotly_js, "plotly.js the figure page loads");
  s.add("PLOTQ_FIGURE_SCRIPT", &c.figure_script, "renderer.mjs; empty = <PLOTQ_HOME>/sandbox/figure/renderer.mjs");
  s.add("PLOTQ_FIGURE_TMP_ROOT", &c.figure_tmp_root, "a private 0711 dir per renderer start is made here");
  s.add("PLOTQ_FIGURE_RESTART_AFTER", &c.figure_restart_after, "jobs per renderer process, then a fresh one").range(1, 1'000'000);
  s.add("PLOTQ_FIGURE_START_TIMEOUT_S", &c.figure_start_timeout_s, "renderer start + warm-up must say ready within this, seconds")
      .range(1, 600);
  s.add("PLOTQ_FIGURE_KILL_GRACE_S", &c.figure_kill_grace_s, "the host kills the renderer at a job's timeout + this, seconds")
      .range(0.1, 60);
  s.add("PLOTQ_FIGURE_MAX_TIMEOUT_S", &c.figure_max_timeout_s, "a figure job's timeout is clamped to (0, this], seconds").range(1, 600);
  s.add("PLOTQ_FIGURE_MAX_QUEUE", &c.figure_max_queue, "figure jobs waiting behind the running one; more answer busy").range(0, 10'000);
  s.add("PLOTQ_FIGURE_SPARES", &c.figure_spares, "fresh pages (plotly loaded) kept ready while idle").range(0, 8);
  s.add("PLOTQ_FIGURE_NETNS", &c.figure_netns, "run the renderer in a new, empty network namespace");
  s.add("PLOTQ_FIGURE_PIDNS", &c.figure_pidns, "run the renderer in a new PID namespace");
  s.add("PLOTQ_FIGURE_UID", &c.figure_uid, "Chromium's uid when plotqd runs as root").range(1, 4'294'967'294LL);
  s.add("PLOTQ_FIGURE_GID", &c.figure_gid, "Chromium's gid when plotqd runs as root").range(1, 4'294'967'294LL);
  s.add("PLOTQ_FIGURE_CHROMIUM_SANDBOX", &c.figure_chromium_sandbox, "Chromium's own sandbox (false adds --no-sandbox)");
  s.add("PLOTQ_FIGURE_WEBGL", &c.figure_webgl, "allow WebGL traces (false: they answer no_webgl)");
  s.add("PLOTQ_FIGURE_MAX_BYTES", &c.figure_max_bytes, "figure JSON cap, bytes").range(1, 1LL << 30);
  s.add("PLOTQ_FIGURE_MAX_DEPTH", &c.figure_max_depth, "figure JSON nesting cap").range(2, 100'000);
  s.add("PLOTQ_FIGURE_HEAP_MB", &c.figure_heap_mb, "V8 heap cap of each figure page, MiB").range(64, 1 << 16);
  s.add("PLOTQ_FIGURE_STDERR_KEEP_BYTES", &c.figure_stderr_keep_bytes, "renderer stderr tail kept for the log, bytes")
      .range(256, 1 << 24);
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
  s.add("PLOTQ_DB_CACHE_KIB", &c.db.cache_kib, "SQLite page cache of plotqd's connection, KiB (0: SQLite's 2000)")
      .range(0, 4 * 1024 * 1024);
  s.add("PLOTQ_DB_CHECKPOINT_INTERVAL_MS", &c.db.checkpoint_interval_ms,
        "WAL checkpoint from a background thread this often, ms (0: inside the writer's commits)")
      .range(0, 3'600'000);
  s.add("PLOTQ_DB_WAL_RESTART_PAGES", &c.db.wal_restart_pages,
        "WAL frames that make a background checkpoint a TRUNCATE (the WAL starts over)")
      .range(1, 1 << 24);
  s.add("PLOTQ_HOME", &c.home, "where the project's files are (sandbox harness, web page)");

  // Render slot and queue (queue/README.md)
  s.add("PLOTQ_SLOTS", &c.queue.slots, "sandbox jobs (turns) holding a render slot at once").range(1, 64);
  s.add("PLOTQ_RUNS_PER_MINUTE", &c.queue.starts_per_window, "slot starts allowed per rate window").range(1, 100000);
  s.add("PLOTQ_RATE_WINDOW_S", &c.queue.rate_window_s, "length of the sliding rate window, seconds").range(0.001, 86400);
  s.add("PLOTQ_QUEUE_MAX_WAIT_S", &c.queue.max_wait_s, "a waiting turn or job expires after this many seconds").range(0, 86400);
  s.add("PLOTQ_HEARTBEAT_S", &c.queue.heartbeat_s, "unchanged queue positions are re-sent this often, seconds").range(0.001, 3600);
  s.add("PLOTQ_TURN_DEADLINE_S", &c.queue.turn_deadline_s, "a turn's budget once it holds the slot, seconds").range(0.001, 86400);

  // Chat turns: per-user limits, wire caps, run timeouts (server/limits.hpp)
  register_turn_settings(s, c.turns);
  // Sandbox (sandbox/README.md) and figure renderer (sandbox/figure/README.md)
  register_sandbox_settings(s, c.sandbox);
  register_figure_settings(s, c.figure);
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
