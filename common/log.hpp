// Structured log lines: one JSON object per line on stderr. Never log user code, data or output.
#pragma once
#include <nlohmann/json.hpp>
#include <string_view>

namespace plotq {

// Writes {"ts": <unix seconds, ms precision>, "event": event, ...fields} as one line to stderr.
void log_event(std::string_view event, nlohmann::json fields = nlohmann::json::object());

// Tests and tools may silence the log (it still goes to stderr when enabled).
void set_log_enabled(bool enabled);

}  // namespace plotq
