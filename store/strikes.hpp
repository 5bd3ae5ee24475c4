// strikes: recorded attack verdicts per user, for the attack-strike lockout.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"

namespace plotq::store {

struct Strike {
  std::int64_t id = 0;
  std::string user_id;
  std::string kind;  // attack (chat turn) | dataset (dataset judge); lower-case word
  UnixSeconds at = 0;
  std::optional<std::string> session_id;
  std::optional<std::string> turn_id;
};

namespace strikes {
std::int64_t add(Db& db, const std::string& user_id, const std::string& kind, UnixSeconds now,
                 const std::optional<std::string>& session_id = std::nullopt,
                 const std::optional<std::string>& turn_id = std::nullopt);
// Strikes at or after `since` (all kinds, or one).
std::int64_t count_since(Db& db, const std::string& user_id, UnixSeconds since,
                         const std::optional<std::string>& kind = std::nullopt);
// True when the user has at least `threshold` strikes in the last window_s seconds before `now`
// (threshold 0 = never locked).
bool locked_out(Db& db, const std::string& user_id, UnixSeconds now, std::int64_t threshold,
                std::int64_t window_s);
std::vector<Strike> list(Db& db, const std::string& user_id, int limit = 100);  // newest first
std::int64_t clear(Db& db, const std::string& user_id);  // admin: removes all; returns count
}  // namespace strikes

}  // namespace plotq::store
