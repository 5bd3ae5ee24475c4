// WAL checkpoints on the writer's own connection.
//
// SQLite's default runs a checkpoint (with its fsyncs) inside the commit that takes the WAL past
// its auto-checkpoint size. plotqd turns that off on its one writer connection and calls
// checkpoint() from a timer on its event loop instead (server/store_checkpoints.cpp): between
// requests, never inside a turn's commit, and at least every interval, so a power cut can take at
// most one interval of commits.
//
// Why the writer's connection and not a thread with a connection of its own (plotq's first design):
// SQLite 3.7.0 through 3.51.2 have a race, the WAL-reset bug (sqlite.org/wal.html, fixed in 3.51.3,
// 3.50.7 and 3.44.6). A checkpoint on one connection that starts while another connection's commit
// restarts the WAL can record a wrong backfill mark; a later checkpoint then skips frames, so
// committed pages never reach the file while the pages that point at them do (an index loses
// rows). Debian 12 ships 3.40.1, and plotq's crash test hit it with the checkpointing thread. One
// connection that both commits and checkpoints cannot race with itself. What is left is another
// process writing the same file while plotqd runs (docs/store.md, "The WAL-reset bug").
#pragma once

#include "store/db.hpp"

namespace plotq::store {

struct CheckpointRun {
  bool busy = false;    // another connection was checkpointing: nothing done, try next time
  int wal_frames = 0;   // frames in the WAL when it ran (it starts over after a complete run)
  int copied = 0;       // frames now in the database file
  bool complete() const { return !busy && copied == wal_frames; }
};

// PRAGMA wal_checkpoint(PASSIVE) on db's own connection: copies what no reader still needs and
// never waits for a reader or another writer. Throws StoreError.
CheckpointRun checkpoint(Db& db);

// Pure: whether the SQLite of this sqlite3_libversion_number() has the WAL-reset bug.
bool has_wal_reset_bug(int libversion_number);

}  // namespace plotq::store
