// store_commit_bench: what a turn's event batch costs the store on each engine (issue 32).
//
//   store_commit_bench [--engines sqlite,postgresql] [--pg CONNINFO] [--reps N=200] [--batches 1,10,1000]
//
// Per engine (a fresh SQLite file with plotqd's default settings; a fresh database on the
// PostgreSQL server that --pg or PLOTQ_TEST_PG names), samples interleaved engine by engine so
// both see the same machine:
// - commit of a batch: BEGIN, `batch` inserts through store::turns::EventWriter, COMMIT, exactly as
//   plotqd's EventLog stores a loop turn's events (server/turn_events.cpp), each batch for a turn
//   of its own; timed BEGIN to the end of COMMIT (what plotq_store_commit_seconds{what="turn_events"}
//   observes). SQLite is the baseline of the ratios.
// - a round trip: a prepared `SELECT 1` on the same connection (PostgreSQL: the socket's floor of
//   every statement; SQLite: a call into the library).
// - the hand-off: the same `SELECT 1` as a store call through store::Exec from an event loop thread
//   (run() on the loop to done on the loop: PostgreSQL queues it for a worker thread with its own
//   connection and posts the answer back; SQLite runs it inline), against the direct call.
// - PostgreSQL only, what one statement per batch would give: the same rows as one INSERT ...
//   SELECT FROM unnest(arrays) in the same BEGIN/COMMIT (not what plotqd does; a comparison).
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_store.hpp"
#include "bench/stats.hpp"
#include "store/db.hpp"
#include "store/exec.hpp"
#include "store/ids.hpp"
#include "store/migrate.hpp"
#include "store/sessions.hpp"
#include "store/sql.hpp"
#include "store/turn_event_writer.hpp"
#include "store/turns.hpp"
#include "store/users.hpp"

using Clock = std::chrono::steady_clock;
using plotq::bench::loadavg;
using plotq::bench::pct;
namespace store = plotq::store;

