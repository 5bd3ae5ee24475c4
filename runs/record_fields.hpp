// Reading the records a job wrote inside the sandbox (result.json and friends): a field is taken
// only with the type it must have, and an exception's class name only when it looks like one.
#pragma once
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace plotq::runs {

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
