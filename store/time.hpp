// Times in the store: callers pass `now` as unix seconds (so tests are deterministic); the
// database holds UTC text 'YYYY-MM-DDTHH:MM:SSZ', days 'YYYY-MM-DD', minutes 'YYYY-MM-DDTHH:MM'.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plotq::store {

using UnixSeconds = std::int64_t;

UnixSeconds now_unix();                  // the wall clock, whole seconds
std::string iso_utc(UnixSeconds t);      // 2026-10-14T09:30:05Z
std::string utc_day(UnixSeconds t);      // 2026-10-14
std::string utc_minute(UnixSeconds t);   // 2026-10-14T09:30

// Accepts 'YYYY-MM-DD', 'YYYY-MM-DDTHH:MM', 'YYYY-MM-DDTHH:MM:SS' with 'T' or ' ' and an optional
// trailing 'Z' (always UTC). nullopt when malformed or out of range.
std::optional<UnixSeconds> parse_utc(std::string_view s);
// True for a valid 'YYYY-MM-DD'.
bool is_utc_day(std::string_view s);

}  // namespace plotq::store
