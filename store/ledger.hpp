// runs: the run ledger. One LedgerEntry per sandbox run (or refused run), appended when it ends.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"
#include "store/types.hpp"

namespace plotq::store {

struct LedgerEntry {
  std::int64_t id = 0;  // assigned by insert
  std::string job_id;
  RunKind kind = RunKind::data;
  std::string user_id;
  std::optional<std::string> session_id;  // set when a chat turn caused the run
  std::optional<std::string> turn_id;
  std::optional<std::string> theme;       // renders: the theme drawn
  UnixSeconds created_at = 0;
  double slot_wait_s = 0;  // waiting for the render slot
  double wall_s = 0;       // the child's wall time
  double cpu_s = 0;        // the child's CPU time (user + system)
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  std::optional<std::string> reason;  // why it failed (sandbox vocabulary)
  std::optional<double> measured;     // the figure that crossed the limit ...
  std::optional<double> limit;        // ... and the limit (column limit_value)
  std::optional<double> max_rss_mb;
  int attempts = 1;
  RunOutcome outcome = RunOutcome::ok;
  std::optional<std::string> refusal_code;  // set exactly when outcome == refused
  std::optional<std::string> runtime_id;    // the sandbox runtime's id (12 hex), when known
};

struct LedgerQuery {
  std::optional<UnixSeconds> since;  // created_at >= since
  std::optional<std::string> user_id;
  std::optional<RunKind> kind;
  std::optional<std::string> job_id;
  int limit = 100;
};

namespace ledger {
// Appends the entry (creating its user when new); returns its id. Bad rows: "constraint".
std::int64_t insert(Db& db, const LedgerEntry& entry);
// Newest first.
std::vector<LedgerEntry> query(Db& db, const LedgerQuery& query);
}  // namespace ledger

}  // namespace plotq::store
