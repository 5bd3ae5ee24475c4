// Wire-model helpers: closed JSON objects (unknown fields refused), typed field reads with caps.
// Every failure is the route's fixed code (usually invalid_job); nothing of the body is echoed.
#pragma once
#include "common/limits.hpp"
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace plotq::server::wire {

// Every wire model is at most 3 levels deep ({action: {themes: [...]}}); a body nested deeper is
// refused before nlohmann parses it: its dump() recurses per level, and 60,000 levels (a 120 KB
// message body) overflowed the loop thread's stack (found by fuzz/wire).
using ::plotq::limits::kMaxBodyDepth;  // common/limits.hpp

// Parses body as a JSON object, nested at most kMaxBodyDepth, whose keys are all in `allowed` and
// where no object names a key twice (at any depth); nullopt otherwise.
std::optional<nlohmann::json> closed_object(std::string_view body, std::initializer_list<std::string_view> allowed);

// ^[A-Za-z0-9_-]{1,64}$ (anyplot's JOB_ID_PATTERN; opaque, never a path).
bool valid_job_id(std::string_view s);

// A string field of at most max_bytes (UTF-8 checked); min_bytes for required non-empty fields.
std::optional<std::string> string_field(const nlohmann::json& j, const char* key, std::size_t min_bytes,
                                        std::size_t max_bytes);
// A finite number in (0, max].
std::optional<double> positive_number(const nlohmann::json& j, const char* key, double max);

}  // namespace plotq::server::wire
