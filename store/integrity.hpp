// Is this file a whole plotq store? plotqd asks before it opens the file for writing (a damaged
// file is never served and never changed: a read-write open would checkpoint a foreign -wal into
// it on close), and `plotq check` asks the same for an admin.
//
// Two stages. The header stage reads the first bytes of the file and of its -wal without SQLite
// (a -wal whose header SQLite rejects is silently discarded, its commits with it; a file cut short
// is read as if the rest were empty pages). The SQLite stage opens the file read-only: quick_check
// (or integrity_check and foreign_key_check when full), then the schema: plotq's application id
// and its migrations table. Problem codes (docs/store.md, "A damaged store"):
//   unreadable    the file (or its -wal) cannot be opened or read: a symlink, not a regular file
//   not_sqlite    the header is not SQLite's (a different file, or its first page overwritten)
//   truncated     the file ends inside a page, or before the page count its header records
//   wal_damaged   a -wal whose header is not a WAL header: SQLite would drop its commits
//   wal_foreign   a -wal of another database (its page size or the database identity it carries differ)
//   corrupt       quick_check / integrity_check found damage (the first lines are the detail)
//   foreign_keys  rows whose parent row is missing (full check only)
//   not_plotq     a SQLite file, but not a plotq store (another application id, or tables without
//                 plotq's schema_migrations)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plotq::store {

// 'pltq': set by migration 0006 in the header's application id field; 0 in older stores.
inline constexpr std::uint32_t kApplicationId = 0x706c7471;

struct Problem {
  std::string code;    // from the vocabulary above
  std::string detail;  // one line for a person: what was found, where
};

struct IntegrityReport {
  std::string path;
  bool exists = false;  // false: no file yet (plotqd creates it)
  std::vector<Problem> problems;
  bool ok() const { return problems.empty(); }
};

enum class CheckDepth {
  header,  // the header stage only: plotqd at start with PLOTQ_DB_START_CHECK=0
  quick,  // header + quick_check + schema: what plotqd runs at start (PLOTQ_DB_START_CHECK)
  full,   // header + integrity_check + foreign_key_check + schema: `plotq check`
};

// The header stage as a pure function, for tests: the first 100 bytes of the file (fewer when it
// is shorter), its size, and when a -wal exists its first 32 bytes and its size.
std::vector<Problem> check_headers(std::string_view db_head, std::uint64_t db_size,
                                   std::optional<std::string_view> wal_head, std::uint64_t wal_size);

// Both stages on the file at path. Never writes to it or its -wal (SQLite's read-only open of a
// WAL store may create an empty -wal and -shm); never throws (a failure to look is itself a problem).
IntegrityReport check_store_file(const std::string& path, CheckDepth depth);

// "PATH: code: detail" lines, one per problem.
std::string describe(const IntegrityReport& r);

}  // namespace plotq::store
