#include "server/http.hpp"

#include "common/log.hpp"
#include "server/errors.hpp"

namespace plotq::server {
namespace {
bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}
bool has_line_break(std::string_view s) { return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos; }
}  // namespace

std::optional<std::string_view> find_field(const Fields& fields, std::string_view name) {
  for (const Field& f : fields)
    if (iequals(f.name, name)) return std::string_view(f.value);
  return std::nullopt;
}

std::string_view Request::param(std::string_view name) const {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return {};
}

std::optional<std::string_view> Request::query_value(std::string_view name) const {
  for (const auto& [k, v] : query)
    if (k == name) return std::string_view(v);
  return std::nullopt;
}

std::string_view to_string(CloseReason r) {
  switch (r) {
    case CloseReason::done: return "done";
    case CloseReason::client_gone: return "client_gone";
    case CloseReason::overflow: return "overflow";
    case CloseReason::write_timeout: return "write_timeout";
    case CloseReason::shutdown: return "shutdown";
  }
  return "unknown";
}

void Responder::send_error(std::string_view code) {
  const ErrorCode* e = find_error(code);
  if (!e) {
    // Never echo the unknown code: it may come from anywhere.
    log_event("error_code_unknown", {{"length", code.size()}});
    e = find_error("internal");
  }
  // A store out of reach (PostgreSQL restarting, a lost connection being re-made) is back within
  // seconds: the client is told when to try again.
  if (e->code == "store_unavailable")
    return send_json(e->status, nlohmann::json{{"detail", std::string(e->code)}}, {{"Retry-After", "2"}});
  send_json(e->status, nlohmann::json{{"detail", std::string(e->code)}});
}

void Responder::send_error(int status, std::string_view code) {
  const ErrorCode* e = find_error(code);
  if (e && e->status != status)
    log_event("error_status_mismatch", {{"code", std::string(e->code)}, {"status", status}, {"expected", e->status}});
  send_error(code);
}

std::optional<std::string> format_sse_event(std::string_view event, std::string_view data, std::string_view id) {
  if (has_line_break(event) || has_line_break(id)) return std::nullopt;
  std::string out;
  out.reserve(event.size() + data.size() + id.size() + 24);
  if (!id.empty()) out.append("id: ").append(id).push_back('\n');
  if (!event.empty()) out.append("event: ").append(event).push_back('\n');
  // Each line of data becomes its own data: line (CRLF, CR and LF all end a line in SSE).
  std::size_t start = 0;
  while (true) {
    std::size_t end = data.find_first_of("\r\n", start);
    out.append("data: ").append(data.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    out.push_back('\n');
    if (end == std::string_view::npos) break;
    start = end + ((data[end] == '\r' && end + 1 < data.size() && data[end + 1] == '\n') ? 2 : 1);
    if (start >= data.size()) {
      out.append("data: \n");
      break;
    }
  }
  out.push_back('\n');
  return out;
}

}  // namespace plotq::server
