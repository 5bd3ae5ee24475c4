// One connection to the store, SQLite (the default: one file) or PostgreSQL (many nodes), with
// plotq's session settings.
//
// The one-writer rule: every write transaction takes the store's one write lock first (SQLite's
// BEGIN IMMEDIATE; on PostgreSQL an advisory transaction lock, sql.hpp's Tx), so check-then-change
// writes (quota booking, next dataset version) are safe across connections and processes on both
// engines, and the two behave alike. The plotq CLI opens its own connection; SQLite's WAL lets it
// read while plotqd writes. A Db must not be shared between threads; open one per thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <memory>
#include <string>

#include <SQLiteCpp/Database.h>

#include "store/sql.hpp"

namespace plotq {
class Settings;
}

namespace plotq::store {
namespace detail {
class Conn;
}

// A cluster node's write fence (issue 37): while epoch > 0, every write transaction on PostgreSQL
// first runs plotq_fence(node, epoch), which fails the transaction (StoreError `fenced`) unless
// the node's row is live with that epoch and an unexpired lease. Shared by all of a node's
// connections; the node sets the epoch when it joins and again when it rejoins.
struct WriteFence {
  std::string node;
  std::atomic<std::int64_t> epoch{0};
};

struct Options {
  bool synchronous_full = false;  // PLOTQ_DB_SYNCHRONOUS_FULL: synchronous=FULL (default NORMAL)
  int busy_timeout_ms = 5000;     // PLOTQ_DB_BUSY_TIMEOUT_MS: wait this long for another writer
  bool read_only = false;         // CLI listings: a file read-only, never created; PostgreSQL: a read-only session
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
  // PostgreSQL only (each a session setting of every connection): a statement running longer is
  // cancelled by the server (libpq 15 has no non-blocking cancel of its own), and a lock wait
  // longer than lock_timeout ends as `busy`, like SQLite's busy timeout.
  int statement_timeout_ms = 10000;  // PLOTQ_DB_STATEMENT_TIMEOUT_MS
  int lock_timeout_ms = 5000;        // PLOTQ_DB_LOCK_TIMEOUT_MS
  int connect_timeout_s = 5;         // PLOTQ_DB_CONNECT_TIMEOUT_S (unless the conninfo sets one)
  // PLOTQ_DB_POOL_SIZE: plotqd's connections (one worker thread each) for store calls off the
  // event loop, plus one for the turn events, which are written in order.
  int pool_size = 3;
  // Set by a cluster node (not a setting): see WriteFence.
  std::shared_ptr<WriteFence> fence;
  // Set by a cluster node (not a setting): PostgreSQL ends a session idle inside a transaction
  // this long, ms (0: six statement timeouts). A node cut off mid-transaction (a partition, a
  // SIGSTOP) holds its node's lock (plotq_fence) until then, and the rescue of its work
  // waits for that: the lease bounds it, as the rescue's promise needs.
  int idle_in_transaction_ms = 0;
  // PLOTQ_DB_PROBE_MS: plotqd on PostgreSQL asks the store how it is this often (/healthz, /readyz
  // read the last answer; a probe still out after one interval counts as unreachable).
  int probe_ms = 1000;
  // PLOTQ_DB_OUTAGE_WAIT_MS: a finished job's ledger rows and kept answer wait this long for a
  // PostgreSQL that went away (a restart), so that its answer goes out once the store has it.
  int outage_wait_ms = 15000;
  // How long answers, ledger rows, events, datasets and sweeps are kept: store/retention.hpp.
};

// Registers every Options field as its PLOTQ_DB_* setting (db.cpp: name, bound, reason).
void register_settings(Settings& s, Options& o);
// The registration loaded alone from the environment; throws plotq::ConfigError when malformed.
Options options_from_env();

class Db {
 public:
  // `target` is a SQLite file path (the default engine) or a PostgreSQL URI
  // (`postgresql://...`) / libpq conninfo (`host=/run/pg dbname=plotq`): store/target.hpp.
  // SQLite: creates the parent directory (mode 0711) and the file (mode 0600: sandboxed uids must
  // never read it; an existing file, -wal or -shm with looser modes is tightened). Refuses symlinks
  // and non-regular files. Sets WAL, synchronous NORMAL|FULL, foreign_keys ON, busy_timeout,
  // cache_size. PostgreSQL: connects (libpq; the conninfo's password, PGPASSFILE and sslmode pass
  // through) and sets the session's statement_timeout, lock_timeout and UTC.
  // Throws StoreError: db_open, db_missing (read_only and no file), unreachable (PostgreSQL).
  static std::unique_ptr<Db> open(const std::string& target, Options options = {});
  ~Db();

  Engine engine() const { return engine_; }
  // SQLite: the file's path. PostgreSQL: the target without its password (safe for messages).
  const std::string& path() const { return path_; }
  const Options& options() const { return options_; }

  // The SQLite connection (checkpoints, pragmas). Throws StoreError invalid on PostgreSQL.
  SQLite::Database& sql();
  detail::Conn& conn() { return *conn_; }

  // Statements without parameters (pragmas, DDL), several separated by `;`.
  void exec(std::string_view sql);
  bool in_transaction();
  bool table_exists(std::string_view name);

 private:
  Db() = default;
  Engine engine_ = Engine::sqlite;
  std::string path_;
  Options options_;
  std::unique_ptr<SQLite::Database> sqlite_;  // SQLite only; outlives conn_'s statements
  std::unique_ptr<detail::Conn> conn_;
};

}  // namespace plotq::store
