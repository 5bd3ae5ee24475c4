#include "server/job_claim.hpp"

#include "common/log.hpp"
#include "server/errors.hpp"
#include "store/error.hpp"
#include "server/cluster_node.hpp"
#include "store/cluster.hpp"
#include "store/idempotency.hpp"
#include "store/time.hpp"

#include <boost/asio/steady_timer.hpp>
#include <map>

namespace plotq::server::jobs {

namespace {

using Key = std::pair<std::string, std::string>;

void claimed(App& app, const std::shared_ptr<Responder>& res, const std::string& job_id, const std::string& kind,
             const char* joined_event, const store::Claim& claim,
             const std::function<void(std::shared_ptr<RunningJob>)>& run) {
  switch (claim.state) {
    case store::ClaimState::conflict:
      return res->send_error("job_conflict");
    case store::ClaimState::done_same: {
      auto stored = nlohmann::json::parse(claim.response, nullptr, false);
      if (stored.is_discarded()) return res->send_error("internal");
      if (auto code = kept_error(stored)) return res->send_error(*code);
      return res->send_json(200, stored);
    }
    case store::ClaimState::running_same:
      JobRegistry::add_waiter(app.jobs.find(job_id, kind), res);
      log_event(joined_event, {{"job_id", job_id}});
      return;
    case store::ClaimState::started:
      break;
  }
  auto job = app.jobs.add(job_id, kind);
  job->key_row = claim.row;
  JobRegistry::add_waiter(job, res);
  run(job);
}

}  // namespace

// In a cluster, a key another node runs is that node's: this request waits for its stored answer,
// reading the key again every kCrossNodePoll, as a join does on one node. A key with no job in
// the cluster's queue is taken over (cluster::take_over_key: its node went away before it
// enqueued the job, so its code never ran); one whose node was lost mid-run keeps node_lost.
constexpr auto kCrossNodePoll = std::chrono::milliseconds(100);

void claim(App& app, const std::shared_ptr<Responder>& res, const std::string& job_id, const std::string& kind,
                const nlohmann::json& body, const char* joined_event, std::function<void(std::shared_ptr<RunningJob>)> run) {
  Key key{job_id, kind};
  auto busy = app.jobs.claiming.find(key);
  if (busy != app.jobs.claiming.end()) {
    busy->second.push_back([&app, res, job_id, kind, body, joined_event, run = std::move(run)] {
      claim(app, res, job_id, kind, body, joined_event, run);
    });
    return;
  }
  app.jobs.claiming[key];
  // On one node, a running record without a job in this process can never finish: take it over
  // (decided now, on the loop: no other claim of this key runs until this one is answered). In a
  // cluster, only one whose job is in no node's queue.
  bool local = app.jobs.find(job_id, kind) != nullptr;
  bool cluster = app.cluster != nullptr;
  // A node enqueues a key's job within its lease of claiming the key, or is fenced.
  auto lease = static_cast<store::UnixSeconds>(std::ceil(app.config.cluster.lease_s));
  std::string fp = store::idempotency::fingerprint(body.dump());
  app.store.run(
      "claim a job",
      [job_id, kind, fp, local, cluster, lease](store::Db& db) {
        store::Claim c = store::idempotency::begin(db, job_id, kind, fp, store::now_unix());
        if (c.state == store::ClaimState::running_same && !local) {
          bool orphan = cluster ? store::cluster::take_over_key(db, job_id, kind, store::now_unix() - lease)
                                : store::idempotency::forget(db, job_id, kind);
          if (orphan) c = store::idempotency::begin(db, job_id, kind, fp, store::now_unix());
        }
        return c;
      },
      [&app, res, key, body, joined_event, run = std::move(run)](store::Stored<store::Claim> c) {
        auto waiting = std::move(app.jobs.claiming[key]);
        app.jobs.claiming.erase(key);
        if (!c.ok()) {
          res->send_error(store_failure_code(c.code));
        } else if (c.value->state == store::ClaimState::running_same && !app.jobs.find(key.first, key.second)) {
          // Another node runs it: read the key again in a moment (a closed client ends the wait).
          auto timer = std::make_shared<boost::asio::steady_timer>(app.ioc, kCrossNodePoll);
          timer->async_wait([&app, res, key, body, joined_event, run, timer](const boost::system::error_code& ec) {
            if (ec || res->answered() || !res->is_open()) return;
            claim(app, res, key.first, key.second, body, joined_event, run);
          });
        } else {
          claimed(app, res, key.first, key.second, joined_event, *c.value, run);
        }
        for (auto& next : waiting) next();
      });
}

std::function<void(store::Db&)> keep_in_tx(const RunningJob& j, const nlohmann::json& answer) {
  return [id = j.job_id, kind = j.kind, text = answer.dump(), entry = j.entry, node = j.node,
          epoch = j.epoch](store::Db& db) {
    store::idempotency::complete(db, id, kind, text, store::now_unix());
    if (epoch > 0) store::cluster::end_job(db, entry, node, epoch, "");
  };
}

std::function<void(store::Db&)> forget_in_tx(const RunningJob& j, std::string_view code) {
  return [id = j.job_id, kind = j.kind, code = std::string(code), entry = j.entry, node = j.node,
          epoch = j.epoch](store::Db& db) {
    store::idempotency::forget(db, id, kind);
    if (epoch > 0) store::cluster::end_job(db, entry, node, epoch, code);
  };
}

std::optional<std::string> kept_error(const nlohmann::json& answer) {
  if (answer.is_object() && answer.size() == 1 && answer.contains("detail") && answer["detail"].is_string())
    return answer["detail"].get<std::string>();
  return std::nullopt;
}

void run_job(App& app, const std::shared_ptr<RunningJob>& job, const std::string& kind, nlohmann::json spec) {
  if (app.cluster) return app.cluster->enqueue_job(job, kind, std::move(spec));
  run_here(app, job, kind, spec);
}

void run_here(App& app, const std::shared_ptr<RunningJob>& job, const std::string& kind, const nlohmann::json& spec) {
  if (kind == "data")
    run_data_here(app, job, spec);
  else
    run_render_here(app, job, spec);
}

void answer_booked(App& app, const std::shared_ptr<RunningJob>& j, bool booked, const nlohmann::json& answer,
                   std::string_view error_code) {
  if (!booked) {
    log_event("idempotency_complete_failed", {{"job_id", j->job_id}, {"kind", j->kind}});
    // When this fails too, the key stays running in the store: a retry in this process takes it
    // over (claim), the next start-up forgets it (idempotency::forget_running).
    app.store.run(
        "forget a claim", [id = j->job_id, kind = j->kind](store::Db& db) { store::idempotency::forget(db, id, kind); },
        [](store::Stored<void>) {});
  }
  if (!error_code.empty()) return app.jobs.finish_error(j, error_code);
  app.jobs.finish(j, 200, answer);
}

}  // namespace plotq::server::jobs
