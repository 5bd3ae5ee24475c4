// One SQLite connection with plotq's pragmas.
//
// The one-writer rule: plotqd holds ONE Db, used only on its event-loop thread, and every write of
// the service goes through it (repository calls are short: a few indexed statements in one
// transaction). The plotq CLI opens its own connection; WAL lets it read while plotqd writes, and
// busy_timeout makes its rare writes (quota reset, migrate) wait for plotqd's instead of failing.
// Writes that check-then-change (quota booking, next dataset version) use BEGIN IMMEDIATE, so they
// are safe across processes too. A Db must not be shared between threads; open one per thread.
#pragma once
#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>

namespace plotq::store {

struct Options {
  bool synchronous_full = false;  // PLOTQ_DB_SYNCHRONOUS_FULL: synchronous=FULL (default NORMAL)
  int busy_timeout_ms = 5000;     // PLOTQ_DB_BUSY_TIMEOUT_MS: wait this long for another writer
  bool read_only = false;         // open an existing file read-only (CLI listings); never creates
};

// Options from PLOTQ_DB_SYNCHRONOUS_FULL and PLOTQ_DB_BUSY_TIMEOUT_MS (throws ConfigError when malformed).
Options options_from_env();

class Db {
 public:
  // Creates the parent directory (mode 0711) and the file (mode 0600: sandboxed uids must never
  // read it; an existing file, -wal or -shm with looser modes is tightened). Refuses symlinks and
  // non-regular files. Sets WAL, synchronous NORMAL|FULL, foreign_keys ON, busy_timeout.
  // Throws StoreError: db_open, db_missing (read_only and no file).
  static std::unique_ptr<Db> open(const std::string& path, Options options = {});

  SQLite::Database& sql() { return sql_; }
  const std::string& path() const { return path_; }
  const Options& options() const { return options_; }

 private:
  Db(const std::string& path, Options options, int flags);
  std::string path_;
  Options options_;
  SQLite::Database sql_;
};

}  // namespace plotq::store
