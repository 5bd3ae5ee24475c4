// The hints (server/cluster_hints.hpp): their payload, and ClusterNode's hints thread and the
// loop's answer to what it hears.
#include "server/cluster_hints.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <sstream>

#include "common/log.hpp"
#include "server/cluster_metrics.hpp"
#include "server/cluster_node.hpp"
#include "store/error.hpp"
#include "store/hints.hpp"

namespace plotq::server {

using Clock = std::chrono::steady_clock;

std::string hint_payload(const Hint& h) {
  if (h.everything) return "*";
  std::string p = h.queue ? "q" : "";
  if (!h.turns.empty()) {
    p += p.empty() ? "e" : "\ne";
    for (const auto& t : h.turns) p += " " + t;
  }
  return p.size() > store::Hints::kMaxPayload ? "*" : p;
}

Hint read_hints(const std::vector<std::string>& payloads) {
  Hint h;
  for (const auto& payload : payloads) {
    std::istringstream in(payload);
    for (std::string line; std::getline(in, line);) {
      if (line == "q") h.queue = true;
      if (line == "*") h.everything = true;
      if (line.rfind("e ", 0) != 0) continue;
      std::istringstream ids(line.substr(2));
      for (std::string id; ids >> id;) h.turns.push_back(id);
    }
  }
  return h;
}

void ClusterNode::hints_loop() {
  const auto every = std::chrono::milliseconds(cfg_.notify_ms);
  std::unique_ptr<store::Hints> hints;
  bool failing = false;
  Clock::time_point last_sent{};
  for (;;) {
    std::string payload;
    bool pending = false;
    {
      std::unique_lock<std::mutex> g(mu_);
      if (quit_) break;
      pending = hint_queue_ || !hint_turns_.empty();
      if (pending && Clock::now() >= last_sent + every && hints) {
        payload = hint_payload({hint_queue_, false, hint_turns_});
        hint_queue_ = false;
        hint_turns_.clear();
        pending = false;
      }
    }
    try {
      if (!hints) {
        hints = store::Hints::open(app_.config.db_path, app_.config.db);
        if (failing) log_event("cluster_hints_ok", {{"node", id_}});
        failing = false;
      }
      if (!payload.empty()) {
        hints->send(payload);
        count_cluster_hint_sent();
        last_sent = Clock::now();
      }
      auto wait = pending ? std::chrono::duration_cast<std::chrono::milliseconds>(last_sent + every - Clock::now())
                          : std::chrono::milliseconds(500);
      auto heard = hints->wait(wake_fd_, std::max(wait, std::chrono::milliseconds(0)));
      std::uint64_t n;
      while (::read(wake_fd_, &n, sizeof n) > 0) {
      }
      if (heard.empty()) continue;
      for (std::size_t i = 0; i < heard.size(); ++i) count_cluster_hint_heard();
      boost::asio::post(app_.ioc, [this, h = read_hints(heard)]() mutable { hinted(std::move(h)); });
    } catch (const std::exception& e) {
      // Polling goes on meanwhile; the hints come back with the connection.
      if (!failing) log_event("cluster_hints_failed", {{"node", id_}, {"code", store::code_of(e)}});
      failing = true;
      hints.reset();
      std::unique_lock<std::mutex> g(mu_);
      wake_.wait_for(g, std::chrono::seconds(1), [this] { return quit_; });
    }
  }
}

void ClusterNode::hint(bool queue, const std::string& turn) {
  if (wake_fd_ < 0) return;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (queue) hint_queue_ = true;
    if (!turn.empty() && std::find(hint_turns_.begin(), hint_turns_.end(), turn) == hint_turns_.end())
      hint_turns_.push_back(turn);
  }
  std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void ClusterNode::hinted(Hint h) {
  if (stopped_ || fenced_) return;
  if (h.queue || h.everything) claim_round();
  bool read = false;
  if (h.everything) {
    for (auto& [id, f] : followed_) f.active = read = true;
  } else {
    for (const auto& id : h.turns)
      if (auto it = followed_.find(id); it != followed_.end()) it->second.active = read = true;  // it runs
  }
  if (read) events_round();
  // "#ENTRY": a single job this node took the request of has ended on its claimant.
  bool jobs = h.everything;
  for (const auto& id : h.turns) jobs = jobs || (!id.empty() && id[0] == '#');
  if (jobs) jobs_round();
}

}  // namespace plotq::server
