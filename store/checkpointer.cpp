#include "store/checkpointer.hpp"

#include <SQLiteCpp/Statement.h>

#include <chrono>

#include "common/log.hpp"
#include "store/error.hpp"

namespace plotq::store {

Checkpointer::Checkpointer(Db& writer, int interval_ms, int restart_pages)
    : writer_(writer), interval_ms_(interval_ms), restart_pages_(restart_pages) {
  if (interval_ms_ <= 0) throw StoreError("invalid", "checkpoint interval must be > 0 ms");
  if (restart_pages_ <= 0) throw StoreError("invalid", "checkpoint restart pages must be > 0");
  // Straight to SQLite, not Db::open: the file, -wal and -shm exist and were secured by the
  // writer's open, and Db::open's own open()/close() of them would drop the POSIX locks SQLite
  // holds on them for the writer's connection in this process (close() releases every lock the
  // process has on a file), which lets another connection re-initialise the WAL index under it.
  own_ = guarded("open checkpoint connection", [&] {
    return std::make_unique<SQLite::Database>(writer.path(), SQLite::OPEN_READWRITE | SQLite::OPEN_NOFOLLOW,
                                              writer.options().busy_timeout_ms);
  });
  guarded("disable auto-checkpoint", [&] { writer_.sql().exec("PRAGMA wal_autocheckpoint=0"); });
  thread_ = std::thread([this] { loop(); });
}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  try {
    writer_.sql().exec("PRAGMA wal_autocheckpoint=1000");  // SQLite's default again
  } catch (const std::exception&) {
  }
}

void Checkpointer::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    bool stopping = cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stop_; });
    lock.unlock();
    checkpoint_once();
    lock.lock();
    if (stopping) return;
  }
}

void Checkpointer::checkpoint_once() {
  bool ok = true, truncated = false;
  try {
    // One row: busy, frames in the WAL, frames copied. PASSIVE copies what it can without waiting.
    int frames = 0;
    {
      SQLite::Statement q(*own_, "PRAGMA wal_checkpoint(PASSIVE)");
      if (q.executeStep()) frames = q.getColumn(1).getInt();
    }
    if (frames >= restart_pages_) {
      SQLite::Statement t(*own_, "PRAGMA wal_checkpoint(TRUNCATE)");
      truncated = t.executeStep() && t.getColumn(0).getInt() == 0;  // busy = 1: next time
    }
  } catch (const std::exception& e) {
    ok = false;
    log_event("db_checkpoint_failed", {{"what", e.what()}});
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++(ok ? checkpoints_ : failures_);
  truncates_ += truncated;
}

std::uint64_t Checkpointer::truncates() const {
  std::lock_guard<std::mutex> lock(mu_);
  return truncates_;
}

std::uint64_t Checkpointer::checkpoints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_;
}

std::uint64_t Checkpointer::failures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failures_;
}

}  // namespace plotq::store
