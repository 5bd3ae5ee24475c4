// The bodies of POST /run-data, POST /render and POST /v1/sessions/{id}/datasets as closed models
// (unknown fields refused), read by pure functions: the routes and fuzz/ call the same ones, as
// turn_wire.hpp's parse_message for the message body. On failure: the route's code; nothing of the
// body is echoed.
#pragma once
#include "common/limits.hpp"
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "table/table.hpp"

namespace plotq::server {

// Each route's body limit (RouteOptions::body_limit): its largest valid body, JSON-escaped.
using ::plotq::limits::kRunDataBodyLimit;  // common/limits.hpp
using ::plotq::limits::kRenderBodyLimit;  // common/limits.hpp
using ::plotq::limits::kPasteBodyLimit;  // common/limits.hpp

// POST /run-data: {job_id, source, timeout_s}.
struct RunDataBody {
  nlohmann::json parsed;  // the body as read: the idempotency fingerprint is taken of it
  std::string job_id;
  std::string source;
  double timeout_s = 0;
};
struct ParsedRunData {
  std::optional<RunDataBody> body;
  std::string error;  // invalid_job
};
ParsedRunData parse_run_data_body(std::string_view body);

// POST /render: {job_id, source, library, themes, timeout_s, data_csv?, language?}.
struct RenderBody {
  nlohmann::json parsed;  // as RunDataBody::parsed
  std::string job_id;
  std::string source;
  std::string library;              // of the library name's form; whether plotq draws it is the route's
  std::vector<std::string> themes;  // 1..2 distinct of light | dark, in request order
  double timeout_s = 0;
  std::string data_csv;                 // empty when absent (a JavaScript library takes none)
  std::optional<std::string> language;  // python | javascript, when given
};
struct ParsedRender {
  std::optional<RenderBody> body;
  std::string error;  // invalid_job
};
ParsedRender parse_render_body(std::string_view body);

// POST /v1/sessions/{id}/datasets: {text}. A text the table parser may read: within its byte cap,
// and told apart from code and formulas before any parser reads it.
struct ParsedPaste {
  std::optional<std::string> text;
  // invalid_job (not the model: the route answers it before it looks for the session), else
  // too_long, code, formula.
  std::string error;
};
ParsedPaste parse_paste_body(std::string_view body, const table::Caps& caps = {});

}  // namespace plotq::server
