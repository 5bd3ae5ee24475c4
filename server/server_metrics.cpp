#include "server/server_metrics.hpp"

#include <string>

#include "common/metrics.hpp"

namespace plotq::server {
namespace {

struct ServerMetrics {
  metrics::CounterFamily& requests;
  metrics::HistogramFamily& request_seconds;
  metrics::GaugeFamily& streams_open;
  metrics::CounterFamily& streams_closed;
  metrics::CounterFamily& events_sent;
  metrics::CounterFamily& resumes;
  metrics::CounterFamily& refusals;
  metrics::CounterFamily& checkpoints;
};

ServerMetrics& m() {
  auto& r = metrics::registry();
  static ServerMetrics x{
      r.counter("plotq_http_requests_total", "HTTP requests answered, by route pattern, method and status",
                {"route", "method", "status"}),
      r.histogram("plotq_http_request_seconds", "from the request's first byte to its answer (a stream: its header)",
                  {"route"}, metrics::kSecondsBuckets),
      r.gauge("plotq_sse_streams_open", "event streams open now"),
      r.counter("plotq_sse_streams_closed_total",
                "event streams closed, by reason (overflow and write_timeout: a slow reader)", {"reason"}),
      r.counter("plotq_sse_events_sent_total", "turn events queued on streams, live or replayed on a resume",
                {"source"}),
      r.counter("plotq_sse_resumes_total", "resumed turn streams (GET .../events)"),
      r.counter("plotq_turn_refusals_total", "chat turns refused, by refusal code (rate_limited, daily_limit, ...)",
                {"code"}),
      r.counter("plotq_store_checkpoints_total", "WAL checkpoint runs of the periodic step, by result", {"result"}),
  };
  return x;
}

// Methods are a stranger's text: only the ones plotq routes get their own label.
std::string_view method_label(std::string_view m) {
  for (std::string_view k : {"GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS"})
    if (m == k) return k;
  return "other";
}

}  // namespace

void register_server_metrics() {
  ServerMetrics& x = m();
  x.streams_open.with({});
  x.resumes.with({});
  for (CloseReason r : {CloseReason::done, CloseReason::client_gone, CloseReason::overflow, CloseReason::write_timeout,
                        CloseReason::shutdown})
    x.streams_closed.with({to_string(r)});
  for (const char* s : {"live", "replay"}) x.events_sent.with({s});
  for (const char* s : {"complete", "partial", "busy", "failed"}) x.checkpoints.with({s});
}

void count_request(std::string_view method, std::string_view route, int status, double seconds) {
  ServerMetrics& x = m();
  std::string_view r = route.empty() ? "unmatched" : route;
  x.requests.with({r, method_label(method), std::to_string(status)}).inc();
  x.request_seconds.with({r}).observe(seconds);
}

void count_stream_open() { m().streams_open.with({}).add(1); }
void count_stream_closed(CloseReason reason) {
  m().streams_open.with({}).add(-1);
  m().streams_closed.with({to_string(reason)}).inc();
}
void count_events_sent(std::string_view source, std::size_t n) { m().events_sent.with({source}).inc(n); }
void count_resume() { m().resumes.with({}).inc(); }
void count_turn_refusal(std::string_view code) { m().refusals.with({code}).inc(); }
void count_checkpoint(std::string_view result) { m().checkpoints.with({result}).inc(); }

}  // namespace plotq::server
