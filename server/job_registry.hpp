// Jobs of the assistant-service routes (/run-data, /render) that are waiting or running, by
// (job_id, kind). A retried request with the same payload joins the running job (one more waiter,
// same answer); the last waiter to leave cancels it; POST /render/{job_id}/cancel cancels every
// job of that id. Lives on the event loop only.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/http.hpp"

namespace plotq::server {

struct RunningJob {
  std::string job_id;
  std::string kind;  // "data" or the themes, "light,dark"
  std::vector<std::shared_ptr<Responder>> waiters;
  std::function<void()> cancel;  // set by the route: withdraw from the queue or kill the sandbox
  std::shared_ptr<void> state;   // the route's per-run state (ticket, lease, job handle)
  bool finished = false;
  bool cancelled = false;
  // In a cluster: the queue entry this job is (the node that took the request knows it from its
  // admission), and when this node claimed it, the claim (node, epoch) its end is fenced by.
  std::int64_t entry = 0;
  std::int64_t key_row = 0;  // the idempotency row this node's claim made (its enqueue checks it)
  std::string node;
  std::int64_t epoch = 0;
  std::function<void()> ended;  // called once when it is answered (the cluster frees its claim)
};

class JobRegistry {
 public:
  // Keys whose idempotency claim is with the store, and the requests waiting for it to be answered
  // (jobs::claim: they claim in turn after it).
  std::map<std::pair<std::string, std::string>, std::vector<std::function<void()>>> claiming;

  std::shared_ptr<RunningJob> find(const std::string& job_id, const std::string& kind) const {
    auto it = jobs_.find({job_id, kind});
    return it == jobs_.end() ? nullptr : it->second;
  }
  std::shared_ptr<RunningJob> add(const std::string& job_id, const std::string& kind) {
    auto job = std::make_shared<RunningJob>();
    job->job_id = job_id;
    job->kind = kind;
    jobs_[{job_id, kind}] = job;
    return job;
  }
  void remove(const RunningJob& job) { jobs_.erase({job.job_id, job.kind}); }

  // Adds a waiter; when the last waiter's client goes away before the answer, the job is cancelled.
  static void add_waiter(const std::shared_ptr<RunningJob>& job, std::shared_ptr<Responder> res) {
    std::weak_ptr<RunningJob> weak = job;
    Responder* raw = res.get();
    job->waiters.push_back(res);
    res->on_close([weak, raw](CloseReason why) {
      auto j = weak.lock();
      if (!j || j->finished) return;
      auto& w = j->waiters;
      for (auto it = w.begin(); it != w.end(); ++it)
        if (it->get() == raw) {
          w.erase(it);
          break;
        }
      if (why != CloseReason::done && w.empty() && j->cancel && !j->cancelled) {
        j->cancelled = true;
        j->cancel();
      }
    });
  }

  // Cancels every unfinished job with this id; answers how many.
  int cancel_all(const std::string& job_id) {
    int n = 0;
    std::vector<std::shared_ptr<RunningJob>> hits;
    for (auto& [key, job] : jobs_)
      if (key.first == job_id && !job->finished && !job->cancelled) hits.push_back(job);
    for (auto& job : hits) {
      job->cancelled = true;
      if (job->cancel) job->cancel();
      ++n;
    }
    return n;
  }

  // Sends the same answer to every waiter still connected, then forgets the job.
  void finish(const std::shared_ptr<RunningJob>& job, int status, const nlohmann::json& body) {
    auto waiters = end(job);
    for (auto& w : waiters)
      if (w->is_open()) w->send_json(status, body);
  }
  void finish_error(const std::shared_ptr<RunningJob>& job, std::string_view code) {
    auto waiters = end(job);
    for (auto& w : waiters)
      if (w->is_open()) w->send_error(code);
  }

  // Shutdown: cancels every unfinished job.
  void cancel_all_jobs() {
    std::vector<std::string> ids;
    for (auto& [key, job] : jobs_) ids.push_back(key.first);
    for (auto& id : ids) cancel_all(id);
  }

  std::size_t size() const { return jobs_.size(); }

 private:
  std::vector<std::shared_ptr<Responder>> end(const std::shared_ptr<RunningJob>& job) {
    job->finished = true;
    job->cancel = nullptr;
    auto waiters = std::move(job->waiters);
    if (auto it = jobs_.find({job->job_id, job->kind}); it != jobs_.end() && it->second == job) jobs_.erase(it);
    if (auto ended = std::exchange(job->ended, nullptr)) ended();
    return waiters;
  }
  std::map<std::pair<std::string, std::string>, std::shared_ptr<RunningJob>> jobs_;
};

}  // namespace plotq::server
