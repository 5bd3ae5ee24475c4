// idempotency: (job_id, kind) -> request fingerprint and the stored answer, so that a retried
// /run-data or /render request never runs a job's code twice.
//   kind = "data" or the themes in request order joined by commas ("light,dark").
//   same key, same fingerprint, running  -> running_same (join the running job)
//   same key, same fingerprint, done     -> done_same (answer with the stored response)
//   same key, different fingerprint      -> conflict (409 job_conflict)
// Only successful answers are kept (complete); a failed or cancelled job is forgotten so a replay
// runs again; only the newest keep_done answers stay (oldest completed evicted first).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"

namespace plotq::store {

enum class ClaimState { started, running_same, done_same, conflict };
std::string_view to_string(ClaimState s);

struct Claim {
  ClaimState state = ClaimState::started;
  std::string response;  // the stored answer when done_same
};

namespace idempotency {
inline constexpr int kDefaultKeepDone = 16;  // anyplot's DONE_CACHE

std::string kind_for_themes(const std::vector<std::string>& themes);  // {"light","dark"} -> "light,dark"
std::string fingerprint(std::string_view request_json);               // sha256 hex

// Claims the key in one BEGIN IMMEDIATE transaction: started means this caller must run the job and
// later call complete() or forget().
Claim begin(Db& db, const std::string& job_id, const std::string& kind,
            const std::string& fingerprint, UnixSeconds now);
// running -> done with the answer (valid JSON); evicts done records beyond keep_done.
// Unknown key: not_found; already done: bad_state.
void complete(Db& db, const std::string& job_id, const std::string& kind,
              const std::string& response_json, UnixSeconds now, int keep_done = kDefaultKeepDone);
// Deletes a running record (the job failed or was cancelled). False when there was none.
bool forget(Db& db, const std::string& job_id, const std::string& kind);
// At plotqd start: running records of a previous process can never finish; deletes them.
std::int64_t forget_running(Db& db);
}  // namespace idempotency

}  // namespace plotq::store
