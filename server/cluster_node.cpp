#include "server/cluster_node.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>

#include "common/log.hpp"
#include "queue/render_queue.hpp"
#include "runs/runtime.hpp"
#include "sandbox/launcher.hpp"
#include "server/job_registry.hpp"
#include "server/cluster_metrics.hpp"
#include "server/errors.hpp"
#include "server/limits.hpp"
#include "server/turn_service.hpp"
#include "store/error.hpp"
#include "store/exec.hpp"
#include "store/quotas.hpp"
#include "store/turns.hpp"

namespace plotq::server {
namespace {

using Clock = std::chrono::steady_clock;
namespace cluster = store::cluster;

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::int64_t ms(double s) { return static_cast<std::int64_t>(s * 1000.0); }

nlohmann::json action_json(const TurnAction& a) {
  return {{"kind", std::string(store::to_string(a.kind))}, {"code", a.code}, {"source_language", a.source_language},
          {"library", a.library}, {"themes", a.themes}};
}

}  // namespace

TurnAction action_from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text);
  TurnAction a;
  a.kind = store::parse_turn_action(j.at("kind").get<std::string>()).value_or(store::TurnAction::none);
  a.code = j.value("code", "");
  a.source_language = j.value("source_language", "");
  a.library = j.value("library", "");
  a.themes = j.value("themes", std::vector<std::string>{});
  return a;
}

ClusterNode::ClusterNode(App& app, TurnService& svc)
    : app_(app), svc_(svc), cfg_(app.config.cluster), id_(app.config.cluster.node_id),
      address_(app.config.cluster.address),
      timer_(app.ioc), fence_(app.config.db.fence) {
  // Followers of a turn run here hear of its new events from a hint, not at their next poll.
  svc.events.on_event_stored([this](const Turn& t) {
    if (!t.follower && t.claim_epoch > 0) hint(false, t.id);
  });
}

ClusterNode::~ClusterNode() { stop(); }

void ClusterNode::join(const std::string& bound) {
  if (address_.empty()) address_ = bound;
  store::Options o = app_.config.db;
  o.fence = nullptr;  // the lease's own connection is what makes the fence pass
  beat_db_ = store::Db::open(app_.config.db_path, o);
  std::int64_t t0 = steady_ns();
  auto [lease, ended] = cluster::join(*beat_db_, id_, app_.config.queue.slots, app_.config.queue.capacity(), address_,
                                      static_cast<int>(ms(cfg_.lease_s)), store::now_unix());
  epoch_ = lease.epoch;
  beat_epoch_ = lease.epoch;
  if (fence_) fence_->epoch = lease.epoch;
  lease_deadline_ns_ = t0 + ms(cfg_.lease_s) * 1'000'000;
  log_event("node_joined", {{"node", id_}, {"epoch", epoch_}, {"ended_node_lost", ended.size()}});
}

void ClusterNode::start() {
  collect_cluster_gauges(*this);
  heartbeat_ = std::thread([this] { heartbeat_loop(); });
  if (cfg_.notify_ms > 0) {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ >= 0) hinter_ = std::thread([this] { hints_loop(); });
  }
  arm();
}

void ClusterNode::stop() {
  if (stopped_) return;
  stopped_ = true;
  drop_cluster_gauges();
  timer_.cancel();
  {
    std::lock_guard<std::mutex> g(mu_);
    quit_ = true;
  }
  wake_.notify_all();
  if (wake_fd_ >= 0) {
    std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }
  if (hinter_.joinable()) hinter_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
  if (heartbeat_.joinable()) heartbeat_.join();  // it leaves the cluster on its way out
  beat_db_.reset();
}

// ---- the heartbeat thread ----

