// Checkpointer: moves WAL checkpoints off plotqd's event loop. SQLite's default is that the commit
// that pushes the WAL past 1,000 pages runs the checkpoint itself, fsyncs included, inside that
// commit: every ~50th chat turn paid several milliseconds. With a Checkpointer the writer's
// connection gets wal_autocheckpoint=0 and this thread, on its own connection, runs
// `PRAGMA wal_checkpoint(PASSIVE)` every interval (PASSIVE never waits for the writer and never
// blocks it). Durability is unchanged in kind (synchronous=NORMAL: a commit survives a crash of
// plotqd at once, and a power cut once a checkpoint has synced it), and the window of commits a
// power cut could take is bounded by the interval instead of by the WAL's size.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "store/db.hpp"

namespace plotq::store {

class Checkpointer {
 public:
  // Opens the thread's own connection to writer.path() (throws StoreError), turns off the
  // writer connection's auto-checkpoint and starts the thread. interval_ms > 0.
  Checkpointer(Db& writer, int interval_ms);
  // Stops the thread (one last PASSIVE checkpoint) and gives the writer its auto-checkpoint back.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  std::uint64_t checkpoints() const;  // runs that completed (for tests)
  std::uint64_t failures() const;     // runs that failed (logged as db_checkpoint_failed)

 private:
  void loop();
  void checkpoint_once();

  Db& writer_;
  int interval_ms_;
  std::unique_ptr<SQLite::Database> own_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::uint64_t checkpoints_ = 0, failures_ = 0;
  std::thread thread_;
};

}  // namespace plotq::store
