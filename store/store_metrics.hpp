// The store's write metrics (docs/metrics.md): one histogram of write transactions, BEGIN to the
// end of COMMIT, by what they store. A transaction another one joined is timed once, by its owner.
#pragma once
#include <string_view>

namespace plotq::store {

// The `what` labels, one per kind of write transaction (present at zero from the start):
//   turn_events  a loop turn's batch of turn events (server's EventLog), the busiest write
//   data_run     a data run's ledger row with the answer kept for its retries
//   render_rows  a render's ledger rows (one per theme) with the answer kept for its retries
//   ledger       a ledger row written alone (a refused run)
//   idempotency  an idempotency answer written alone
void observe_commit(std::string_view what, double seconds);

}  // namespace plotq::store