namespace {

double us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

std::vector<int> parse_ints(const std::string& list) {
  std::vector<int> out;
  std::size_t at = 0;
  while (at < list.size()) {
    std::size_t comma = list.find(',', at);
    out.push_back(std::stoi(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// One engine's store, its loop thread and its Exec, as plotqd has them.
struct Engine {
  std::string name;
  std::unique_ptr<plotq::bench::BenchStore> st;
  std::unique_ptr<store::Db> db;       // the bench's own connection (batches, direct SELECT 1)
  std::unique_ptr<store::Db> loop_db;  // Exec's loop connection (SQLite runs store calls on it)
  boost::asio::io_context loop;
  std::unique_ptr<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard;
  std::thread loop_thread;
  std::unique_ptr<store::Exec> exec;
  std::string session;
  std::map<int, std::vector<double>> commit_us;  // by batch size
  std::map<int, std::vector<double>> one_statement_us;  // PostgreSQL: the batch as one INSERT
  std::vector<double> rt_us, handoff_us;

  Engine(const std::string& e, const plotq::test::TempDir& dir, const std::string& pg) : name(e) {
    st = std::make_unique<plotq::bench::BenchStore>(e, dir, pg);
    store::Options o;  // plotqd's defaults
    db = store::Db::open(st->target(), o);
    store::migrate(*db);
    loop_db = store::Db::open(st->target(), o);
    guard = std::make_unique<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>(loop.get_executor());
    loop_thread = std::thread([this] { loop.run(); });
    exec = std::make_unique<store::Exec>(loop, *loop_db, st->target(), o, o.pool_size);
    auto now = store::now_unix();
    store::users::ensure(*db, "bench", now);
    session = store::new_id();
    store::sessions::create(*db, session, "bench", now);
  }
  ~Engine() {
    exec.reset();
    guard.reset();
    loop_thread.join();
  }

  void batch(int n) {
    std::string turn = store::new_id();
    store::turns::create(*db, {turn, session, "bench", 0, store::TurnAction::none}, store::now_unix());
    std::string now_iso = store::iso_utc(store::now_unix());
    store::turns::EventWriter writer(*db);
    auto t0 = Clock::now();
    {
      store::Tx tx(*db, "");  // as EventLog: inserts, and ends by key
      for (int i = 1; i <= n; ++i)
        writer.append(turn, i, "status", R"({"position":17,"step":"queued","waiting":1000})", now_iso);
      tx.commit();
    }
    commit_us[n].push_back(us(Clock::now() - t0));
  }

  // A text[] literal: every element quoted, " and \ escaped.
  static std::string array_literal(const std::vector<std::string>& v) {
    std::string out = "{";
    for (std::size_t i = 0; i < v.size(); ++i) {
      out += i ? ",\"" : "\"";
      for (char c : v[i]) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      out += '"';
    }
    return out + "}";
  }
  void batch_one_statement(int n) {
    std::string turn = store::new_id();
    store::turns::create(*db, {turn, session, "bench", 0, store::TurnAction::none}, store::now_unix());
    std::string now_iso = store::iso_utc(store::now_unix());
    auto t0 = Clock::now();
    {
      store::Tx tx(*db, "");
      std::vector<std::string> seqs, data;
      for (int i = 1; i <= n; ++i) {
        seqs.push_back(std::to_string(i));
        data.push_back(R"({"position":17,"step":"queued","waiting":1000})");
      }
      store::Stmt q(*db,
                    "INSERT INTO turn_events(turn_id, seq, event, data, created_at) SELECT ?, s, 'status', d, ? "
                    "FROM unnest(CAST(? AS bigint[]), CAST(? AS text[])) AS u(s, d)");
      q.bind(1, turn);
      q.bind(2, now_iso);
      q.bind(3, array_literal(seqs));
      q.bind(4, array_literal(data));
      if (q.exec() != n) throw std::runtime_error("one-statement batch: not every row stored");
      tx.commit();
    }
    one_statement_us[n].push_back(us(Clock::now() - t0));
  }

  static std::int64_t select1(store::Db& d) {
    store::Stmt q(d, "SELECT 1");
    return q.executeStep() ? q.getColumn(0).getInt64() : 0;
  }
  void round_trip() {
    auto t0 = Clock::now();
    if (select1(*db) != 1) throw std::runtime_error("SELECT 1");
    rt_us.push_back(us(Clock::now() - t0));
  }
  void handoff() {
    std::promise<double> p;
    auto f = p.get_future();
    boost::asio::post(loop, [this, &p] {
      auto t0 = Clock::now();
      exec->run("bench", [](store::Db& d) { return select1(d); },
                [&p, t0](store::Stored<std::int64_t> r) {
                  double v = us(Clock::now() - t0);
                  if (!r.ok() || *r.value != 1) return p.set_exception(std::make_exception_ptr(std::runtime_error("store call failed")));
                  p.set_value(v);
                });
    });
    handoff_us.push_back(f.get());
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string engines_arg = "sqlite,postgresql", pg;
  int reps = 200;
  std::vector<int> batches = {1, 10, 1000};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--engines" && i + 1 < argc) engines_arg = argv[++i];
    else if (a == "--pg" && i + 1 < argc) pg = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--batches" && i + 1 < argc) batches = parse_ints(argv[++i]);
    else {
      std::fprintf(stderr, "usage: store_commit_bench [--engines sqlite,postgresql] [--pg CONNINFO] [--reps N] [--batches 1,10,1000]\n");
      return 2;
    }
  }
  try {
    plotq::test::TempDir dir;
    std::vector<std::unique_ptr<Engine>> engines;
    for (const auto& e : plotq::bench::parse_engines(engines_arg)) engines.push_back(std::make_unique<Engine>(e, dir, pg));
    double load0 = loadavg();
    for (auto& e : engines)  // warm-up: statements prepared, connections open, pages cached
      for (int i = 0; i < 20; ++i) {
        for (int n : batches) {
          e->batch(std::min(n, 10));
          if (e->st->postgres()) e->batch_one_statement(std::min(n, 10));
        }
        e->round_trip();
        e->handoff();
      }
    for (auto& e : engines) {
      e->commit_us.clear();
      e->one_statement_us.clear();
      e->rt_us.clear();
      e->handoff_us.clear();
    }
    for (int r = 0; r < reps; ++r)
      for (auto& e : engines) {
        for (int n : batches) {
          e->batch(n);
          if (e->st->postgres()) e->batch_one_statement(n);
        }
        for (int k = 0; k < 5; ++k) {
          e->round_trip();
          e->handoff();
        }
      }
    std::printf("store_commit_bench: %d samples per batch size (%d round trips, hand-offs), engines interleaved; load avg %.1f -> %.1f\n",
                reps, reps * 5, load0, loadavg());
    for (auto& e : engines) {
      std::printf("  %s\n", e->name.c_str());
      for (int n : batches)
        std::printf("    commit of a %4d-event batch   p50 %9.1f us   p90 %9.1f us   p99 %9.1f us   (%.1f us per event at p50)\n", n,
                    pct(e->commit_us[n], 0.5), pct(e->commit_us[n], 0.9), pct(e->commit_us[n], 0.99),
                    pct(e->commit_us[n], 0.5) / n);
      for (int n : batches)
        if (!e->one_statement_us[n].empty())
          std::printf("    the %4d events as ONE INSERT (unnest; not plotqd's way)   p50 %9.1f us   p90 %9.1f us   p99 %9.1f us\n", n,
                      pct(e->one_statement_us[n], 0.5), pct(e->one_statement_us[n], 0.9), pct(e->one_statement_us[n], 0.99));
      std::printf("    SELECT 1, direct               p50 %9.1f us   p90 %9.1f us   p99 %9.1f us\n", pct(e->rt_us, 0.5),
                  pct(e->rt_us, 0.9), pct(e->rt_us, 0.99));
      std::printf("    SELECT 1 through Exec (loop -> %s -> loop)   p50 %9.1f us   p90 %9.1f us   p99 %9.1f us   hand-off p50 %.1f us\n",
                  e->exec->remote() ? "worker" : "inline", pct(e->handoff_us, 0.5), pct(e->handoff_us, 0.9),
                  pct(e->handoff_us, 0.99), pct(e->handoff_us, 0.5) - pct(e->rt_us, 0.5));
    }
    if (engines.size() == 2 && engines[0]->name != engines[1]->name) {
      Engine& s = engines[0]->name == "sqlite" ? *engines[0] : *engines[1];
      Engine& p = engines[0]->name == "sqlite" ? *engines[1] : *engines[0];
      std::printf("  postgresql / sqlite, commit p50:");
      for (int n : batches) std::printf("  %d events %.1fx", n, pct(p.commit_us[n], 0.5) / pct(s.commit_us[n], 0.5));
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "store_commit_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
