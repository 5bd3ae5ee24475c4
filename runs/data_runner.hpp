// Runs one data job now, under a render slot the caller already holds, and books its ledger row
// when it ends. Used by POST /run-data and by chat turns' data actions alike.
#pragma once
#include <functional>

#include "runs/data_job.hpp"
#include "runs/ledger_row.hpp"
#include "sandbox/launcher.hpp"
#include "store/db.hpp"
#include "store/exec.hpp"

namespace plotq::runs {

struct DataRunDone {
  DataRunResult result;
  std::int64_t ledger_id = 0;
  // false when the store refused the ledger row (and so whatever `keep` stored with it)
  bool booked = false;
};

// What a caller stores together with the run's ledger row, in the same transaction: both are kept
// or neither (POST /run-data keeps its answer for retries this way, so a run is never recorded
// without the answer a retry would find). Called on the loop when the run ended; it returns the
// store work to do in the row's transaction (or none), which runs on the store's connection (a
// worker's on PostgreSQL: it must hold copies, nothing of the loop's) and throws to refuse both.
using StoreWork = std::function<void(store::Db&)>;
using KeepWithRow = std::function<StoreWork(const DataRunDone&)>;

// on_done runs on the launcher's io_context, after the row (and `keep`) committed or failed
// (through `store`: at once on SQLite, a loop turn later on PostgreSQL).
sandbox::JobHandle run_data_job(sandbox::Launcher& launcher, store::Exec& store, RunWho who,
                                const std::string& source, double timeout_s, double slot_wait_s,
                                std::function<void(DataRunDone)> on_done, KeepWithRow keep = {});

}  // namespace plotq::runs