void ClusterNode::heartbeat_loop() {
  const auto every = std::chrono::duration<double>(cfg_.heartbeat_s);
  const std::int64_t lease_ns = ms(cfg_.lease_s) * 1'000'000;
  bool failing = false;
  for (;;) {
    {
      std::unique_lock<std::mutex> g(mu_);
      wake_.wait_for(g, every, [this] { return quit_ || want_join_.load(); });
      if (quit_) break;
    }
    try {
      std::int64_t t0 = steady_ns();
      if (want_join_) {
        auto [lease, ended] = cluster::join(*beat_db_, id_, app_.config.queue.slots, app_.config.queue.capacity(),
                                            address_, static_cast<int>(ms(cfg_.lease_s)), store::now_unix());
        beat_epoch_ = lease.epoch;
        lease_deadline_ns_ = t0 + lease_ns;
        lost_ = false;
        want_join_ = false;
        log_event("node_rejoined", {{"node", id_}, {"epoch", lease.epoch}, {"ended_node_lost", ended.size()}});
        // (a copy: clang before 16 cannot capture a structured binding)
        boost::asio::post(app_.ioc, [this, granted = lease] { rejoined(granted); });
      } else if (auto lease = cluster::renew(*beat_db_, id_, beat_epoch_, static_cast<int>(ms(cfg_.lease_s)))) {
        lease_deadline_ns_ = t0 + lease_ns;  // from before the renewal went out: never later than the store's
      } else {
        lost_ = true;
      }
      if (failing) log_event("node_heartbeat_ok", {{"node", id_}});
      failing = false;
    } catch (const std::exception& e) {
      // Out of reach: the lease runs out on its own and the loop fences the node.
      if (!failing) log_event("node_heartbeat_failed", {{"node", id_}, {"code", store::code_of(e)}});
      failing = true;
    }
  }
  // A clean stop (the turns have ended): the row says left. Only a node that still holds its lease
  // leaves; a lost one's work is the rescue's.
  try {
    if (cluster::leave(*beat_db_, id_, beat_epoch_)) log_event("node_left", {{"node", id_}, {"epoch", beat_epoch_.load()}});
  } catch (const std::exception& e) {
    log_event("node_leave_failed", {{"code", store::code_of(e)}});
  }
}

// ---- the loop's rounds ----

void ClusterNode::arm() {
  if (stopped_) return;
  timer_.expires_after(std::chrono::milliseconds(cfg_.poll_ms));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || stopped_) return;
    round();
    arm();
  });
}

void ClusterNode::round() {
  if (!fenced_ && (lost_ || steady_ns() > lease_deadline_ns_)) fence_self(lost_ ? "lease_lost" : "lease_expired");
  if (fenced_) {
    // Join again only once the old epoch's work is gone: its killed jobs reaped and their last
    // store calls (refused: fenced) answered. A write made after the join would pass the fence.
    if (!want_join_ && app_.launcher.running() == 0 && app_.launcher.queued() == 0 && app_.store.pending() == 0) {
      want_join_ = true;
      wake_.notify_all();
    }
    return;
  }
  auto now = Clock::now();
  claim_round();
  events_round();
  jobs_round();
  if (now >= next_standings_) {
    next_standings_ = now + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(app_.queue.config().status_min_interval_s));
    standings_round();
  }
  if (now >= next_rescue_) {
    next_rescue_ = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(cfg_.rescue_s));
    rescue_round();
  }
}

int ClusterNode::free_slots() const {
  const auto st = app_.queue.status();
  const auto& q = app_.queue.config();
  return std::min({q.slots - st.in_flight - st.waiting, q.slots - claimed_live_, q.starts_per_window - st.starts_in_window});
}

void ClusterNode::claim_round() {
  if (app_.draining) return;
  if (claiming_) {
    claim_again_ = true;
    return;
  }
  claim_again_ = false;
  const auto& q = app_.queue.config();
  int n = free_slots();
  if (n <= 0) return;
  claiming_ = true;
  std::int64_t epoch = epoch_;
  app_.store.run(
      "claim waiting work",
      [id = id_, epoch, n, wait = ms(q.max_wait_s)](store::Db& db) { return cluster::claim(db, id, epoch, n, wait); },
      [this, epoch](store::Stored<std::vector<cluster::Claimed>> got) {
        claiming_ = false;
        if (!got.ok()) {
          if (got.code != "fenced") log_event("cluster_claim_failed", {{"code", got.code}});
          return;
        }
        // Claimed under an epoch the node has left: its join ended them node_lost; nothing runs.
        if (epoch != epoch_ || fenced_) return;
        for (auto& c : *got.value) {
          ++claimed_live_;
          count_cluster_claim();
          log_event("cluster_claimed", {{"turn", c.e.turn_id}, {"job_id", c.e.job_id}, {"origin", c.e.origin_node},
                                        {"entry", c.entry}, {"started_ms", c.started_ms},
                                        {"waited_ms", c.started_ms - c.enqueued_ms}});
          if (c.e.turn_id.empty()) {
            run_claimed_job(c, epoch);
            continue;
          }
          followed_.erase(c.e.turn_id);
          svc_.run_claimed(c, epoch, action_from_json(c.e.action));
        }
        if (!got.value->empty() || claim_again_) claim_round();  // more may wait, and a slot may still be free
      });
}

