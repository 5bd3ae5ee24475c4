// quota_days, quota_minutes, quota_limits: per-user counters by UTC day and UTC minute.
// book() checks and increments in ONE BEGIN IMMEDIATE transaction, so concurrent bookings (threads
// or processes) never exceed a cap; a refused booking changes nothing.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"
#include "store/types.hpp"

namespace plotq::store {

enum class BookVerdict { booked, day_limit, minute_limit };
std::string_view to_string(BookVerdict v);  // booked | day_limit | minute_limit

struct Booking {
  BookVerdict verdict = BookVerdict::booked;
  std::int64_t day_count = 0;     // the day's count after this call
  std::int64_t minute_count = 0;  // the minute's count after this call
  bool booked() const { return verdict == BookVerdict::booked; }
};

struct CounterCounts {
  std::int64_t day = 0;
  std::int64_t minute = 0;
};

// One user's usage on one day (a row of `plotq quotas`).
struct QuotaUsage {
  std::string user_id;
  std::string day;                         // YYYY-MM-DD
  std::int64_t messages = 0;
  std::int64_t messages_this_minute = 0;   // in the minute of `now`
  std::int64_t data_runs = 0;
  std::int64_t pipeline_runs = 0;
  std::int64_t strikes = 0;                // strikes recorded that day
};

// Names in quota_limits that the views read.
inline constexpr const char* kLimitMessagesPerDay = "messages_per_day";
inline constexpr const char* kLimitMessagesPerMinute = "messages_per_minute";
inline constexpr const char* kLimitDataRunsPerDay = "data_runs_per_day";
inline constexpr const char* kLimitPipelineRunsPerDay = "pipeline_runs_per_day";
std::string limit_name(Counter c, bool per_minute);  // e.g. "messages_per_minute"

namespace quotas {
// Books one unit of `counter` for the user at `now`, unless that would make the day's count exceed
// day_limit or the minute's count exceed minute_limit (nullopt = no cap; the day cap is checked
// first). A refusal increments nothing. Also prunes the user's older minute rows.
Booking book(Db& db, const std::string& user_id, Counter counter, UnixSeconds now,
              std::optional<std::int64_t> day_limit, std::optional<std::int64_t> minute_limit);
// book() in two halves, for a caller that books inside a transaction of its own holding
// Tx(db, quota_lock(user)) (a message's admission, which also writes its turn there): check()
// reads the counts and says whether one more fits, writing nothing; add() adds the one.
std::string quota_lock(const std::string& user_id);
Booking check(Db& db, const std::string& user_id, Counter counter, UnixSeconds now,
              std::optional<std::int64_t> day_limit, std::optional<std::int64_t> minute_limit);
void add(Db& db, const std::string& user_id, Counter counter, UnixSeconds now);
// Whether one more fits under the caps (the day first), given the counts as they are.
BookVerdict verdict(const CounterCounts& c, std::optional<std::int64_t> day_limit,
                    std::optional<std::int64_t> minute_limit);

// Gives back one booked unit (e.g. a booked message whose turn was then refused), in the day and
// minute of booked_at; never below zero.
void unbook(Db& db, const std::string& user_id, Counter counter, UnixSeconds booked_at);
CounterCounts counts(Db& db, const std::string& user_id, Counter counter, UnixSeconds now);
// Usage on `day` (YYYY-MM-DD) of every user with a counter that day, or of one user (a zero row
// when they have none). Sorted by user. messages_this_minute is read for the minute of `now`.
std::vector<QuotaUsage> usage(Db& db, const std::string& day, UnixSeconds now,
                              const std::optional<std::string>& user_id = std::nullopt);
// Admin reset: removes the user's counters for the day of `now` and all their minute rows, for one
// counter or all. Returns the number of rows removed.
std::int64_t reset(Db& db, const std::string& user_id, std::optional<Counter> counter, UnixSeconds now);
// Replaces quota_limits with these (plotqd calls it at start with its settings).
void write_limits(Db& db, const std::map<std::string, std::int64_t>& limits, UnixSeconds now);
std::map<std::string, std::int64_t> read_limits(Db& db);
}  // namespace quotas

}  // namespace plotq::store
