// Checkpointer: moves WAL checkpoints off plotqd's event loop. SQLite's default is that the commit
// that pushes the WAL past its auto-checkpoint size runs the checkpoint itself, fsyncs included,
// inside that commit, so now and then a chat turn would hold the event loop for the fsyncs. With a
// Checkpointer the writer's connection gets wal_autocheckpoint=0 and this thread, on its own
// connection, runs `PRAGMA wal_checkpoint(PASSIVE)` every interval (PASSIVE never waits for the
// writer and never blocks it). Durability is unchanged in kind (synchronous=NORMAL: a commit
// survives a crash of plotqd at once, and a power cut once a checkpoint has synced it), and the
// window of commits a power cut could take is bounded by the interval instead of by the WAL's size.
//
// The WAL must also start over now and then. SQLite restarts it only in a writer that begins after
// a checkpoint that copied every frame, and with the checkpoints on another thread under steady
// commits that does not happen (the WAL grows with every chat turn, without end). So when a PASSIVE
// run finds at least restart_pages frames in the WAL, the thread follows it with `PRAGMA
// wal_checkpoint(TRUNCATE)`, which does the restart itself: it takes the write lock for the few
// frames PASSIVE left, syncs, and empties the WAL. The writer waits for that run (busy_timeout),
// once per restart_pages frames.
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
  // writer connection's auto-checkpoint and starts the thread. interval_ms > 0, restart_pages > 0.
  Checkpointer(Db& writer, int interval_ms, int restart_pages = 4096);
  // Stops the thread (one last PASSIVE checkpoint) and gives the writer its auto-checkpoint back.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

  std::uint64_t checkpoints() const;  // runs that completed (for tests)
  std::uint64_t failures() const;     // runs that failed (logged as db_checkpoint_failed)
  std::uint64_t truncates() const;    // TRUNCATE runs that emptied the WAL

 private:
  void loop();
  void checkpoint_once();

  Db& writer_;
  int interval_ms_;
  int restart_pages_;
  std::unique_ptr<SQLite::Database> own_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::uint64_t checkpoints_ = 0, failures_ = 0, truncates_ = 0;
  std::thread thread_;
};

}  // namespace plotq::store
