// Runs one data job now, under a render slot the caller already holds, and books its ledger row
// when it ends. Used by POST /run-data and by chat turns' data actions alike.
#pragma once
#include <functional>

#include "runs/data_job.hpp"
#include "runs/ledger_row.hpp"
#include "sandbox/launcher.hpp"
#include "store/db.hpp"

namespace plotq::runs {

struct DataRunDone {
  DataRunResult result;
  std::int64_t ledger_id = 0;
};

// on_done runs on the launcher's io_context. db must be the loop's one writer connection.
sandbox::JobHandle run_data_job(sandbox::Launcher& launcher, store::Db& db, RunWho who,
                                const std::string& source, double timeout_s, double slot_wait_s,
                                std::function<void(DataRunDone)> on_done);

}  // namespace plotq::runs
