#include "store/checkpoint.hpp"

#include "store/sql.hpp"

#include "store/error.hpp"

namespace plotq::store {

CheckpointRun checkpoint(Db& db) {
  if (db.engine() != Engine::sqlite) return {};  // PostgreSQL checkpoints by itself
  return guarded("checkpoint", [&] {
    // One row: busy, frames in the WAL, frames copied.
    Stmt q(db, "PRAGMA wal_checkpoint(PASSIVE)");
    CheckpointRun run;
    if (q.executeStep()) {
      run.busy = q.getColumn(0).getInt() != 0;
      run.wal_frames = q.getColumn(1).getInt();
      run.copied = q.getColumn(2).getInt();
    }
    return run;
  });
}

bool has_wal_reset_bug(int v) {
  if (v < 3'007'000) return false;                         // no WAL before 3.7.0
  if (v >= 3'051'003) return false;                        // fixed in 3.51.3
  if (v >= 3'050'007 && v < 3'051'000) return false;       // the 3.50.7 backport
  if (v >= 3'044'006 && v < 3'045'000) return false;       // the 3.44.6 backport
  return true;
}

}  // namespace plotq::store
