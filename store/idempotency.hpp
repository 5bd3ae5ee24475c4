// idempotency: (job_id, kind) -> request fingerprint and the stored answer, so that a retried
// /run-data or /render request never runs a job's code twice.
//   kind = "data" or the themes in request order joined by commas ("light,dark").
//   same key, same fingerprint, running  -> running_same (join the running job)
//   same key, same fingerprint, done     -> done_same (answer with the stored response)
//   same key, different fingerprint      -> conflict (409 job_conflict)
// Only successful answers are kept (complete); a failed or cancelled job is forgotten so a replay
// runs again. Answers are kept by age (PLOTQ_IDEMPOTENCY_KEEP_HOURS): plotqd deletes the expired
// ones in small batches from a timer (prune_done), so no write holds the lock for long and a retry
// within the window is always answered from the store.
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
  std::int64_t row = 0;  // started: the key's row (a cluster's enqueue checks it is still the one claimed)
};

namespace idempotency {

std::string kind_for_themes(const std::vector<std::string>& themes);  // {"light","dark"} -> "light,dark"
std::string fingerprint(std::string_view request_json);               // sha256 hex

// Claims the key in one BEGIN IMMEDIATE transaction: started means this caller must run the job and
// later call complete() or forget().
Claim begin(Db& db, const std::string& job_id, const std::string& kind,
            const std::string& fingerprint, UnixSeconds now);
// running -> done with the answer (valid JSON). Unknown key: not_found; already done: bad_state.
void complete(Db& db, const std::string& job_id, const std::string& kind,
              const std::string& response_json, UnixSeconds now);
// Deletes at most `batch` done answers that finished before `finished_before`, oldest first, in
// one short transaction (the partial index on finished_at finds them). Running claims are never
// pruned. Returns how many went: `batch` means more may be left.
std::int64_t prune_done(Db& db, UnixSeconds finished_before, int batch);
// Deletes a running record (the job failed or was cancelled). False when there was none.
bool forget(Db& db, const std::string& job_id, const std::string& kind);
// At plotqd start: running records of a previous process can never finish; deletes them.
std::int64_t forget_running(Db& db);
}  // namespace idempotency

}  // namespace plotq::store