void ClusterNode::follow(const std::shared_ptr<Turn>& t, bool active) {
  t->follower = true;
  auto& f = followed_[t->id];
  f.turn = t;
  f.active = f.active || active;
}

void ClusterNode::events_round() {
  if (reading_) {
    read_again_ = true;
    return;
  }
  read_again_ = false;
  std::vector<std::pair<std::string, std::int64_t>> after;
  for (auto it = followed_.begin(); it != followed_.end();) {
    auto t = it->second.turn.lock();
    if (!t || !t->follower) {
      it = followed_.erase(it);
      continue;
    }
    if (it->second.active) after.emplace_back(t->id, t->delivered());
    ++it;
  }
  if (after.empty()) return;
  reading_ = true;
  app_.store.run(
      "read events of turns run elsewhere", [after](store::Db& db) { return cluster::events_after(db, after); },
      [this](store::Stored<std::vector<cluster::StoredEvent>> got) {
        reading_ = false;
        if (read_again_) boost::asio::post(app_.ioc, [this] { events_round(); });
        if (!got.ok()) return;
        for (const auto& e : *got.value) {
          auto it = followed_.find(e.turn_id);
          if (it == followed_.end()) continue;
          auto t = it->second.turn.lock();
          if (!t || !t->follower || e.seq <= t->delivered()) continue;
          // A small gap is an event its writer has not stored yet: wait for it a moment, then go
          // on (the writer may have died with it). A rescue's end jumps kAbandonedSeqGap on purpose.
          if (e.seq > t->delivered() + 1 && e.seq < t->delivered() + store::turns::kAbandonedSeqGap) {
            auto now = Clock::now();
            if (it->second.gap_since == Clock::time_point{}) it->second.gap_since = now;
            if (now - it->second.gap_since < std::chrono::seconds(2)) continue;
          }
          it->second.gap_since = {};
          auto frame = format_sse_event(e.name, e.data, std::to_string(e.seq));
          if (!frame) continue;
          t->deliver(e.seq, e.name, *frame);
          if (e.name == "done") {
            t->stage = Turn::Stage::ending;
            svc_.turns.remove(*t);
            followed_.erase(it);
          }
        }
      });
}

std::string ClusterNode::status_frame(int position, int waiting) const {
  return format_sse_event("status", queued_status_json({position, waiting})).value_or("");
}

void ClusterNode::standings_round() {
  if (standing_ || followed_.empty()) return;
  std::vector<std::string> ids;
  for (const auto& [id, f] : followed_)
    if (!f.turn.expired()) ids.push_back(id);
  if (ids.empty()) return;
  standing_ = true;
  app_.store.run(
      "read queue standings", [ids](store::Db& db) { return cluster::standings(db, ids); },
      [this, ids](store::Stored<std::vector<cluster::Standing>> got) {
        standing_ = false;
        if (!got.ok()) return;
        std::unordered_map<std::string, const cluster::Standing*> by_id;
        for (const auto& s : *got.value) by_id[s.turn_id] = &s;
        const auto now = Clock::now();
        const auto beat = std::chrono::duration<double>(app_.queue.config().heartbeat_s);
        for (const auto& id : ids) {
          auto it = followed_.find(id);
          if (it == followed_.end()) continue;
          Followed& f = it->second;
          auto s = by_id.find(id);
          if (s == by_id.end() || s->second->running) {  // claimed, or ended: read its events
            f.active = true;
            continue;
          }
          f.active = false;
          auto t = f.turn.lock();
          if (!t) continue;
          const cluster::Standing& st = *s->second;
          if (st.position == f.position && st.waiting == f.waiting && now - f.sent < beat) continue;
          f.position = st.position;
          f.waiting = st.waiting;
          f.sent = now;
          t->send_live(status_frame(st.position, st.waiting));
        }
      });
}

