// What a route handler sees: a parsed Request and a shared Responder. No Beast in here on purpose:
// every module's routes include this header, and a Beast translation unit is slow to compile.
//
// Threading: handlers are called on the server's one event-loop thread. Responder methods may be
// called from any thread; calls made off the loop are posted to it (in order, per calling thread).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plotq::server {

struct Field {
  std::string name;
  std::string value;
};
using Fields = std::vector<Field>;  // headers; names compared case-insensitively

// Case-insensitive header lookup in a Fields list; the first match wins.
std::optional<std::string_view> find_field(const Fields& fields, std::string_view name);

using Params = std::vector<std::pair<std::string, std::string>>;

struct Peer {
  std::string address;  // "127.0.0.1", "::1"
  std::uint16_t port = 0;
  bool loopback = false;
};

struct Request {
  std::string method;  // as sent: "GET", "POST", ...
  std::string target;  // raw request target: "/v1/x?y=1"
  std::string path;    // target without the query, not decoded
  std::string route;   // the matched pattern, e.g. "/v1/sessions/{id}/messages"
  Params params;       // pattern parameters, percent-decoded: {"id", "42"}
  Params query;        // query parameters in order, percent-decoded ('+' is a space)
  Fields headers;
  std::string body;
  Peer peer;
  std::uint64_t id = 0;  // process-unique request number (for log lines)
  std::chrono::steady_clock::time_point received{};

  // Pattern parameter by name; empty when absent.
  std::string_view param(std::string_view name) const;
  // First query parameter with this name.
  std::optional<std::string_view> query_value(std::string_view name) const;
  std::optional<std::string_view> header(std::string_view name) const { return find_field(headers, name); }
};

// Why a response or stream ended; passed to the on_close hook.
enum class CloseReason {
  done,           // the answer was written, or the handler called close() on a stream
  client_gone,    // the peer closed or reset the connection before the end
  overflow,       // the stream's pending bytes went over the per-stream buffer cap
  write_timeout,  // the peer stopped reading for longer than the write timeout
  shutdown,       // the server is shutting down
};
std::string_view to_string(CloseReason r);

struct StreamOptions {
  // Extra headers. The server always sends Content-Type: text/event-stream (unless given here),
  // Cache-Control: no-store, X-Accel-Buffering: no and Connection: close.
  Fields headers;
  int status = 200;
  // If set, "retry: N\n\n" is the first thing written.
  std::optional<int> retry_ms;
};

// One per request. Exactly one answer: send_json / send_error / send_body, or start_stream followed by
// writes and close(). A second answer is ignored (and logged). If the last reference to a Responder
// is dropped without an answer, the client gets 500 internal (a stream is closed instead).
class Responder {
 public:
  virtual ~Responder() = default;

  // JSON answer with Cache-Control: no-store. Keep-alive is kept when the client asked for it.
  virtual void send_json(int status, nlohmann::json body, Fields extra = {}) = 0;
  // {"detail":code} with the vocabulary's status (server/errors.hpp). An unknown code is a bug: it is
  // logged and answered as 500 internal.
  void send_error(std::string_view code);
  // Same, for call sites that spell out the status; it must be the vocabulary's status for the code
  // (a mismatch is logged and the vocabulary's status is used).
  void send_error(int status, std::string_view code);
  // Any other content (HTML page, PNG). Cache-Control: no-store unless extra sets Cache-Control.
  virtual void send_body(int status, std::string content_type, std::string body, Fields extra = {}) = 0;

  // Server-Sent Events. start_stream sends the header (no Content-Length; the stream ends when the
  // server closes the connection). Writes are queued, one socket write in flight at a time; when the
  // queued bytes would exceed the per-stream cap (PLOTQ_SSE_BUFFER_BYTES) the stream is closed with
  // CloseReason::overflow. A comment ": ping" goes out every PLOTQ_SSE_PING_S seconds.
  // The write functions return false when the stream is not (or no longer) open; called off the loop
  // they return true unless the stream is already known closed.
  virtual bool start_stream(StreamOptions options = {}) = 0;
  // "id: <id>\nevent: <event>\ndata: <line>\n...\n\n"; empty id/event are left out; data with
  // newlines becomes several data: lines. id/event must not contain CR or LF (returns false).
  virtual bool write_event(std::string_view event, std::string_view data, std::string_view id = {}) = 0;
  // Same with compact JSON as the data.
  bool write_json_event(std::string_view event, const nlohmann::json& data, std::string_view id = {}) {
    return write_event(event, std::string_view(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)), id);
  }
  // Raw SSE text (comments, retry lines); the caller formats it.
  virtual bool write_raw(std::string_view text) = 0;
  // Ends the stream after the queued bytes are written (or a pending plain answer: no-op).
  virtual void close() = 0;

  // Called once on the loop when this request's connection is done: answer written, stream closed,
  // client gone, or shutdown. Registering after the fact calls the hook at once (posted).
  virtual void on_close(std::function<void(CloseReason)> hook) = 0;

  // False once the client is gone or the stream/answer is finished.
  virtual bool is_open() const = 0;
  // True once an answer (or a stream header) was started.
  virtual bool answered() const = 0;
  // Bytes queued on a stream and not yet written to the socket.
  virtual std::size_t pending_bytes() const = 0;
};

using Handler = std::function<void(Request, std::shared_ptr<Responder>)>;

// Formats one SSE event (see Responder::write_event); nullopt when event or id contain CR/LF/NUL.
std::optional<std::string> format_sse_event(std::string_view event, std::string_view data,
                                            std::string_view id = {});

}  // namespace plotq::server
