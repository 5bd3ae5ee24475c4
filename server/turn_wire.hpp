// The body of POST /v1/sessions/{id}/messages as closed models (unknown fields refused):
//   {text, action?, scope?}
//   action: {kind:"data", code, source_language:"python"} | {kind:"plot", code, library, themes:[...]}
//   scope:  "out_of_scope" | "attack" | "needs_data"   (the assistant role only; checked by the route)
#pragma once
#include "common/text.hpp"
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/limits.hpp"
#include "store/types.hpp"

namespace plotq::server {

struct TurnAction {
  store::TurnAction kind = store::TurnAction::none;
  std::string code;
  std::string source_language;      // data
  std::string library;              // plot: a name of runs/libraries.hpp's table
  std::vector<std::string> themes;  // plot: 1..2 distinct of light | dark
};

struct MessageRequest {
  std::string text;
  std::size_t text_chars = 0;
  TurnAction action;
  store::ScopeVerdict scope = store::ScopeVerdict::none;
};

// On failure: the vocabulary code (invalid_job: not the model; too_long: text or code over its cap).
struct ParsedMessage {
  std::optional<MessageRequest> message;
  std::string error;
};
ParsedMessage parse_message(std::string_view body, const TurnConfig& c);

using plotq::utf8_chars;  // common/text.hpp

}  // namespace plotq::server
