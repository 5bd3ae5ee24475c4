// plotqd's own metrics (docs/metrics.md): HTTP requests, SSE streams, turn refusals, the store's
// commits and checkpoints. Counted where each thing already passes once (the session's end of a
// request, the stream's close, TurnService::refuse, EventLog's commit, the checkpoint step).
#pragma once
#include <chrono>
#include <string_view>

#include "server/http.hpp"

namespace plotq::server {

// One answered request: route = the router's pattern ("" when no route matched: label
// "unmatched"), status as answered (499 when the client went away first). For a stream the time is
// to its header.
void count_request(std::string_view method, std::string_view route, int status, double seconds);
void count_stream_open();
void count_stream_closed(CloseReason reason);
void count_events_sent(std::string_view source, std::size_t n = 1);  // source: live | replay
void count_resume();
void count_turn_refusal(std::string_view code);
void count_checkpoint(std::string_view result);  // complete | partial | busy | failed

// Every family at zero (plotqd calls it before it listens).
void register_server_metrics();

}  // namespace plotq::server
