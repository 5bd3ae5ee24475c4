#include "store/exec.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "common/log.hpp"
#include "store/db.hpp"

namespace plotq::store {
namespace {

struct Job {
  const char* what;
  std::function<void(Db&)> work;
  std::function<void(std::string)> failed;
  std::function<void()> done;
  std::chrono::milliseconds keep_trying{0};
};

// Runs one job on a connection: "" or its failure's code (never an exception on a worker).
std::string attempt(Job& j, Db& db) {
  try {
    j.work(db);
    return "";
  } catch (const StoreError& e) {
    return e.code();
  } catch (const std::exception& e) {
    log_event("store_call_failed", {{"what", j.what}, {"class", typeid(e).name()}});
    return "internal";
  }
}

void run_job(Job& j, Db& db) {
  if (std::string code = attempt(j, db); !code.empty()) j.failed(code);
}

}  // namespace

// One queue and its threads; each thread owns a connection, opened when first needed and opened
// again after it was lost (the driver's own reset covers a loss between statements).
struct Exec::Pool {
  struct Queue {
    std::mutex m;
    std::condition_variable cv;
    std::deque<Job> jobs;
  };
  Pool(boost::asio::io_context& loop, std::string target, Options options)
      : loop(loop), target(std::move(target)), options(std::move(options)) {}

  void start(int workers) {
    for (int i = 0; i < workers; ++i) threads.emplace_back([this] { serve(any); });
    threads.emplace_back([this] { serve(events); });
  }
  void stop() {
    for (Queue* q : {&any, &events}) {
      std::lock_guard lk(q->m);
      stopping = true;
      q->cv.notify_all();
    }
    for (auto& t : threads) t.join();
  }
  void push(Queue& q, Job j) {
    ++queued;
    std::lock_guard lk(q.m);
    q.jobs.push_back(std::move(j));
    q.cv.notify_one();
  }
  void serve(Queue& q) {
    std::unique_ptr<Db> db;
    while (true) {
      Job j;
      {
        std::unique_lock lk(q.m);
        q.cv.wait(lk, [&] { return stopping || !q.jobs.empty(); });
        if (q.jobs.empty()) return;  // stopping, and all queued work done
        j = std::move(q.jobs.front());
        q.jobs.pop_front();
      }
      const auto give_up = std::chrono::steady_clock::now() + j.keep_trying;
      auto pause = std::chrono::milliseconds(100);
      while (true) {
        std::string code;
        if (!db) {
          try {
            db = Db::open(target, options);
          } catch (const StoreError& e) {
            code = e.code();
          }
        }
        if (db) code = attempt(j, *db);
        if (code != "unreachable" || stopping || std::chrono::steady_clock::now() + pause > give_up) {
          if (!code.empty()) j.failed(code);
          break;
        }
        // The server is away: wait, then try again on a fresh connection.
        db.reset();
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(2000));
      }
      // A connection whose server went away is opened afresh for the next job.
      boost::asio::post(loop, [this, done = std::move(j.done)] {
        --queued;
        done();
      });
    }
  }

  boost::asio::io_context& loop;
  std::string target;
  Options options;
  Queue any;
  Queue events;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> queued{0};
};

Exec::Exec(boost::asio::io_context& loop, Db& loop_db, std::string target,
                     const Options& options, int workers)
    : loop_db_(loop_db), remote_(loop_db.engine() != Engine::sqlite),
      outage_wait_(options.outage_wait_ms) {
  if (!remote_) return;
  pool_ = std::make_unique<Pool>(loop, std::move(target), options);
  pool_->start(workers);
}

Exec::~Exec() {
  if (pool_) pool_->stop();
}

std::size_t Exec::pending() const { return pool_ ? pool_->queued.load() : 0; }

void Exec::submit(const char* what, std::function<void(Db&)> work, std::function<void(std::string)> failed,
                       std::function<void()> done, Lane lane, std::chrono::milliseconds keep_trying) {
  Job j{what, std::move(work), std::move(failed), std::move(done), keep_trying};
  if (!remote_) {
    run_job(j, loop_db_);
    j.done();
    return;
  }
  pool_->push(lane == Lane::events ? pool_->events : pool_->any, std::move(j));
}

}  // namespace plotq::store
