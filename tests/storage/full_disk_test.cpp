// The store on a small file system that fills up (issue 16, storage faults): a tmpfs of a few MiB
// made by the test. Writes are refused with 503 storage_full (an id-less error{storage_full} on a
// stream), nothing half-written appears, reads keep answering, and plotqd takes writes again by
// itself once space is free, ending in the store the turns it could not end.
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <SQLiteCpp/Database.h>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "store/integrity.hpp"
#include "tests/storage/damage.hpp"
#include "tests/support/skip.hpp"
#include "tests/turns/turn_client.hpp"

using namespace turns_test;

namespace {

// Writes a file until the file system refuses (ENOSPC); returns the bytes written.
std::uint64_t fill(const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "wb");
  REQUIRE(f);
  std::string chunk(16 * 1024, 'f');
  std::uint64_t n = 0;
  while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size() && std::fflush(f) == 0) n += chunk.size();
  std::fclose(f);
  return n;
}

// A paste of about 150 KB: 2 columns, distinct rows (so that it does not compress into nothing).
std::string big_paste(int salt) {
  std::string t = "label,value\n";
  for (int i = 0; t.size() < 150'000; ++i) t += "row-" + std::to_string(salt) + "-" + std::to_string(i) + "," + std::to_string(i * 7 + salt) + "\n";
  return t;
}

std::string detail(const HttpResponse& r) { return r.json().value("detail", std::string("?")); }

}  // namespace

