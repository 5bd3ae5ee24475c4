// Each body-taking route's own parser (server/route_bodies.hpp, server/turn_wire.hpp) on a
// stranger's body, and what the route relies on afterwards checked on its answer: a refusal is a
// code of the vocabulary, an accepted field is within its cap, and the fingerprint can be taken.
// Shared by the wire target (a body alone) and http_request (a body behind HTTP).
#pragma once
#include <string>
#include <string_view>

#include "common/text.hpp"
#include "fuzz/fuzz.hpp"
#include "runs/data_job.hpp"
#include "runs/libraries.hpp"
#include "runs/render_interpret.hpp"
#include "server/errors.hpp"
#include "server/route_bodies.hpp"
#include "server/turn_wire.hpp"
#include "server/wire.hpp"
#include "store/idempotency.hpp"
#include "table/classify.hpp"
#include "table/parse.hpp"

namespace plotq::fuzz {

// The claim's fingerprint of a parsed body (server/job_claim.cpp): a hex SHA-256 of it written out.
inline void check_fingerprint(const nlohmann::json& parsed) {
  PLOTQ_FUZZ_CHECK(store::idempotency::fingerprint(parsed.dump()).size() == 64);
}

inline void check_refusal(const std::string& error) { PLOTQ_FUZZ_CHECK(server::find_error(error) != nullptr); }

// POST /run-data
inline void run_data_body(std::string_view text) {
  server::ParsedRunData p = server::parse_run_data_body(text);
  PLOTQ_FUZZ_CHECK(p.body.has_value() == p.error.empty());
  if (!p.body) return check_refusal(p.error);
  const server::RunDataBody& b = *p.body;
  PLOTQ_FUZZ_CHECK(server::wire::valid_job_id(b.job_id));
  PLOTQ_FUZZ_CHECK(!b.source.empty() && b.source.size() <= runs::kMaxDataSourceBytes && table::valid_utf8(b.source));
  PLOTQ_FUZZ_CHECK(b.timeout_s > 0 && b.timeout_s <= runs::kMaxDataTimeoutS);
  check_fingerprint(b.parsed);
}

// POST /render
inline void render_body(std::string_view text) {
  server::ParsedRender p = server::parse_render_body(text);
  PLOTQ_FUZZ_CHECK(p.body.has_value() == p.error.empty());
  if (!p.body) return check_refusal(p.error);
  const server::RenderBody& b = *p.body;
  PLOTQ_FUZZ_CHECK(server::wire::valid_job_id(b.job_id));
  PLOTQ_FUZZ_CHECK(!b.source.empty() && utf8_chars(b.source) <= runs::kMaxRenderSourceChars);
  PLOTQ_FUZZ_CHECK(utf8_chars(b.data_csv) <= runs::kMaxDataCsvChars);
  PLOTQ_FUZZ_CHECK(table::valid_utf8(b.source) && table::valid_utf8(b.data_csv) && table::valid_utf8(b.library));
  PLOTQ_FUZZ_CHECK(!b.library.empty() && b.library.size() <= 32 &&
                   b.library.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos);
  PLOTQ_FUZZ_CHECK(b.timeout_s > 0 && b.timeout_s <= runs::kMaxRenderTimeoutS);
  PLOTQ_FUZZ_CHECK(!b.themes.empty() && b.themes.size() <= 2);
  for (const auto& t : b.themes) PLOTQ_FUZZ_CHECK(t == "light" || t == "dark");
  if (b.themes.size() == 2) PLOTQ_FUZZ_CHECK(b.themes[0] != b.themes[1]);
  PLOTQ_FUZZ_CHECK(!b.language || *b.language == "python" || *b.language == "javascript" || *b.language == "r" ||
                   *b.language == "julia");
  if (const runs::Library* lib = runs::find_library(b.library); lib && lib->language == "javascript")
    PLOTQ_FUZZ_CHECK(b.data_csv.empty());
  (void)runs::render_mode(b.library);
  check_fingerprint(b.parsed);
}

// POST /v1/sessions/{id}/datasets: the parser, then the table parser the route hands the text to
// (runs::add_table_version reads a paste with the delimiter sniffed).
inline void paste_body(std::string_view text) {
  table::Caps caps;
  server::ParsedPaste p = server::parse_paste_body(text, caps);
  PLOTQ_FUZZ_CHECK(p.text.has_value() == p.error.empty());
  if (!p.text) return check_refusal(p.error);
  PLOTQ_FUZZ_CHECK(p.text->size() <= caps.max_bytes);
  PLOTQ_FUZZ_CHECK(table::classify_paste(*p.text).kind == table::PasteKind::table);
  auto parsed = table::parse_table(*p.text, caps);
  if (const auto* t = std::get_if<table::Table>(&parsed)) PLOTQ_FUZZ_CHECK(t->columns.size() <= caps.max_columns);
  else check_refusal(std::get<table::ParseError>(parsed).code);
}

// POST /v1/sessions/{id}/messages
inline void message_body(std::string_view text) {
  server::TurnConfig cfg;
  server::ParsedMessage m = server::parse_message(text, cfg);
  PLOTQ_FUZZ_CHECK(m.message.has_value() != !m.error.empty());
  if (!m.message) return check_refusal(m.error);
  PLOTQ_FUZZ_CHECK(m.message->text_chars <= static_cast<std::size_t>(cfg.text_max_chars));
  PLOTQ_FUZZ_CHECK(m.message->action.themes.size() <= 2);
  PLOTQ_FUZZ_CHECK(table::valid_utf8(m.message->text));
}

}  // namespace plotq::fuzz
