#include "server/route_bodies.hpp"
#include "common/theme.hpp"

#include "common/text.hpp"
#include "runs/data_job.hpp"
#include "runs/libraries.hpp"
#include "runs/render_interpret.hpp"
#include "server/wire.hpp"
#include "table/classify.hpp"

namespace plotq::server {
namespace {

// A library's name: what the route may look up and book (a ledger row names it).
bool library_name(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

// 1..2 distinct of light | dark, in request order; nullopt otherwise.
std::optional<std::vector<std::string>> themes_of(const nlohmann::json& j) {
  auto it = j.find("themes");
  if (it == j.end() || !it->is_array() || it->size() > kThemes.size()) return std::nullopt;
  std::vector<std::string> themes;
  for (const auto& t : *it) {
    if (!t.is_string()) return std::nullopt;
    themes.push_back(t.get<std::string>());
  }
  if (!themes_problem(themes).empty()) return std::nullopt;
  return themes;
}

}  // namespace

ParsedRunData parse_run_data_body(std::string_view text) {
  auto j = wire::closed_object(text, {"job_id", "source", "timeout_s"});
  if (!j) return {std::nullopt, "invalid_job"};
  auto job_id = wire::string_field(*j, "job_id", 1, 64);
  auto source = wire::string_field(*j, "source", 1, runs::kMaxDataSourceBytes);
  auto timeout = wire::positive_number(*j, "timeout_s", runs::kMaxDataTimeoutS);
  if (!job_id || !wire::valid_job_id(*job_id) || !source || !timeout) return {std::nullopt, "invalid_job"};
  return {RunDataBody{std::move(*j), std::move(*job_id), std::move(*source), *timeout}, ""};
}

ParsedRender parse_render_body(std::string_view text) {
  auto j = wire::closed_object(text, {"job_id", "source", "library", "themes", "timeout_s", "data_csv", "language"});
  if (!j) return {std::nullopt, "invalid_job"};
  // Strings are read by bytes first (4 per character at most), then counted in characters.
  auto job_id = wire::string_field(*j, "job_id", 1, 64);
  auto source = wire::string_field(*j, "source", 1, 4 * runs::kMaxRenderSourceChars);
  auto library = wire::string_field(*j, "library", 1, 32);
  auto timeout = wire::positive_number(*j, "timeout_s", runs::kMaxRenderTimeoutS);
  std::optional<std::string> data_csv = std::string();
  if (j->contains("data_csv")) data_csv = wire::string_field(*j, "data_csv", 0, 4 * runs::kMaxDataCsvChars);
  auto themes = themes_of(*j);
  if (!job_id || !wire::valid_job_id(*job_id) || !source || utf8_chars(*source) > runs::kMaxRenderSourceChars ||
      !library || !library_name(*library) || !timeout || !data_csv ||
      utf8_chars(*data_csv) > runs::kMaxDataCsvChars || !themes)
    return {std::nullopt, "invalid_job"};
  std::optional<std::string> language;
  if (j->contains("language")) {
    language = wire::string_field(*j, "language", 1, 16);
    if (!language || (*language != "python" && *language != "javascript" && *language != "r" && *language != "julia"))
      return {std::nullopt, "invalid_job"};
  }
  // A JavaScript snippet takes no data.csv: the library names its language, else `language` does.
  const runs::Library* lib = runs::find_library(*library);
  const bool javascript = lib ? lib->language == "javascript" : language == "javascript";
  if (javascript && !data_csv->empty()) return {std::nullopt, "invalid_job"};
  return {RenderBody{std::move(*j), std::move(*job_id), std::move(*source), std::move(*library), std::move(*themes),
                     *timeout, std::move(*data_csv), std::move(language)},
          ""};
}

ParsedPaste parse_paste_body(std::string_view body, const table::Caps& caps) {
  auto j = wire::closed_object(body, {"text"});
  if (!j || !j->contains("text") || !(*j)["text"].is_string()) return {std::nullopt, "invalid_job"};
  std::string text = std::move((*j)["text"].get_ref<std::string&>());
  if (text.size() > caps.max_bytes) return {std::nullopt, "too_long"};
  // Code and formulas are told apart before any parser reads the text.
  switch (table::classify_paste(text).kind) {
    case table::PasteKind::code: return {std::nullopt, "code"};
    case table::PasteKind::formula: return {std::nullopt, "formula"};
    case table::PasteKind::table: break;
  }
  return {std::move(text), ""};
}

}  // namespace plotq::server
