#include "server/turn_wire.hpp"
#include "common/theme.hpp"

#include "runs/libraries.hpp"
#include "server/wire.hpp"
#include "table/parse.hpp"

namespace plotq::server {


namespace {

// A string of valid UTF-8; nullopt when absent, not a string or not UTF-8.
std::optional<std::string> text_of(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  std::string s = it->get<std::string>();
  if (!table::valid_utf8(s)) return std::nullopt;
  return s;
}

ParsedMessage fail(std::string code) { return ParsedMessage{std::nullopt, std::move(code)}; }

}  // namespace

ParsedMessage parse_message(std::string_view body, const TurnConfig& c) {
  auto j = wire::closed_object(body, {"text", "action", "scope"});
  if (!j) return fail("invalid_job");
  MessageRequest m;
  auto text = text_of(*j, "text");
  if (!text) return fail("invalid_job");
  m.text = std::move(*text);
  m.text_chars = utf8_chars(m.text);
  if (m.text_chars > static_cast<std::size_t>(c.text_max_chars)) return fail("too_long");

  if (auto it = j->find("scope"); it != j->end() && !it->is_null()) {
    if (!it->is_string()) return fail("invalid_job");
    auto v = store::parse_scope_verdict(it->get<std::string>());
    if (!v || *v == store::ScopeVerdict::none) return fail("invalid_job");
    m.scope = *v;
  }

  if (auto it = j->find("action"); it != j->end() && !it->is_null()) {
    if (!it->is_object() || !it->contains("kind") || !(*it)["kind"].is_string()) return fail("invalid_job");
    std::string kind = (*it)["kind"].get<std::string>();
    std::string dump = it->dump();
    if (kind == "data") {
      auto a = wire::closed_object(dump, {"kind", "code", "source_language"});
      if (!a) return fail("invalid_job");
      auto code = text_of(*a, "code");
      auto lang = text_of(*a, "source_language");
      if (!code || code->empty() || !lang || *lang != "python") return fail("invalid_job");
      if (utf8_chars(*code) > static_cast<std::size_t>(c.data_code_max_chars)) return fail("too_long");
      m.action.kind = store::TurnAction::data;
      m.action.code = std::move(*code);
      m.action.source_language = std::move(*lang);
    } else if (kind == "plot") {
      auto a = wire::closed_object(dump, {"kind", "code", "library", "themes", "language"});
      if (!a) return fail("invalid_job");
      auto code = text_of(*a, "code");
      auto library = text_of(*a, "library");
      if (!code || code->empty() || !library) return fail("invalid_job");
      const runs::Library* lib = runs::find_library(*library);  // one of runs/libraries.hpp's table
      if (!lib) return fail("invalid_job");
      // `language` is optional (the library names it) and, when given, must be the library's own.
      if (a->contains("language")) {
        auto lang = text_of(*a, "language");
        if (!lang || *lang != lib->language) return fail("invalid_job");
      }
      auto th = a->find("themes");
      if (th == a->end() || !th->is_array() || th->size() > kThemes.size()) return fail("invalid_job");
      for (const auto& t : *th) {
        if (!t.is_string()) return fail("invalid_job");
        m.action.themes.push_back(t.get<std::string>());
      }
      if (!themes_problem(m.action.themes).empty()) return fail("invalid_job");
      if (utf8_chars(*code) > static_cast<std::size_t>(c.plot_code_max_chars)) return fail("too_long");
      m.action.kind = store::TurnAction::plot;
      m.action.code = std::move(*code);
      m.action.library = std::move(*library);
    } else {
      return fail("invalid_job");
    }
  }
  return ParsedMessage{std::move(m), ""};
}

}  // namespace plotq::server
