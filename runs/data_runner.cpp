#include "runs/data_runner.hpp"

#include <chrono>
#include <string>

#include "common/log.hpp"
#include "runs/run_metrics.hpp"
#include "store/error.hpp"
#include "store/ledger.hpp"
#include "store/write_tx.hpp"

namespace plotq::runs {

sandbox::JobHandle run_data_job(sandbox::Launcher& launcher, store::Exec& store, RunWho who,
                                const std::string& source, double timeout_s, double slot_wait_s,
                                std::function<void(DataRunDone)> on_done, KeepWithRow keep) {
  sandbox::JobSpec spec = data_job_spec(source, timeout_s);
  spec.label = "data " + who.job_id;
  return launcher.run(std::move(spec), [&store, who = std::move(who), slot_wait_s, on_done = std::move(on_done),
                                        keep = std::move(keep)](sandbox::JobResult job) mutable {
    auto done = std::make_shared<DataRunDone>();
    done->result = interpret_data_job(std::move(job));
    auto row = std::make_shared<store::LedgerEntry>(
        ledger_row(who, store::RunKind::data, done->result.job, done->result.outcome, slot_wait_s));
    auto ledger_start = std::chrono::steady_clock::now();
    StoreWork kept = keep ? keep(*done) : StoreWork{};
    store.run(
        "book a data run",
        [row, kept = std::move(kept)](store::Db& db) {
          store::WriteTx tx(db, "data_run");
          std::int64_t id = store::ledger::insert(db, *row);
          if (kept) kept(db);
          tx.commit();
          return id;
        },
        [done, row, who, ledger_start, on_done = std::move(on_done)](store::Stored<std::int64_t> booked) {
          if (booked.ok()) {
            done->ledger_id = *booked.value;
            done->booked = true;
            count_run(*row, {});
          } else {
            // The run's answer still goes out; the missing row is logged (class only, no content).
            log_event("ledger_write_failed", {{"job_id", who.job_id}, {"code", booked.code}});
          }
          const double ledger_s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - ledger_start).count();
          const auto& t = done->result.job.timings;
          log_event("data_run", {{"job_id", who.job_id},
                                 {"outcome", to_string(done->result.outcome)},
                                 {"exit_code", done->result.job.exit_code ? nlohmann::json(*done->result.job.exit_code)
                                                                          : nlohmann::json(nullptr)},
                                 {"wall_s", done->result.job.wall_s},
                                 {"warm", done->result.job.warm},
                                 // where the time went (bench/run_data_bench reads these)
                                 {"queue_s", t.queue_s},
                                 {"spawn_s", t.spawn_s},
                                 {"run_s", t.run_s},
                                 {"collect_s", t.collect_s},
                                 {"ledger_s", ledger_s}});
          on_done(std::move(*done));
        },
        store::Lane::any, store.outage_wait());
  });
}

}  // namespace plotq::runs
