// EventWriter: plotqd's hot path for turn events. The statements are prepared once per connection
// and reused (both drivers keep them: sql.hpp), and the caller numbers the events itself (plotqd keeps each live turn's
// next seq in memory: it is the only writer of a live turn's events), so a row is one indexed
// INSERT, not a parse plus a max(seq) lookup. The (turn_id, seq) primary key still refuses a
// duplicate seq (constraint). Wrap many calls in one transaction; the writer opens none itself.
// Same thread and lifetime rules as the Db it was made from (it must not outlive it); the
// statements belong to the Db's connection.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/db.hpp"
#include "store/time.hpp"


namespace plotq::store::turns {

class EventWriter {
 public:
  explicit EventWriter(Db& db);

  // Inserts event `seq` of the turn. created_at is an iso_utc() text (the caller formats it once
  // per batch). Throws StoreError: constraint (duplicate seq, unknown turn, invalid JSON or name).
  void append(std::string_view turn_id, std::int64_t seq, std::string_view event, std::string_view data_json,
              std::string_view created_at);
  // turns::finish with the cached statement: -> done with outcome and code. Unknown: not_found;
  // already done: bad_state.
  void finish(std::string_view turn_id, std::string_view outcome, const std::optional<std::string>& code,
              std::string_view ended_at);
  // The same for a turn this very transaction wrote (and so holds): nothing to check, so on
  // PostgreSQL it goes out with the commit instead of costing a round trip of its own.
  void finish_own(std::string_view turn_id, std::string_view outcome, const std::optional<std::string>& code,
                  std::string_view ended_at);

 private:
  void end(std::string_view turn_id, std::string_view outcome, const std::optional<std::string>& code,
           std::string_view ended_at, bool checked);
  Db& db_;
};

}  // namespace plotq::store::turns
