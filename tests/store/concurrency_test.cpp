// Concurrent quota bookings (several processes, several threads, each with its own connection)
// never exceed the cap, and concurrent dataset versions never share a number: on SQLite (one file,
// BEGIN IMMEDIATE) and on PostgreSQL (one schema, the store's advisory write lock), the same test.
#include <catch2/catch.hpp>

#include <atomic>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

#include "store/datasets.hpp"
#include "store/quotas.hpp"
#include "store/sessions.hpp"
#include "store/turns.hpp"
#include "tests/store/engines.hpp"

using namespace plotq::store;
using plotq::store::test::in_children;
using plotq::store::test::kNow;
using plotq::store::test::OnPostgres;
using plotq::store::test::OnSqlite;
using plotq::store::test::StoreUnderTest;

namespace {

Options patient() {
  Options o;
  o.busy_timeout_ms = 30000;  // contention on 2 cores: wait rather than fail
  o.lock_timeout_ms = 30000;  // the same on PostgreSQL
  return o;
}

}  // namespace

TEMPLATE_TEST_CASE("concurrency: bookings from several processes never exceed the day cap", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const std::string path = st.target();
  { st.migrated(); }
  constexpr int kProcs = 6, kTries = 20, kCap = 50;  // 120 attempts for 50 places
  std::vector<pid_t> pids;
  std::vector<int> out_pipes;
  for (int p = 0; p < kProcs; ++p) {
    int fd[2];
    REQUIRE(::pipe(fd) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(fd[0]);
      int booked = 0, errors = 0;
      try {
        auto db = Db::open(path, patient());
        for (int i = 0; i < kTries; ++i) {
          try {
            if (quotas::book(*db, "alice", Counter::data_runs, kNow, kCap, std::nullopt).booked()) ++booked;
          } catch (const StoreError&) {
            ++errors;
          }
        }
      } catch (...) {
        errors = 1000;
      }
      int msg[2] = {booked, errors};
      (void)!::write(fd[1], msg, sizeof msg);
      ::_exit(0);
    }
    ::close(fd[1]);
    pids.push_back(pid);
    out_pipes.push_back(fd[0]);
  }
  int total_booked = 0, total_errors = 0;
  for (int p = 0; p < kProcs; ++p) {
    int msg[2] = {0, 1000};
    REQUIRE(::read(out_pipes[p], msg, sizeof msg) == sizeof msg);
    ::close(out_pipes[p]);
    int status;
    ::waitpid(pids[p], &status, 0);
    total_booked += msg[0];
    total_errors += msg[1];
  }
  CHECK(total_errors == 0);
  CHECK(total_booked == kCap);  // exactly the cap: none lost, none extra
  auto db = Db::open(path);
  CHECK(quotas::counts(*db, "alice", Counter::data_runs, kNow).day == kCap);
}

TEMPLATE_TEST_CASE("concurrency: bookings from several threads never exceed the minute cap", "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const std::string path = st.target();
  { st.migrated(); }
  constexpr int kThreads = 6, kTries = 15, kCap = 40;
  std::atomic<int> booked{0}, refused_minute{0}, errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&] {
      try {
        auto db = Db::open(path, patient());  // one connection per thread
        for (int k = 0; k < kTries; ++k) {
          Booking b = quotas::book(*db, "bob", Counter::messages, kNow, 1000, kCap);
          if (b.booked()) ++booked;
          else if (b.verdict == BookVerdict::minute_limit) ++refused_minute;
        }
      } catch (...) {
        ++errors;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(errors == 0);
  CHECK(booked == kCap);
  CHECK(refused_minute == kThreads * kTries - kCap);
  auto db = Db::open(path);
  auto c = quotas::counts(*db, "bob", Counter::messages, kNow);
  CHECK(c.minute == kCap);
  CHECK(c.day == kCap);
}

TEMPLATE_TEST_CASE("concurrency: dataset versions added from several processes are 1..N without gaps", "[engines]",
                   OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const std::string path = st.target();
  {
    auto db = st.migrated();
    sessions::create(*db, "s", "alice", kNow);
  }
  constexpr int kProcs = 4, kEach = 10;
  // Each child's exit code: how many versions it added.
  auto added = in_children(kProcs, [&](int p) {
    int ok = 0;
    auto db = Db::open(path, patient());
    NewDatasetVersion v;
    v.session_id = "s";
    v.csv = "p\n" + std::to_string(p) + "\n";
    v.rows = 1;
    v.cols = 1;
    for (int i = 0; i < kEach; ++i) {
      datasets::add_next_version(*db, v, kNow);
      ++ok;
    }
    return ok;
  });
  const int total = std::accumulate(added.begin(), added.end(), 0);
  CHECK(total == kProcs * kEach);
  auto db = Db::open(path);
  auto list = datasets::list(*db, "s");
  REQUIRE(list.size() == size_t(kProcs * kEach));
  for (size_t i = 0; i < list.size(); ++i) CHECK(list[i].version == std::int64_t(i + 1));
}

TEMPLATE_TEST_CASE("concurrency: events appended to one turn from several processes get seq 1..N without gaps",
                   "[engines]", OnSqlite, OnPostgres) {
  StoreUnderTest<TestType> st;
  const std::string path = st.target();
  {
    auto db = st.migrated();
    sessions::create(*db, "s", "alice", kNow);
    turns::create(*db, {"t", "s", "alice", 1, TurnAction::none}, kNow);
  }
  constexpr int kProcs = 4, kEach = 25;
  // Each child's exit code: how many events it appended.
  auto appended = in_children(kProcs, [&](int p) {
    int ok = 0;
    auto db = Db::open(path, patient());
    for (int i = 0; i < kEach; ++i)
      if (turns::append_event(*db, "t", "status", "{\"p\":" + std::to_string(p) + "}", kNow) > 0) ++ok;
    return ok;
  });
  const int total = std::accumulate(appended.begin(), appended.end(), 0);
  CHECK(total == kProcs * kEach);
  auto db = Db::open(path);
  auto evs = turns::events_after(*db, "t", 0, 1000);
  REQUIRE(evs.size() == size_t(kProcs * kEach));
  for (size_t i = 0; i < evs.size(); ++i) CHECK(evs[i].seq == std::int64_t(i + 1));
}
