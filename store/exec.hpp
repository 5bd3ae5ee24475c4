// Store work for the event loop: the loop never waits for a database round trip (issue 32).
//
// Every store call plotqd makes while serving goes through Exec::run(what, work, done) (app.store;
// runs/ takes it for the rows a job books when it ends):
// - SQLite (the default): work runs at once on the loop's one writer connection, and done right
//   after it, before run() returns: a few local page writes, exactly as plotqd has always done.
// - PostgreSQL: work runs on a worker thread that owns its own connection (a small pool), and done
//   is posted back to the loop with the result. Work in the ordered lane (Lane::events: the turn
//   events) runs one job at a time in submission order on a worker of its own.
// work gets the worker's Db and must not touch loop state; done runs on the loop and must check
// that what it continues still exists (a turn may have ended meanwhile).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "store/error.hpp"

namespace plotq::store {
class Db;
struct Options;
}  // namespace plotq::store

namespace boost::asio {
class io_context;
}
namespace plotq::store {

// What a store call gave back on the loop: its value, or the StoreError code it failed with.
template <class T>
struct Stored {
  std::optional<T> value;
  std::string code;  // "" when ok; a StoreError code ("busy", "unreachable", ...) or "internal"
  bool ok() const { return code.empty(); }
};
template <>
struct Stored<void> {
  std::string code;
  bool ok() const { return code.empty(); }
};

// any: the pool's workers, in any order. events: one worker, in submission order (the turn events).
enum class Lane { any, events };

class Exec {
 public:
  // SQLite: runs on `loop_db`. PostgreSQL: `workers` threads (plus one for the ordered lane), each
  // connecting to `target` with `options` when it first needs to (and again after a loss).
  Exec(boost::asio::io_context& loop, Db& loop_db, std::string target, const Options& options,
            int workers);
  ~Exec();  // finishes the queued work, joins the workers; no done runs after the loop stops
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;

  bool remote() const { return remote_; }

  // keep_trying: on PostgreSQL, work that failed because the server was out of reach is run again
  // (on a fresh connection, with a backoff) until it succeeds or this much time has passed; for the
  // rows a finished job books, so that its answer goes out once the store has it (a server that
  // restarts is back within seconds). The work must be safe to run again after a failure.
  template <class Work, class Done>
  void run(const char* what, Work work, Done done, Lane lane = Lane::any,
           std::chrono::milliseconds keep_trying = std::chrono::milliseconds(0)) {
    using T = std::invoke_result_t<Work, Db&>;
    auto result = std::make_shared<Stored<T>>();
    submit(
        what,
        [result, work = std::move(work)](Db& db) mutable {
          if constexpr (std::is_void_v<T>) work(db);
          else result->value.emplace(work(db));
        },
        [result](std::string code) { result->code = std::move(code); },
        [result, done = std::move(done)]() mutable { done(std::move(*result)); }, lane, keep_trying);
  }

  // PLOTQ_DB_OUTAGE_WAIT_MS: how long a finished job's rows wait for a PostgreSQL that went away.
  std::chrono::milliseconds outage_wait() const { return outage_wait_; }

  // Jobs queued or running off the loop (0 on SQLite): the drain waits for them (server/main.cpp).
  std::size_t pending() const;

 private:
  struct Pool;
  void submit(const char* what, std::function<void(Db&)> work, std::function<void(std::string)> failed,
              std::function<void()> done, Lane lane, std::chrono::milliseconds keep_trying);
  Db& loop_db_;
  bool remote_;
  std::chrono::milliseconds outage_wait_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace plotq::store
