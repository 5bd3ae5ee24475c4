// A damaged store at start (issue 16, storage faults): a file cut short, garbage pages, a -wal of
// another database, a file that is not SQLite or not plotq's. Each is made from a real plotq store
// on disk; the check names the problem, and neither the check, `plotq check` nor a refused plotqd
// changes a byte of the file or its -wal.
#include <SQLiteCpp/Database.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>

#include "store/integrity.hpp"
#include "store/users.hpp"
#include "tests/storage/damage.hpp"
#include "tests/support/scratch_dir.hpp"

using namespace plotq::store;
using plotq::test::damage::codes;
using plotq::test::damage::copy_file;
using plotq::test::damage::file_bytes;
using plotq::test::damage::fingerprint;
using plotq::test::damage::make_store;
using plotq::test::damage::overwrite;

namespace {

// Another application's database in WAL mode, with its connection still open so that its -wal
// holds every commit; the -wal is copied next to `target` as target's own.
void plant_foreign_wal(const std::string& dir, const std::string& target, int page_size) {
  std::string other = dir + "/other-" + std::to_string(page_size) + ".db";
  SQLite::Database o(other, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  o.exec("PRAGMA page_size=" + std::to_string(page_size));
  o.exec("PRAGMA journal_mode=WAL");
  o.exec("PRAGMA wal_autocheckpoint=0");
  o.exec("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)");
  for (int i = 0; i < 50; ++i) o.exec("INSERT INTO notes(body) VALUES (hex(randomblob(200)))");
  copy_file(other + "-wal", target + "-wal");
}

}  // namespace

TEST_CASE("damaged store: a whole store passes both depths and the check writes nothing") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string db = make_store(t.file("plotq.db"));
  std::string before = fingerprint(db);
  for (auto depth : {CheckDepth::header, CheckDepth::quick, CheckDepth::full}) {
    auto r = check_store_file(db, depth);
    INFO(describe(r));
    CHECK(r.exists);
    CHECK(r.ok());
  }
  CHECK(fingerprint(db) == before);
  auto missing = check_store_file(t.file("none.db"), CheckDepth::full);
  CHECK_FALSE(missing.exists);
  CHECK(missing.ok());  // plotqd creates it
}

TEST_CASE("damaged store: a store copied with its -wal mid-run (a crash) is whole") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string live = make_store(t.file("live.db"));
  auto db = Db::open(live);
  db->sql().exec("PRAGMA wal_autocheckpoint=0");
  for (int i = 0; i < 300; ++i) users::ensure(*db, "late-" + std::to_string(i), 1);
  REQUIRE(std::filesystem::file_size(live + "-wal") > 32);
  std::string crashed = t.file("crashed.db");
  copy_file(live, crashed);
  copy_file(live + "-wal", crashed + "-wal");
  auto r = check_store_file(crashed, CheckDepth::full);
  INFO(describe(r));
  CHECK(r.ok());
  SQLite::Database s(crashed, SQLite::OPEN_READONLY);
  CHECK(s.execAndGet("SELECT count(*) FROM users WHERE id LIKE 'late-%'").getInt() == 300);
}

TEST_CASE("damaged store: a file cut inside a page or before its last page is truncated") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string db = make_store(t.file("plotq.db"));
  auto size = std::filesystem::file_size(db);
  REQUIRE(size >= 8 * 4096);
  std::string mid = t.file("mid.db"), whole_pages = t.file("pages.db");
  copy_file(db, mid);
  std::filesystem::resize_file(mid, size / 2 + 1000);
  copy_file(db, whole_pages);
  std::filesystem::resize_file(whole_pages, (size / 4096 / 2) * 4096);
  CHECK(codes(check_store_file(mid, CheckDepth::quick)) == std::vector<std::string>{"truncated", "truncated"});
  CHECK(codes(check_store_file(whole_pages, CheckDepth::header)) == std::vector<std::string>{"truncated"});
}

TEST_CASE("damaged store: garbage pages are corrupt at the quick depth") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string db = make_store(t.file("plotq.db"));
  std::mt19937 rng(16);
  std::string junk(3 * 4096, '\0');
  for (auto& c : junk) c = char(rng());
  overwrite(db, 4 * 4096, junk);  // pages 5-7: inside the tables, past the header
  std::string before = fingerprint(db);
  auto r = check_store_file(db, CheckDepth::quick);
  INFO(describe(r));
  CHECK(codes(r) == std::vector<std::string>{"corrupt"});
  CHECK(fingerprint(db) == before);
}

