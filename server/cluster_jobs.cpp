// The single jobs (/run-data, /render) of a cluster node: they wait in the cluster's one queue
// beside the turns and run on whichever node claims them (docs/scale-out.md "Single jobs").
//   the node that took the request: claims the key (jobs::claim), enqueues the job (its request
//     is the entry's action), keeps its waiters, and reads the job's end (jobs_round): the kept
//     answer, or the verdict of an end without one;
//   the node that claims the entry: runs it as on one node (jobs::run_here) under its claim
//     (node, epoch), and ends the entry in the transaction that books its rows and keeps its answer
//     (jobs::keep_in_tx / forget_in_tx): fenced, so a node that lost its lease ends nothing;
//   a lost claimant: the rescue keeps node_lost as the job's answer; its code never runs again.
#include <boost/asio/post.hpp>

#include "common/log.hpp"
#include "server/cluster_metrics.hpp"
#include "server/cluster_node.hpp"
#include "server/errors.hpp"
#include "server/job_claim.hpp"
#include "store/cluster.hpp"
#include "store/exec.hpp"

namespace plotq::server {

namespace cluster = store::cluster;

void ClusterNode::enqueue_job(const std::shared_ptr<RunningJob>& job, const std::string& kind, nlohmann::json spec) {
  cluster::Entry e;
  e.user_id = spec.value("user", "");
  e.job_id = job->job_id;
  e.kind = kind;
  spec["key_kind"] = job->kind;
  e.action = spec.dump();
  e.origin_node = id_;
  e.key_row = job->key_row;
  // With a free slot here it is admitted claimed by this node (when nothing waits before it).
  const bool take = !fenced_ && free_slots() > 0;
  if (take) {
    e.claim_node = id_;
    e.claim_epoch = epoch_;
    ++claimed_live_;  // held until the answer says whether it was taken
  }
  std::weak_ptr<RunningJob> weak = job;
  // A cancel before the entry is in the queue is passed on once it is (below).
  job->cancel = [] {};
  app_.store.run(
      "enqueue a job",
      [e, epoch = epoch_](store::Db& db) {
        store::Tx tx(db, "");
        cluster::Admitted a = cluster::enqueue(db, e, epoch);
        tx.commit();
        return a;
      },
      [this, weak, e, job_id = e.job_id, key_kind = job->kind, take, epoch = epoch_](store::Stored<cluster::Admitted> got) {
        const bool taken_here = got.ok() && got.value->claimed;
        if (take && !taken_here && epoch == epoch_) claimed_live_ = std::max(0, claimed_live_ - 1);
        auto j = weak.lock();
        if (taken_here && epoch != epoch_) {
          // Claimed under an epoch this node has left: the join ended it node_lost (its key's
          // answer now); its waiters read that like any job's end.
          if (j && !j->finished) {
            j->entry = got.value->entry;
            awaited_[got.value->entry] = {weak, job_id, key_kind};
          }
          return;
        }
        if (!j || j->finished) {
          // Its waiters went while it was admitted: it ends cancelled, as a withdrawn one does.
          if (taken_here) {
            count_cluster_claim();
            run_claimed_job(cluster::Claimed{got.value->entry, e, 0, 0}, epoch);
            app_.jobs.cancel_all(job_id);
          }
          return;
        }
        if (!got.ok()) {
          // The key stays running: if the entry did not reach the queue, a retry takes the key
          // over (it finds no entry); if it did (the commit's answer was lost), the job runs once
          // and a retry reads its answer. Forgetting it here could run it twice.
          return app_.jobs.finish_error(j, store_failure_code(got.code));
        }
        const cluster::Admitted& a = *got.value;
        if (a.verdict == cluster::Enqueued::capacity) return app_.jobs.finish_error(j, "capacity");
        if (a.verdict == cluster::Enqueued::taken) {
          // A request on another node took the key over meanwhile (cluster::take_over_key) and
          // runs the job: nothing of this node's was enqueued; its waiters wait for that run's
          // answer, read from the key alone.
          log_event("job_taken_over", {{"job_id", job_id}});
          awaited_[-(++taken_seq_)] = {weak, job_id, key_kind};
          j->cancel = [] {};
          return;
        }
        j->entry = a.entry;
        if (a.claimed) {
          count_cluster_claim();
          log_event("cluster_claimed", {{"turn", ""}, {"job_id", job_id}, {"origin", id_}, {"entry", a.entry},
                                        {"started_ms", a.started_ms}, {"waited_ms", 0}});
          run_claimed_job(cluster::Claimed{a.entry, e, 0, 0}, epoch);
          if (j->cancelled && j->cancel) j->cancel();  // its waiters went meanwhile
          return;
        }
        awaited_[a.entry] = {weak, job_id, key_kind};
        j->cancel = [this, job_id] { cancel_job(job_id, [](int) {}); };
        if (j->cancelled) j->cancel();
        if (free_slots() > 0)
          claim_round();
        else
          hint(true, "");
      });
}

void ClusterNode::cancel_job(const std::string& job_id, std::function<void(int)> answer) {
  app_.store.run(
      "cancel a job in the cluster",
      [job_id](store::Db& db) { return cluster::cancel_job(db, job_id, store::now_unix()); },
      [this, answer = std::move(answer)](store::Stored<int> got) {
        jobs_round();  // a withdrawn job's verdict is there now
        answer(got.ok() ? *got.value : 0);
      });
}

void ClusterNode::run_claimed_job(const cluster::Claimed& c, std::int64_t epoch) {
  auto spec = nlohmann::json::parse(c.e.action, nullptr, false);
  std::string key_kind = spec.is_object() ? spec.value("key_kind", "") : "";
  // This node took the request: its job (and its waiters) runs here now.
  std::shared_ptr<RunningJob> job = app_.jobs.find(c.e.job_id, key_kind);
  if (job && job->entry == c.entry) {
    awaited_.erase(c.entry);
  } else if (job) {
    // This node waits for an earlier entry of the same key (its end not read yet) while a retry's
    // new entry comes to it: run this one beside it, outside the registry, so neither replaces
    // the other (a cancel from elsewhere reaches the registered one only).
    job = std::make_shared<RunningJob>();
    job->job_id = c.e.job_id;
    job->kind = key_kind;
    job->entry = c.entry;
  } else {
    job = app_.jobs.add(c.e.job_id, key_kind);
    job->entry = c.entry;
  }
  job->node = id_;
  job->epoch = epoch;
  const bool remote = c.e.origin_node != id_;
  job->ended = [this, epoch, entry = c.entry, remote] {
    if (epoch == epoch_) claimed_live_ = std::max(0, claimed_live_ - 1);
    if (remote) hint(false, "#" + std::to_string(entry));  // its node reads the end now
    if (!fenced_ && !stopped_) claim_round();
  };
  try {
    jobs::run_here(app_, job, c.e.kind, spec);
  } catch (const std::exception& e) {
    // An action this node cannot read (a newer node's?): it ends as a host error, never runs.
    log_event("cluster_job_unreadable", {{"job_id", c.e.job_id}, {"class", "json"}});
    app_.store.run("end an unreadable job", jobs::forget_in_tx(*job, "internal"), [](store::Stored<void>) {});
    app_.jobs.finish_error(job, "internal");
  }
}

void ClusterNode::jobs_round() {
  if (awaited_.empty()) return;
  if (awaiting_) return;
  std::vector<cluster::AwaitedJob> ask;
  std::vector<std::int64_t> keys;  // awaited_'s key of each (an entry, or a key alone's own number)
  for (auto it = awaited_.begin(); it != awaited_.end();) {
    auto j = it->second.job.lock();
    if (!j || j->finished) {
      it = awaited_.erase(it);
      continue;
    }
    ask.push_back({std::max<std::int64_t>(it->first, 0), it->second.job_id, it->second.key_kind});
    keys.push_back(it->first);
    ++it;
  }
  if (ask.empty()) return;
  awaiting_ = true;
  app_.store.run(
      "read jobs' ends", [ask](store::Db& db) { return cluster::job_outcomes(db, ask); },
      [this, keys](store::Stored<std::vector<cluster::JobOutcome>> got) {
        awaiting_ = false;
        if (!got.ok()) return;
        for (std::size_t i = 0; i < got.value->size() && i < keys.size(); ++i) {
          const cluster::JobOutcome& o = (*got.value)[i];
          if (o.state == cluster::JobOutcome::State::pending) continue;
          auto it = awaited_.find(keys[i]);
          if (it == awaited_.end()) continue;
          auto j = it->second.job.lock();
          awaited_.erase(it);
          if (!j || j->finished) continue;
          if (o.state == cluster::JobOutcome::State::verdict) {
            app_.jobs.finish_error(j, find_error(o.text) ? o.text : "internal");
            continue;
          }
          auto answer = nlohmann::json::parse(o.text, nullptr, false);
          if (answer.is_discarded()) {
            app_.jobs.finish_error(j, "internal");
          } else if (auto code = jobs::kept_error(answer)) {
            app_.jobs.finish_error(j, *code);
          } else {
            app_.jobs.finish(j, 200, answer);
          }
        }
      });
}

void ClusterNode::drop_awaited(std::string_view code) {
  // The jobs go on elsewhere and keep their answers: a retry on another node reads them.
  auto awaited = std::move(awaited_);
  awaited_.clear();
  for (auto& [entry, a] : awaited)
    if (auto j = a.job.lock(); j && !j->finished) app_.jobs.finish_error(j, code);
}

}  // namespace plotq::server
