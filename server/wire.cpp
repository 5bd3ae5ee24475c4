#include "server/wire.hpp"

#include <cmath>
#include <set>
#include <vector>

#include "common/text.hpp"
#include "table/parse.hpp"

namespace plotq::server::wire {

std::optional<nlohmann::json> closed_object(std::string_view body,
                                            std::initializer_list<std::string_view> allowed) {
  if (json_depth(body) > kMaxBodyDepth) return std::nullopt;
  // nlohmann keeps the last of two equal names (RFC 8259 leaves it open). A body that names a
  // field twice says two things: it is refused, so that the fields read and the idempotency
  // fingerprint are the one thing it said. One set of names per open container (depth <= 8).
  using Event = nlohmann::json::parse_event_t;
  std::vector<std::set<std::string>> names;
  bool duplicate = false;
  nlohmann::json::parser_callback_t check = [&](int, Event ev, nlohmann::json& parsed) {
    if (ev == Event::object_start || ev == Event::array_start) names.emplace_back();
    else if ((ev == Event::object_end || ev == Event::array_end) && !names.empty()) names.pop_back();
    else if (ev == Event::key && !names.empty() && !names.back().insert(parsed.get<std::string>()).second) duplicate = true;
    return true;
  };
  auto j = nlohmann::json::parse(body.begin(), body.end(), check, false);
  if (duplicate || j.is_discarded() || !j.is_object()) return std::nullopt;
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (auto a : allowed) ok = ok || a == k;
    if (!ok) return std::nullopt;
  }
  return j;
}

bool valid_job_id(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

std::optional<std::string> string_field(const nlohmann::json& j, const char* key, std::size_t min_bytes,
                                        std::size_t max_bytes) {
  if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
  const std::string& s = j[key].get_ref<const std::string&>();
  if (s.size() < min_bytes || s.size() > max_bytes || !table::valid_utf8(s)) return std::nullopt;
  return s;
}

std::optional<double> positive_number(const nlohmann::json& j, const char* key, double max) {
  if (!j.contains(key) || !j[key].is_number() || j[key].is_boolean()) return std::nullopt;
  double v = j[key].get<double>();
  if (!std::isfinite(v) || v <= 0 || v > max) return std::nullopt;
  return v;
}

}  // namespace plotq::server::wire
