#include "store/integrity.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

namespace plotq::store {
namespace {

constexpr std::string_view kMagic{"SQLite format 3\0", 16};
constexpr std::size_t kDbHeader = 100;
constexpr std::size_t kWalHeader = 32;
constexpr std::size_t kWalFrameHeader = 24;
constexpr std::uint32_t kWalMagicLe = 0x377f0682;  // checksums in little-endian words
constexpr std::uint32_t kWalMagicBe = 0x377f0683;  // checksums in big-endian words
constexpr std::uint32_t kWalVersion = 3007000;
constexpr int kDetailLines = 5;  // damage lines quoted in a corrupt problem

std::uint32_t be32(std::string_view b, std::size_t at) {
  auto u = [&](std::size_t i) { return std::uint32_t(static_cast<unsigned char>(b[at + i])); };
  return u(0) << 24 | u(1) << 16 | u(2) << 8 | u(3);
}

std::uint32_t le32(std::string_view b, std::size_t at) {
  auto u = [&](std::size_t i) { return std::uint32_t(static_cast<unsigned char>(b[at + i])); };
  return u(3) << 24 | u(2) << 16 | u(1) << 8 | u(0);
}

// SQLite's page size field: a power of two from 512 to 32768, or 1 for 65536; 0 when invalid.
std::uint32_t page_size_of(std::uint32_t field) {
  if (field == 1) return 65536;
  if (field < 512 || field > 32768 || (field & (field - 1)) != 0) return 0;
  return field;
}

// The WAL header's checksum over its first 24 bytes (sqlite.org/fileformat2.html, "Checksum
// Algorithm"): a -wal whose stored checksum differs is ignored by SQLite, with all its commits.
bool wal_checksum_ok(std::string_view h) {
  bool big = be32(h, 0) == kWalMagicBe;
  std::uint32_t s0 = 0, s1 = 0;
  for (std::size_t i = 0; i < 24; i += 8) {
    std::uint32_t x0 = big ? be32(h, i) : le32(h, i);
    std::uint32_t x1 = big ? be32(h, i + 4) : le32(h, i + 4);
    s0 += x0 + s1;
    s1 += x1 + s0;
  }
  return s0 == be32(h, 24) && s1 == be32(h, 28);
}

// Reads up to n bytes from the start of path without following a symlink, from a regular file.
// nullopt when there is no such file; throws the problem when it cannot be read.
struct Head {
  std::string bytes;
  std::uint64_t size = 0;
};
std::optional<Head> read_head(const std::string& path, std::size_t n) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;  // no file: the open says why it cannot make one
    throw Problem{"unreadable", path + (errno == ELOOP ? " is a symlink" : std::string(": ") + std::strerror(errno))};
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Problem{"unreadable", path + " is not a regular file"};
  }
  Head h;
  h.size = std::uint64_t(st.st_size);
  h.bytes.resize(n);
  ssize_t got = ::pread(fd, h.bytes.data(), n, 0);
  int err = errno;
  ::close(fd);
  if (got < 0) throw Problem{"unreadable", path + ": " + std::strerror(err)};
  h.bytes.resize(std::size_t(got));
  return h;
}

std::string first_lines(SQLite::Statement& q, int* count) {
  std::string out;
  *count = 0;
  while (q.executeStep()) {
    std::string line = q.getColumn(0).getString();
    if (line == "ok") continue;
    if ((*count)++ < kDetailLines) out += (out.empty() ? "" : "; ") + line;
  }
  return out;
}

void sqlite_stage(const std::string& path, CheckDepth depth, std::uint32_t raw_app_id, bool wal_frames,
                  IntegrityReport& r) {
  try {
    SQLite::Database db(path, SQLite::OPEN_READONLY | SQLite::OPEN_NOFOLLOW);
    int count = 0;
    SQLite::Statement check(db, depth == CheckDepth::full ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(100)");
    std::string damage = first_lines(check, &count);
    if (count > 0)
      r.problems.push_back({"corrupt", std::to_string(count) + (count == 1 ? " finding" : " findings") +
                                           (count >= 100 ? " (or more)" : "") + ": " + damage});
    if (depth == CheckDepth::full) {
      SQLite::Statement fk(db, "PRAGMA foreign_key_check");
      int rows = 0;
      std::string first;
      while (fk.executeStep())
        if (rows++ == 0) first = fk.getColumn(0).getString() + " rowid " + fk.getColumn(1).getString() + " -> " +
                                 fk.getColumn(2).getString();
      if (rows > 0)
        r.problems.push_back({"foreign_keys", std::to_string(rows) + " rows without their parent row, first: " + first});
    }
    auto app_id = std::uint32_t(db.execAndGet("PRAGMA application_id").getInt64());
    // A -wal may carry the id a migration just set (0 -> plotq's); any other change is page 1 of
    // another database arriving through the -wal.
    if (wal_frames && app_id != raw_app_id && !(raw_app_id == 0 && app_id == kApplicationId)) {
      r.problems.push_back({"wal_foreign", "the -wal turns the database's application id " +
                                               std::to_string(raw_app_id) + " into " + std::to_string(app_id) +
                                               ": it belongs to another database"});
    } else if (app_id != 0 && app_id != kApplicationId) {
      r.problems.push_back({"not_plotq", "application id " + std::to_string(app_id) + " is not plotq's"});
    } else {
      int tables = db.execAndGet("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").getInt();
      if (tables > 0 && !db.tableExists("schema_migrations"))
        r.problems.push_back({"not_plotq", std::to_string(tables) + " tables but no schema_migrations"});
    }
  } catch (const SQLite::Exception& e) {
    int code = e.getErrorCode() & 0xff;
    r.problems.push_back({code == SQLITE_NOTADB ? "not_sqlite" : "corrupt", std::string("SQLite: ") + e.what()});
  }
}

}  // namespace

