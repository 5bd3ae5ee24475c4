#include "store/db.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/settings.hpp"
#include "store/error.hpp"
#include "store/pg_driver.hpp"
#include "store/sqlite_driver.hpp"
#include "store/target.hpp"

namespace plotq::store {
namespace {

constexpr mode_t kFileMode = 0600;
constexpr mode_t kDirMode = 0711;

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw StoreError("db_open", what + " " + path + ": " + std::strerror(err));
}

// mkdir -p; directories we create get mode 0711 (others may traverse, not list).
void make_parents(const std::filesystem::path& dir) {
  if (dir.empty()) return;
  std::filesystem::path cur;
  for (const auto& part : dir) {
    cur /= part;
    if (::mkdir(cur.c_str(), kDirMode) == 0) {
      if (::chmod(cur.c_str(), kDirMode) != 0) fail("cannot chmod", cur, errno);
    } else if (errno != EEXIST) {
      fail("cannot create directory", cur, errno);
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) fail("cannot stat", dir, errno);
  if (!S_ISDIR(st.st_mode)) throw StoreError("db_open", dir.string() + " is not a directory");
}

// Opens (creating when asked) without following a symlink, checks it is a regular file and makes
// its mode 0600. Returns false when the file does not exist and create is false.
bool secure_file(const std::string& path, bool create) {
  int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags, kFileMode);
  if (fd < 0) {
    if (errno == ENOENT && !create) return false;
    if (errno == ELOOP) throw StoreError("db_open", path + " is a symlink; refusing to open it");
    fail("cannot open", path, errno);
  }
  struct stat st;
  int err = 0;
  if (::fstat(fd, &st) != 0) {
    err = errno;
  } else if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw StoreError("db_open", path + " is not a regular file");
  } else if ((st.st_mode & 07777) != kFileMode && ::fchmod(fd, kFileMode) != 0) {
    err = errno;
  }
  ::close(fd);
  if (err) fail("cannot secure", path, err);
  return true;
}

int open_flags(const std::string& path, const Options& o) {
  if (path.empty()) throw StoreError("invalid", "empty database path");
  if (o.read_only) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) throw StoreError("db_missing", "no database at " + path);
      fail("cannot stat", path, errno);
    }
    if (!S_ISREG(st.st_mode)) throw StoreError("db_open", path + " is not a regular file");
    return SQLite::OPEN_READONLY | SQLite::OPEN_NOFOLLOW;
  }
  make_parents(std::filesystem::path(path).parent_path());
  secure_file(path, true);
  secure_file(path + "-wal", false);
  secure_file(path + "-shm", false);
  return SQLite::OPEN_READWRITE | SQLite::OPEN_NOFOLLOW;
}

