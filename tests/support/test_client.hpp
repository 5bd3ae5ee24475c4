// Test helpers for integration tests that talk to a real plotqd over loopback. Plain POSIX sockets
// and processes, no Beast. Link plotq_test_support.
//
//   TempDir dir;
//   Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", dir.file("plotq.db")}});   // PLOTQ_LISTEN=127.0.0.1:0 by default
//   HttpResponse r = http_request(d.port(), "GET", "/healthz");
//   SseStream s(d.port(), "POST", "/v1/sessions/1/messages", R"({"text":"hi"})", {{"X-Plotq-User", "ann"}});
//   while (auto ev = s.next()) { ... ev->event, ev->data ... }
#pragma once
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace plotq::test {

using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;
using Env = std::vector<std::pair<std::string, std::string>>;
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// A plotqd child process. Its environment is the test's own without any PLOTQ_* variable, plus
// PLOTQ_LISTEN=127.0.0.1:0 and PLOTQ_LOG_REQUESTS=1, plus `env` (which wins). stderr and stdout are
// captured line by line.
class Plotqd {
 public:
  Plotqd(std::string binary, Env env, std::vector<std::string> args = {}, bool wait = true);
  ~Plotqd();  // SIGTERM if still running (SIGKILL after 5 s)
  Plotqd(const Plotqd&) = delete;
  Plotqd& operator=(const Plotqd&) = delete;

  // Waits for the {"event":"listening","address":...} line; false on timeout or exit.
  bool wait_listening(Ms timeout = 15s);
  std::uint16_t port() const { return port_; }
  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }

  // stderr lines so far; and those that are JSON objects.
  std::vector<std::string> stderr_lines() const;
  std::vector<std::string> stdout_lines() const;
  std::vector<nlohmann::json> log_events(std::string_view event = {}) const;
  // Waits for a JSON log line whose "event" is `event` and that satisfies pred (if given).
  std::optional<nlohmann::json> wait_log(std::string_view event, Ms timeout = 5s,
                                         std::function<bool(const nlohmann::json&)> pred = nullptr);

  void signal(int sig);
  // Exit code, or 128 + signal number; nullopt when still running after timeout.
  std::optional<int> wait_exit(Ms timeout = 15s);

 private:
  void reader();
  void stop();  // SIGTERM (then SIGKILL), reap, stop the reader thread
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  int wake_[2] = {-1, -1};  // tells the reader thread to stop (grandchildren may hold the pipes)
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> out_lines_, err_lines_;
  bool pipes_closed_ = false;
  std::optional<int> exit_code_;
  std::uint16_t port_ = 0;
  std::string address_;
};

struct HttpResponse {
  int status = 0;
  std::string reason;
  HeaderList headers;
  std::string body;
  std::optional<std::string> header(std::string_view name) const;  // case-insensitive
  nlohmann::json json() const;  // parses body; throws when it is not JSON
};

// One TCP connection to 127.0.0.1:port. Blocking I/O with poll() timeouts.
class Connection {
 public:
  explicit Connection(std::uint16_t port, const std::string& host = "127.0.0.1");  // throws std::runtime_error
  ~Connection();
  Connection(Connection&& o) noexcept;
  Connection& operator=(Connection&&) = delete;
  Connection(const Connection&) = delete;

  // Writes all of bytes; false if the peer closed or reset.
  bool send(std::string_view bytes);
  // Reads one response (Content-Length, chunked, or until close); nullopt on timeout or a close
  // before a complete response.
  std::optional<HttpResponse> read_response(Ms timeout = 5s);
  // Reads the status line and headers only (for streams); the rest stays buffered for read_some.
  std::optional<HttpResponse> read_head(Ms timeout = 5s);
  // Appends whatever arrives within timeout to out (returns bytes read; 0 with closed() on EOF).
  std::size_t read_some(std::string& out, Ms timeout);
  // True when the peer closed (EOF or reset) within timeout; data that arrives first is dropped.
  bool wait_closed(Ms timeout);
  bool closed() const { return closed_; }
  void shutdown_write();
  int fd() const { return fd_; }

 private:
  bool fill(Ms timeout, std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
  std::string buf_;  // bytes received and not yet consumed
  bool closed_ = false;
};

// "METHOD target HTTP/1.1" with Host, Content-Length (when body is not empty or method is POST/PUT)
// and the given headers; Connection: close unless keep_alive.
std::string format_request(std::string_view method, std::string_view target, std::string_view body = {},
                           const HeaderList& headers = {}, bool keep_alive = true);

// One request on a fresh connection (Connection: close). Throws std::runtime_error when no
// response comes within timeout.
HttpResponse http_request(std::uint16_t port, std::string_view method, std::string_view target,
                          std::string_view body = {}, const HeaderList& headers = {}, Ms timeout = 10s);

// Polls `cond` every `pace` until it holds or `timeout` passes; whether it held. For a state the
// test is not told about (a count on GET /status, a file): the wait ends on the state, not a time.
bool poll_until(const std::function<bool()>& cond, Ms timeout, Ms pace = Ms(20));

// Waits until GET /status (development mode: loopback is the assistant) counts `n` slots held:
// a render or a data run that holds one is running.
bool wait_in_flight(std::uint16_t port, int n, Ms timeout = Ms(60'000));

// Waits until a sandbox job's work dir under runs_dir (plotqd's PLOTQ_RUNS_DIR: job-*) exists, and
// when `name` is given, holds that file (one the job's own code writes: the job runs).
bool wait_job_file(const std::string& runs_dir, const std::string& name = {}, Ms timeout = Ms(60'000));

// One SSE frame: the fields of one block ended by a blank line. Comment-only blocks (": ping")
// are frames too, with only `comments` filled.
struct SseFrame {
  std::string id, event, data;  // data lines joined with '\n'
  bool has_id = false;
  std::optional<long> retry;
  std::vector<std::string> comments;  // text after ':' (one leading space removed)
};

// Sends a request and reads a text/event-stream answer frame by frame.
class SseStream {
 public:
  SseStream(std::uint16_t port, std::string_view method, std::string_view target, std::string_view body = {},
            const HeaderList& headers = {}, Ms timeout = 10s);
  const HttpResponse& head() const { return head_; }  // status and headers (body empty for a stream)
  // The next frame; nullopt on timeout or when the stream ended (ended() tells which).
  std::optional<SseFrame> next(Ms timeout = 10s);
  // Next frame that is an event (skips comment-only frames such as pings).
  std::optional<SseFrame> next_event(Ms timeout = 10s);
  bool ended() const { return ended_; }
  Connection& connection() { return conn_; }

 private:
  Connection conn_;
  HttpResponse head_;
  std::string pending_;  // stream text not yet parsed into frames
  bool ended_ = false;
};

// Parses frames out of text; consumes complete frames from the front of text.
std::vector<SseFrame> parse_sse(std::string& text);

}  // namespace plotq::test