std::vector<Problem> check_headers(std::string_view db, std::uint64_t db_size,
                                   std::optional<std::string_view> wal, std::uint64_t wal_size) {
  std::vector<Problem> out;
  if (db_size == 0) return out;  // an empty file is an empty database (plotqd writes its schema)
  if (db.size() < kDbHeader || db.substr(0, kMagic.size()) != kMagic) {
    out.push_back({"not_sqlite", db_size < kDbHeader ? "the file ends inside the 100-byte header"
                                                     : "the first 16 bytes are not \"SQLite format 3\""});
    return out;
  }
  std::uint32_t page = page_size_of(std::uint32_t(static_cast<unsigned char>(db[16])) << 8 |
                                    static_cast<unsigned char>(db[17]));
  if (page == 0) {
    out.push_back({"not_sqlite", "the header's page size is not a power of two from 512 to 65536"});
    return out;
  }
  std::uint32_t wal_page = 0;
  std::uint64_t frames = 0;
  if (wal && wal_size >= kWalHeader) {
    std::uint32_t magic = be32(*wal, 0);
    if ((magic != kWalMagicLe && magic != kWalMagicBe) || be32(*wal, 4) != kWalVersion || !wal_checksum_ok(*wal)) {
      out.push_back({"wal_damaged", "the -wal's header is not a valid WAL header: SQLite would discard the " +
                                        std::to_string(wal_size) + " bytes of commits in it"});
    } else {
      wal_page = page_size_of(be32(*wal, 8) == 65536 ? 1 : be32(*wal, 8));
      if (wal_page != page)
        out.push_back({"wal_foreign", "the -wal's page size is " + std::to_string(be32(*wal, 8)) +
                                          ", the database's " + std::to_string(page) + ": it belongs to another database"});
      else
        frames = (wal_size - kWalHeader) / (kWalFrameHeader + page);
    }
  }
  if (db_size % page != 0)
    out.push_back({"truncated", "the file's " + std::to_string(db_size) + " bytes end inside a " +
                                    std::to_string(page) + "-byte page"});
  // The header's page count is valid when its version-valid-for number equals the change counter.
  // A checkpoint cut short can leave page 1 ahead of the file's end; the -wal's frames then hold
  // the rest, so only a store without frames is short.
  std::uint64_t pages = be32(db, 28);
  if (be32(db, 92) == be32(db, 24) && pages > 0 && frames == 0 && db_size / page < pages)
    out.push_back({"truncated", "the header records " + std::to_string(pages) + " pages, the file holds " +
                                    std::to_string(db_size / page)});
  return out;
}

IntegrityReport check_store_file(const std::string& path, CheckDepth depth) {
  IntegrityReport r;
  r.path = path;
  std::optional<Head> db, wal;
  try {
    db = read_head(path, kDbHeader);
    if (!db) return r;
    r.exists = true;
    wal = read_head(path + "-wal", kWalHeader);
  } catch (const Problem& p) {
    r.exists = true;
    r.problems.push_back(p);
    return r;
  }
  std::optional<std::string_view> wal_head;
  if (wal) wal_head = wal->bytes;
  r.problems = check_headers(db->bytes, db->size, wal_head, wal ? wal->size : 0);
  if (!r.problems.empty() || db->size == 0 || depth == CheckDepth::header) return r;
  bool wal_frames = wal && wal->size > kWalHeader;
  sqlite_stage(path, depth, be32(db->bytes, 68), wal_frames, r);
  return r;
}

std::string describe(const IntegrityReport& r) {
  std::string out;
  for (const Problem& p : r.problems) out += r.path + ": " + p.code + ": " + p.detail + "\n";
  return out;
}

}  // namespace plotq::store