// PRAGMA journal_mode=WAL, waiting up to busy_timeout_ms like every other statement: switching a
// new file to WAL takes its exclusive lock without SQLite's busy handler, so processes opening one
// fresh file at once (plotqd and plotq migrate) could otherwise fail `busy` at once.
std::string wal_mode(SQLite::Database& s, int busy_timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  for (;;) {
    try {
      return s.execAndGet("PRAGMA journal_mode=WAL").getString();
    } catch (const SQLite::Exception& e) {
      if ((e.getErrorCode() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

void register_settings(Settings& s, Options& o) {
  s.add("PLOTQ_DB_SYNCHRONOUS_FULL", &o.synchronous_full, "synchronous=FULL instead of NORMAL (WAL)");
  s.add("PLOTQ_DB_BUSY_TIMEOUT_MS", &o.busy_timeout_ms, "milliseconds to wait for another writer (the plotq CLI)")
      .range(0, 600'000);
  s.add("PLOTQ_DB_CACHE_KIB", &o.cache_kib, "SQLite page cache of plotqd's connection, KiB (0: SQLite's 2000)")
      .range(0, 4 * 1024 * 1024);
  s.add("PLOTQ_DB_CHECKPOINT_INTERVAL_MS", &o.checkpoint_interval_ms,
        "plotqd checkpoints the WAL on its writer connection this often, ms (0: inside the writer's commits)")
      .range(0, 3'600'000);
  s.add("PLOTQ_DB_WAL_KEEP_KIB", &o.wal_keep_kib,
        "KiB the WAL file is cut back to when it starts over (journal_size_limit)")
      .range(0, 4 * 1024 * 1024);
  s.add("PLOTQ_DB_START_CHECK", &o.start_check,
        "plotqd checks the store (quick_check, schema) before serving it; off: the file headers only");
  s.add("PLOTQ_DB_STATEMENT_TIMEOUT_MS", &o.statement_timeout_ms,
        "PostgreSQL: the server cancels a statement running longer, ms (then: busy)")
      .range(100, 600'000);
  s.add("PLOTQ_DB_LOCK_TIMEOUT_MS", &o.lock_timeout_ms,
        "PostgreSQL: the longest wait for a lock (the store's write lock included), ms (then: busy)")
      .range(0, 600'000);
  s.add("PLOTQ_DB_POOL_SIZE", &o.pool_size,
        "PostgreSQL: plotqd's connections for store calls off the event loop (plus one for turn events)")
      .range(1, 16);
  s.add("PLOTQ_DB_PROBE_MS", &o.probe_ms,
        "PostgreSQL: plotqd probes the store this often for /healthz and /readyz, ms")
      .range(100, 60'000);
  s.add("PLOTQ_DB_OUTAGE_WAIT_MS", &o.outage_wait_ms,
        "PostgreSQL: a finished job's rows wait this long for a server that went away before its answer goes out without them, ms")
      .range(0, 600'000);
  s.add("PLOTQ_DB_CONNECT_TIMEOUT_S", &o.connect_timeout_s,
        "PostgreSQL: the longest wait for a connection, s, unless the conninfo sets connect_timeout")
      .range(1, 600);
}

Options options_from_env() { return load_from_env<Options>(register_settings); }

Db::~Db() { conn_.reset(); }  // statements before the connection they belong to

SQLite::Database& Db::sql() {
  if (!sqlite_) throw StoreError("invalid", "a SQLite-only operation on a PostgreSQL store");
  return *sqlite_;
}

void Db::exec(std::string_view sql) { conn_->exec_script(sql); }
bool Db::in_transaction() { return conn_->in_transaction(); }
bool Db::table_exists(std::string_view name) { return conn_->table_exists(name); }

std::unique_ptr<Db> Db::open(const std::string& target, Options options) {
  std::unique_ptr<Db> db(new Db());
  db->options_ = options;
  db->engine_ = engine_of(target);
  if (db->engine_ == Engine::postgresql) {
    db->path_ = redacted(target);
    db->conn_ = detail::pg_connect(target, options);
    return db;
  }
  const std::string& path = target;
  int flags = open_flags(path, options);
  db->path_ = path;
  return guarded("open " + path, [&] {
    db->sqlite_ = std::make_unique<SQLite::Database>(path, flags, options.busy_timeout_ms);
    SQLite::Database& s = *db->sqlite_;
    if (!options.read_only) {
      std::string mode = wal_mode(s, options.busy_timeout_ms);
      if (mode != "wal") throw StoreError("db_open", path + ": cannot switch to WAL (" + mode + ")");
      s.exec(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
      s.exec("PRAGMA journal_size_limit=" + std::to_string(std::int64_t(options.wal_keep_kib) * 1024));
    }
    if (options.cache_kib > 0) s.exec("PRAGMA cache_size=-" + std::to_string(options.cache_kib));
    s.exec("PRAGMA foreign_keys=ON");
    if (s.execAndGet("PRAGMA foreign_keys").getInt() != 1)
      throw StoreError("db_open", path + ": this SQLite cannot enforce foreign keys");
    db->conn_ = detail::sqlite_conn(s.getHandle());
    return std::move(db);
  });
}

}  // namespace plotq::store
