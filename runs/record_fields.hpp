// Reading the records a job wrote inside the sandbox (result.json and friends): a record is parsed
// only under the nesting cap, a field is taken only with the type it must have, and an exception's
// class name only when it looks like one.
#pragma once
#include "common/limits.hpp"
#include <cctype>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/text.hpp"

namespace plotq::runs {

// The harness's records are shallow (result.json is flat, validation.json a list of flat objects);
// anything nested deeper is not one of them.
using ::plotq::limits::kMaxRecordDepth;  // common/limits.hpp

// The one rule for every record a job wrote: its nesting is scanned before nlohmann parses it
// (the child chose those bytes, and the parser recurses per level), and a record too deep or not
// JSON is null, so it is never believed.
inline nlohmann::json parse_record(std::string_view text) {
  if (json_depth(text) > kMaxRecordDepth) return nullptr;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

inline std::optional<std::string> str_field(const nlohmann::json& j, const char* k) {
  if (j.is_object() && j.contains(k) && j[k].is_string()) return j[k].get<std::string>();
  return std::nullopt;
}
inline std::optional<long long> int_field(const nlohmann::json& j, const char* k) {
  if (j.is_object() && j.contains(k) && j[k].is_number_integer()) return j[k].get<long long>();
  return std::nullopt;
}
inline std::optional<double> num_field(const nlohmann::json& j, const char* k) {
  if (j.is_object() && j.contains(k) && j[k].is_number()) return j[k].get<double>();
  return std::nullopt;
}

// Exception class names reach the caller only when they look like a class name.
inline bool plain_class_name(const std::string& s) {
  if (s.empty() || s.size() > 80) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace plotq::runs