TEST_CASE("damaged store: a -wal of another database is foreign by page size or by identity") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string a = make_store(t.file("a.db")), b = make_store(t.file("b.db"));
  plant_foreign_wal(t.path.string(), a, 8192);  // another page size: seen in the headers
  plant_foreign_wal(t.path.string(), b, 4096);  // the same page size: seen by the application id
  std::string before_a = fingerprint(a), before_b = fingerprint(b);
  auto ra = check_store_file(a, CheckDepth::header);
  INFO(describe(ra));
  CHECK(codes(ra) == std::vector<std::string>{"wal_foreign"});
  auto rb = check_store_file(b, CheckDepth::quick);
  INFO(describe(rb));
  REQUIRE_FALSE(rb.ok());
  CHECK(codes(rb).back() == "wal_foreign");
  CHECK(fingerprint(a) == before_a);
  CHECK(fingerprint(b) == before_b);
}

TEST_CASE("damaged store: a -wal whose header SQLite would discard is wal_damaged") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string live = make_store(t.file("live.db"));
  auto db = Db::open(live);
  db->sql().exec("PRAGMA wal_autocheckpoint=0");
  users::ensure(*db, "kept-only-in-the-wal", 1);
  std::string crashed = t.file("crashed.db");
  copy_file(live, crashed);
  copy_file(live + "-wal", crashed + "-wal");
  overwrite(crashed + "-wal", 16, "\x01\x02\x03\x04");  // salt-1: the header checksum no longer holds
  CHECK(codes(check_store_file(crashed, CheckDepth::header)) == std::vector<std::string>{"wal_damaged"});
}

TEST_CASE("damaged store: not SQLite and not plotq are told apart") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string text = t.write("notes.db", std::string(8192, 'x'));
  CHECK(codes(check_store_file(text, CheckDepth::header)) == std::vector<std::string>{"not_sqlite"});
  std::string other = t.file("other.db");
  {
    SQLite::Database o(other, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    o.exec("CREATE TABLE notes(id INTEGER PRIMARY KEY)");
  }
  CHECK(codes(check_store_file(other, CheckDepth::quick)) == std::vector<std::string>{"not_plotq"});
  {
    SQLite::Database o(other, SQLite::OPEN_READWRITE);
    o.exec("PRAGMA application_id = 42");
  }
  CHECK(codes(check_store_file(other, CheckDepth::quick)) == std::vector<std::string>{"not_plotq"});
  std::string link = t.file("link.db");
  std::filesystem::create_symlink(make_store(t.file("real.db")), link);
  CHECK(codes(check_store_file(link, CheckDepth::header)) == std::vector<std::string>{"unreadable"});
}

TEST_CASE("damaged store: rows without their parent are found by the full check only") {
  plotq::test::ScratchDir t("plotq-damage");
  std::string db = make_store(t.file("plotq.db"));
  {
    SQLite::Database s(db, SQLite::OPEN_READWRITE);
    s.exec("PRAGMA foreign_keys=OFF");
    s.exec("INSERT INTO sessions(id, user_id, created_at) VALUES ('orphan', 'nobody', '2026-12-02T00:00:00Z')");
  }
  CHECK(check_store_file(db, CheckDepth::quick).ok());
  auto r = check_store_file(db, CheckDepth::full);
  INFO(describe(r));
  CHECK(codes(r) == std::vector<std::string>{"foreign_keys"});
}

TEST_CASE("damaged store: the header stage alone as a pure function") {
  std::string head(100, '\0');
  std::string magic("SQLite format 3\0", 16);
  head.replace(0, 16, magic);
  head[16] = 0x10;  // 4096
  CHECK(check_headers(head, 4096 * 3, std::nullopt, 0).empty());
  CHECK(check_headers("", 0, std::nullopt, 0).empty());  // an empty file is an empty database
  CHECK(codes({"x", true, check_headers(head, 4096 * 3 + 7, std::nullopt, 0)}) ==
        std::vector<std::string>{"truncated"});
  std::string bad_page = head;
  bad_page[16] = 0x03;  // 768: not a power of two
  CHECK(codes({"x", true, check_headers(bad_page, 4096, std::nullopt, 0)}) ==
        std::vector<std::string>{"not_sqlite"});
  CHECK(codes({"x", true, check_headers(head.substr(0, 40), 40, std::nullopt, 0)}) ==
        std::vector<std::string>{"not_sqlite"});
  std::string wal(32, '\0');
  CHECK(codes({"x", true, check_headers(head, 4096, std::string_view(wal), 32 + 24 + 4096)}) ==
        std::vector<std::string>{"wal_damaged"});
  CHECK(check_headers(head, 4096, std::string_view(wal), 0).empty());  // an empty -wal holds nothing
}