void ClusterNode::rescue_round() {
  if (rescuing_) return;
  rescuing_ = true;
  app_.store.run(
      "rescue lost work",
      [id = id_, epoch = epoch_, wait = ms(app_.queue.config().max_wait_s)](store::Db& db) {
        struct Out {
          std::vector<cluster::Ended> ended;
          std::vector<cluster::CancelRequest> cancels;
          std::vector<cluster::NodeRow> nodes;
          cluster::QueueTotals totals;
        } out;
        out.ended = cluster::rescue(db, wait, store::now_unix());
        out.cancels = cluster::cancel_requests(db, id, epoch);
        out.nodes = cluster::nodes(db);
        out.totals = cluster::totals(db);
        return out;
      },
      [this](auto got) {
        rescuing_ = false;
        if (!got.ok()) {
          if (got.code != "fenced") log_event("cluster_rescue_failed", {{"code", got.code}});
          return;
        }
        auto& out = *got.value;
        bool jobs_ended = false;
        for (const auto& e : out.ended) {
          jobs_ended = jobs_ended || e.turn_id.empty();
          log_event("cluster_rescued", {{"turn", e.turn_id}, {"code", e.code}, {"job_id", e.job_id}});
          count_cluster_rescued(e.code);
          if (auto it = followed_.find(e.turn_id); it != followed_.end()) it->second.active = true;
        }
        for (const auto& c : out.cancels) {
          if (c.turn_id.empty()) {
            app_.jobs.cancel_all(c.job_id);
            continue;
          }
          auto t = svc_.turns.find(c.turn_id);
          if (t && !t->follower && t->stop_reason.empty()) svc_.cancel(c.turn_id);
        }
        nodes_ = std::move(out.nodes);
        totals_ = out.totals;
        if (jobs_ended) jobs_round();
      });
}

void ClusterNode::fence_self(const char* why) {
  fenced_ = true;
  log_event("node_fenced", {{"node", id_}, {"epoch", epoch_}, {"reason", why}});
  // Nothing this node holds may be written any more: its jobs are killed, its streams closed so
  // their clients resume on another node, and it forgets its turns (a join ends them node_lost).
  const std::string frame = closing_frame("node_fenced", 1);
  for (auto& t : svc_.turns.all()) svc_.drop(t, frame);
  followed_.clear();
  drop_awaited("unavailable");  // jobs run elsewhere: their waiters retry on another node
  app_.jobs.cancel_all_jobs();  // /run-data and /render run here: their writes would be refused too
}

void ClusterNode::rejoined(store::cluster::Lease lease) {
  epoch_ = lease.epoch;
  if (fence_) fence_->epoch = lease.epoch;
  claimed_live_ = 0;  // the join ended whatever the old epoch held
  fenced_ = false;
}

// ---- what the turns ask of the cluster ----

