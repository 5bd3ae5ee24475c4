// The wire models each body-taking route applies, called as the route calls them (the field reads of
// routes_run_data.cpp, routes_render.cpp and routes_datasets.cpp are inline in their handlers, so
// they are repeated here read for read; parse_message is turn_wire.cpp's own). Each checks what
// the route relies on afterwards: a field it accepted is within its cap.
#pragma once
#include <set>
#include <string>
#include <string_view>

#include "fuzz/fuzz.hpp"
#include "runs/data_job.hpp"
#include "runs/render_interpret.hpp"
#include "server/turn_wire.hpp"
#include "server/wire.hpp"
#include "table/classify.hpp"
#include "table/parse.hpp"

namespace plotq::fuzz {

namespace wire = plotq::server::wire;

// POST /run-data
inline void run_data_body(std::string_view body) {
  auto j = wire::closed_object(body, {"job_id", "source", "timeout_s"});
  if (!j) return;
  auto job_id = wire::string_field(*j, "job_id", 1, 64);
  auto source = wire::string_field(*j, "source", 1, runs::kMaxDataSourceBytes);
  auto timeout = wire::positive_number(*j, "timeout_s", runs::kMaxDataTimeoutS);
  if (!job_id || !wire::valid_job_id(*job_id) || !source || !timeout) return;
  PLOTQ_FUZZ_CHECK(job_id->size() <= 64 && source->size() <= runs::kMaxDataSourceBytes);
  PLOTQ_FUZZ_CHECK(*timeout > 0 && *timeout <= runs::kMaxDataTimeoutS);
  (void)j->dump();  // the fingerprint writes the parsed body out again (job_claim.cpp)
}

// POST /render
inline void render_body(std::string_view body) {
  auto j = wire::closed_object(body, {"job_id", "source", "library", "themes", "timeout_s", "data_csv"});
  if (!j) return;
  auto job_id = wire::string_field(*j, "job_id", 1, 64);
  auto source = wire::string_field(*j, "source", 1, 4 * runs::kMaxRenderSourceChars);
  auto library = wire::string_field(*j, "library", 1, 32);
  auto timeout = wire::positive_number(*j, "timeout_s", runs::kMaxRenderTimeoutS);
  std::optional<std::string> data_csv = std::string();
  if (j->contains("data_csv")) data_csv = wire::string_field(*j, "data_csv", 0, 4 * runs::kMaxDataCsvChars);
  bool themes_ok = j->contains("themes") && (*j)["themes"].is_array() && !(*j)["themes"].empty() &&
                   (*j)["themes"].size() <= 2;
  std::set<std::string> seen;
  if (themes_ok)
    for (const auto& t : (*j)["themes"])
      if (!t.is_string() || (t != "light" && t != "dark") || !seen.insert(t.get<std::string>()).second) {
        themes_ok = false;
        break;
      }
  if (!job_id || !wire::valid_job_id(*job_id) || !source || !library || !timeout || !data_csv || !themes_ok) return;
  PLOTQ_FUZZ_CHECK(*timeout > 0 && *timeout <= runs::kMaxRenderTimeoutS);
  (void)runs::render_mode(*library);
  (void)j->dump();
}

// POST /v1/sessions/{id}/datasets: {text} -> the paste classifier, then the table parser.
inline void paste_body(std::string_view body) {
  auto j = wire::closed_object(body, {"text"});
  if (!j || !j->contains("text") || !(*j)["text"].is_string()) return;
  const std::string& text = (*j)["text"].get_ref<const std::string&>();
  table::Caps caps;
  if (text.size() > caps.max_bytes) return;
  if (table::classify_paste(text).kind != table::PasteKind::table) return;
  auto parsed = table::parse_table(text, caps);
  if (const auto* t = std::get_if<table::Table>(&parsed)) {
    PLOTQ_FUZZ_CHECK(t->columns.size() <= caps.max_columns);
  }
}

// POST /v1/sessions/{id}/messages
inline void message_body(std::string_view body) {
  server::TurnConfig cfg;
  server::ParsedMessage m = server::parse_message(body, cfg);
  PLOTQ_FUZZ_CHECK(m.message.has_value() != !m.error.empty());
  if (!m.message) return;
  PLOTQ_FUZZ_CHECK(m.message->text_chars <= static_cast<std::size_t>(cfg.text_max_chars));
  PLOTQ_FUZZ_CHECK(m.message->action.themes.size() <= 2);
  PLOTQ_FUZZ_CHECK(table::valid_utf8(m.message->text));
}

}  // namespace plotq::fuzz