TEST_CASE("full disk: writes are refused with storage_full and plotqd recovers by itself") {
  plotq::test::TempDir dir;
  plotq::test::damage::SmallFs fs(dir.path(), "fs", "6m");
  if (fs.empty()) return skip_test("needs root and a tmpfs mount (the store's small file system)");
  const std::string db = fs.path + "/plotq.db";
  Server s({{"PLOTQ_DB", db}, {"PLOTQ_DB_CHECKPOINT_INTERVAL_MS", "200"}});
  auto ann = Server::as("ann");

  // Before: a session with a dataset and a finished plain turn.
  std::string sid = s.session("ann");
  auto first = s.post("/v1/sessions/" + sid + "/datasets", json{{"text", "a,b\n1,2\n3,4\n"}}.dump(), ann);
  REQUIRE(first.status == 201);
  auto t1 = s.turn("ann", sid, plain("hello"));
  auto before_events = until_done(*t1, 10s);
  REQUIRE(names(before_events) == std::vector<std::string>{"ready", "message", "done"});
  std::string turn1 = before_events[0].data["turn"];

  // A data turn whose job runs while the file system fills: its start is stored, its end is not.
  const std::string slow = "import time\nimport pandas as pd\nt0 = time.time()\nwhile time.time() - t0 < 4:\n"
                           "    pass\ndf = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n";
  const std::string bob_sid = s.session("bob");
  auto cut = s.turn("bob", bob_sid, data(slow));
  REQUIRE(cut->head().status == 200);
  std::vector<Event> cut_events;
  REQUIRE(wait_for(*cut, "status", 20s, &cut_events));
  const std::string cut_turn = cut_events.front().data["turn"];

  // Fill the file system, then paste until the store's -wal cannot grow any more.
  const std::string filler = fs.path + "/filler";
  REQUIRE(fill(filler) > 0);
  int accepted = 0;
  std::optional<HttpResponse> refused;
  for (int i = 0; i < 60 && !refused; ++i) {
    auto r = s.post("/v1/sessions/" + sid + "/datasets", json{{"text", big_paste(i)}}.dump(), ann);
    if (r.status == 201) ++accepted;
    else refused = r;
  }
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(detail(*refused) == "storage_full");
  auto new_session = s.post("/v1/sessions", "", ann);
  CHECK(new_session.status == 503);
  CHECK(detail(new_session) == "storage_full");
  auto refused_turn = s.post("/v1/sessions/" + sid + "/messages", plain("still there?").dump(), ann);
  CHECK(refused_turn.status == 503);
  CHECK(detail(refused_turn) == "storage_full");

  // The running turn's next events cannot be stored: its stream gets the reason, without an id
  // (it is not stored), and ends.
  auto rest = until_done(*cut, 30s);
  REQUIRE_FALSE(rest.empty());
  CHECK(rest.back().name == "error");
  CHECK(rest.back().id == -1);
  CHECK(rest.back().data["code"] == "storage_full");
  CHECK(cut->ended());

  // Reads still answer, with what was stored before.
  auto listed = s.get("/v1/sessions/" + sid + "/datasets", ann);
  REQUIRE(listed.status == 200);
  auto versions = listed.json()["versions"];
  CHECK(versions.size() == std::size_t(1 + accepted));
  auto v1 = s.get("/v1/sessions/" + sid + "/datasets/1", ann);
  CHECK(v1.status == 200);
  CHECK(v1.json()["rows"] == 2);
  CHECK(s.get("/v1/status", ann).status == 200);
  CHECK(s.get("/healthz", {}).status == 200);
  {
    SseStream again(s.port(), "GET", "/v1/sessions/" + sid + "/turns/" + turn1 + "/events", {}, ann);
    auto evs = until_done(again, 10s);
    REQUIRE(evs.size() == before_events.size());
    for (std::size_t i = 0; i < evs.size(); ++i) CHECK(evs[i].data == before_events[i].data);
  }

  // Space again: the same writes succeed without a restart.
  std::filesystem::remove(filler);
  std::optional<HttpResponse> ok;
  for (int i = 0; i < 50 && !ok; ++i) {
    auto r = s.post("/v1/sessions/" + sid + "/datasets", json{{"text", big_paste(1000)}}.dump(), ann);
    if (r.status == 201) ok = r;
    else std::this_thread::sleep_for(Ms(200));
  }
  REQUIRE(ok);
  CHECK(ok->json()["version"] == 2 + accepted);  // contiguous: the refused paste left no version
  CHECK(s.post("/v1/sessions", "", ann).status == 201);
  auto t2 = s.turn("ann", sid, plain("hello again"));
  CHECK(names(until_done(*t2, 10s)) == std::vector<std::string>{"ready", "message", "done"});
  {
    // The turn the full store cut short is ended in the store once it takes writes: a resume
    // from its last stored event gets error{storage_full} and done.
    std::vector<Event> evs;
    for (int i = 0; i < 40; ++i) {
      SseStream resume(s.port(), "GET", "/v1/sessions/" + bob_sid + "/turns/" + cut_turn + "/events",
                       {}, {{"X-Plotq-User", "bob"}, {"Last-Event-ID", std::to_string(cut_events.back().id)}});
      evs = until_done(resume, 3s);
      if (!evs.empty() && evs.back().name == "done") break;
      std::this_thread::sleep_for(Ms(250));
    }
    REQUIRE(evs.size() >= 2);
    CHECK(evs[evs.size() - 2].name == "error");
    CHECK(evs[evs.size() - 2].data["code"] == "storage_full");
    CHECK(evs.back().data["state"] == "error");
  }

  // Every listed version has its rows; the file is whole.
  // The list is kept in a variable: a range-for over a temporary's member reads freed memory
  // (ASan found it here).
  const nlohmann::json all_versions = s.get("/v1/sessions/" + sid + "/datasets", ann).json();
  for (const auto& v : all_versions["versions"]) {
    auto got = s.get("/v1/sessions/" + sid + "/datasets/" + std::to_string(v["version"].get<int>()), ann);
    REQUIRE(got.status == 200);
    CHECK(got.json()["rows"] == v["rows"]);
  }
  s.d.signal(SIGTERM);
  REQUIRE(s.d.wait_exit(20s) == 0);
  auto report = plotq::store::check_store_file(db, plotq::store::CheckDepth::full);
  INFO(plotq::store::describe(report));
  CHECK(report.ok());
}