void ClusterNode::enqueue(const std::shared_ptr<Turn>& t, const TurnAction& action) {
  const bool data = action.kind == store::TurnAction::data;
  cluster::Entry e;
  e.turn_id = t->id;
  e.user_id = t->user;
  e.session_id = t->session_id;
  e.job_id = data ? data_job_id(t->id, 1) : plot_job_id(t->id);
  e.kind = data ? "data" : "render";
  e.action = action_json(action).dump();
  e.origin_node = id_;
  e.next_seq = t->next_seq;
  runs::RunWho who{e.job_id, t->user, t->session_id, t->id,
                   runs::runtime_id(data ? *app_.runtime : app_.runtime_for(action.library)), data ? "" : action.library};
  store::RunKind kind = data ? store::RunKind::data : store::RunKind::render;
  t->stage = Turn::Stage::queued;
  t->queued_at = Clock::now();
  // A cancel while the entry is on its way is passed on once it is in the queue.
  t->stop_work = [t] {};
  struct Verdict {
    std::string refusal;  // a daily limit's code, or capacity
    cluster::Admitted admitted;
  };
  app_.store.run(
      "enqueue a turn's work",
      [e, epoch = epoch_, cfg = svc_.cfg, kind = action.kind](store::Db& db) {
        store::Tx tx(db, store::quotas::quota_lock(e.user_id));
        Verdict v;
        if (auto refusal = book_run_in_tx(db, cfg, e.user_id, kind, store::now_unix())) {
          v.refusal = *refusal;
          return v;  // rolled back: nothing written
        }
        // A booked run stays booked when the queue is full, as on one node.
        v.admitted = cluster::enqueue(db, e, epoch);
        if (v.admitted.verdict == cluster::Enqueued::capacity) v.refusal = "capacity";
        tx.commit();
        return v;
      },
      [this, t, who, kind](store::Stored<Verdict> v) {
        t->stop_work = nullptr;
        if (t->ending()) return;
        if (!v.ok()) {
          log_event("turn_failed", {{"turn", t->id}, {"class", "StoreError"}, {"code", v.code}});
          return svc_.fail(t, std::string(store_failure_code(v.code)));
        }
        if (v.value->refusal == "capacity") {
          svc_.ledger_refused(who, kind, runs::Outcome::capacity, 0);
          return svc_.fail(t, "capacity");
        }
        if (!v.value->refusal.empty()) {
          svc_.ledger_refused(who, kind, runs::outcome_named(v.value->refusal));
          return svc_.refuse(t, v.value->refusal);
        }
        const cluster::Admitted& a = v.value->admitted;
        follow(t, a.starts_now);
        Followed& f = followed_[t->id];
        if (!a.starts_now) {  // the newcomer is told its place at once
          f.position = a.position;
          f.waiting = a.waiting;
          f.sent = Clock::now();
          t->send_live(status_frame(a.position, a.waiting));
        }
        if (!t->stop_reason.empty()) cancel(t->id, [](std::string) {});
        // This node takes it if it has the free slot; otherwise the others hear of it now.
        if (free_slots() > 0)
          claim_round();
        else
          hint(true, "");
      },
      store::Lane::events);  // in the order the turns' events go: after the turn's ready
}

void ClusterNode::cancel(const std::string& turn_id, std::function<void(std::string)> answer) {
  app_.store.run(
      "cancel a turn in the cluster",
      [turn_id](store::Db& db) -> std::string {
        switch (cluster::cancel(db, turn_id, store::now_unix())) {
          case cluster::CancelResult::withdrawn:
            return "cancelled";
          case cluster::CancelResult::requested:
            return "cancelling";
          case cluster::CancelResult::none:
            break;
        }
        auto t = store::turns::get(db, turn_id);
        return !t || t->status == store::TurnStatus::done ? "done" : "cancelling";
      },
      [this, turn_id, answer = std::move(answer)](store::Stored<std::string> got) {
        if (!got.ok()) return answer("error:" + std::string(store_failure_code(got.code)));
        if (auto it = followed_.find(turn_id); it != followed_.end()) it->second.active = true;
        answer(*got.value);
      });
}

void ClusterNode::finished(const Turn& t) {
  app_.store.run(
      "finish a claimed entry",
      [turn = t.id, node = id_, epoch = t.claim_epoch](store::Db& db) { cluster::finish_entry(db, turn, node, epoch); },
      [this, turn = t.id, epoch = t.claim_epoch](store::Stored<void> done) {
        if (epoch == epoch_) claimed_live_ = std::max(0, claimed_live_ - 1);
        if (!fenced_ && !stopped_) claim_round();  // the slot is free: the next waiting entry
        // Left behind, the entry is ended with the node's epoch (its turn is already done).
        if (!done.ok()) log_event("cluster_finish_failed", {{"turn", turn}, {"code", done.code}});
      });
}

nlohmann::json ClusterNode::status_json() const {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : nodes_) nodes.push_back(cluster::to_json(n));
  return {{"node", id_}, {"epoch", epoch_}, {"fenced", fenced_}, {"slots", app_.queue.config().slots},
          {"followed", followed_.size()}, {"nodes", nodes}, {"queue", cluster::to_json(totals_)}};
}

}  // namespace plotq::server
