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
};

// Runs one job on a connection; a failure becomes its code (never an exception on a worker).
void run_job(Job& j, Db& db) {
  try {
    j.work(db);
  } catch (const StoreError& e) {
    j.failed(e.code());
  } catch (const std::exception& e) {
    log_event("store_call_failed", {{"what", j.what}, {"class", typeid(e).name()}});
    j.failed("internal");
  }
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
    threads.emplace_back([this] { serve(ordered); });
  }
  void stop() {
    for (Queue* q : {&any, &ordered}) {
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
      if (!db) {
        try {
          db = Db::open(target, options);
        } catch (const StoreError& e) {
          j.failed(e.code());
        }
      }
      if (db) run_job(j, *db);
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
  Queue ordered;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> queued{0};
};

Exec::Exec(boost::asio::io_context& loop, Db& loop_db, std::string target,
                     const Options& options, int workers)
    : loop_(loop), loop_db_(loop_db), remote_(loop_db.engine() != Engine::sqlite) {
  if (!remote_) return;
  pool_ = std::make_unique<Pool>(loop, std::move(target), options);
  pool_->start(workers);
}

Exec::~Exec() {
  if (pool_) pool_->stop();
}

std::size_t Exec::pending() const { return pool_ ? pool_->queued.load() : 0; }

void Exec::submit(const char* what, std::function<void(Db&)> work, std::function<void(std::string)> failed,
                       std::function<void()> done, Lane lane) {
  Job j{what, std::move(work), std::move(failed), std::move(done)};
  if (!remote_) {
    run_job(j, loop_db_);
    j.done();
    return;
  }
  pool_->push(lane == Lane::ordered ? pool_->ordered : pool_->any, std::move(j));
}

}  // namespace plotq::store
