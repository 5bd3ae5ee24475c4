// One SQLite connection with plotq's pragmas.
//
// The one-writer rule: plotqd holds ONE Db, used only on its event-loop thread, and every write of
// the service goes through it (repository calls are short: a few indexed statements in one
// transaction). The plotq CLI opens its own connection; WAL lets it read while plotqd writes, and
// busy_timeout makes its rare writes (quota reset, migrate) wait for plotqd's instead of failing.
// Writes that check-then-change (quota booking, next dataset version) use BEGIN IMMEDIATE, so they
// are safe across processes too. A Db must not be shared between threads; open one per thread.
#pragma once
#include <map>
#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>

struct sqlite3_stmt;

namespace plotq {
class Settings;
}

namespace plotq::store {

struct Options {
  bool synchronous_full = false;  // PLOTQ_DB_SYNCHRONOUS_FULL: synchronous=FULL (default NORMAL)
  int busy_timeout_ms = 5000;     // PLOTQ_DB_BUSY_TIMEOUT_MS: wait this long for another writer
  bool read_only = false;         // open an existing file read-only (CLI listings); never creates
  // PLOTQ_DB_CACHE_KIB: SQLite's page cache per connection (cache_size = -KiB; SQLite's own default
  // is 2000 KiB, too small once turn_events outgrows it and every insert reads pages).
  int cache_kib = 16384;
  // PLOTQ_DB_CHECKPOINT_INTERVAL_MS: plotqd checkpoints the WAL on its writer connection from an
  // event-loop timer this often (store/checkpoint.hpp); 0 = SQLite's auto-checkpoint inside the
  // writer's commits. Db::open itself does not use it.
  int checkpoint_interval_ms = 1000;
  // PLOTQ_DB_WAL_KEEP_KIB: journal_size_limit. When the WAL starts over (the first commit after a
  // complete checkpoint) its file is cut back to this size, so one burst does not keep it large.
  int wal_keep_kib = 16384;
  // PLOTQ_DB_START_CHECK: plotqd runs quick_check and the schema check (store/integrity.hpp) before
  // it serves the file; off, only the header stage (a very large store starts faster).
  bool start_check = true;
  // How long answers, ledger rows, events, datasets and sweeps are kept: store/retention.hpp.
};

// Registers every Options field as its PLOTQ_DB_* setting (db.cpp: name, bound, reason).
void register_settings(Settings& s, Options& o);
// The registration loaded alone from the environment; throws plotq::ConfigError when malformed.
Options options_from_env();

class Db {
 public:
  // Creates the parent directory (mode 0711) and the file (mode 0600: sandboxed uids must never
  // read it; an existing file, -wal or -shm with looser modes is tightened). Refuses symlinks and
  // non-regular files. Sets WAL, synchronous NORMAL|FULL, foreign_keys ON, busy_timeout, cache_size.
  // Throws StoreError: db_open, db_missing (read_only and no file).
  static std::unique_ptr<Db> open(const std::string& path, Options options = {});

  SQLite::Database& sql() { return sql_; }
  const std::string& path() const { return path_; }
  const Options& options() const { return options_; }

  // A statement prepared once per connection and kept until the Db closes (hot paths reuse it:
  // reset, bind, step). The caller must reset it and clear its bindings after each use. Throws
  // SQLite::Exception when sql does not prepare.
  sqlite3_stmt* cached_statement(const std::string& sql);

 private:
  struct Finalize {
    void operator()(sqlite3_stmt* q) const;
  };
  Db(const std::string& path, Options options, int flags);
  std::string path_;
  Options options_;
  SQLite::Database sql_;
  // Declared after sql_, so finalized before the connection closes (a live statement would keep
  // sqlite3_close from closing it).
  std::map<std::string, std::unique_ptr<sqlite3_stmt, Finalize>> statements_;
};

}  // namespace plotq::store
