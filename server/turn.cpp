#include "server/turn.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "server/server_metrics.hpp"

namespace plotq::server {

std::string closing_frame(const std::string& reason, long long retry_after_s) {
  return format_sse_event("closing", nlohmann::json{{"reason", reason}, {"retry_after_s", retry_after_s}}.dump())
      .value_or("");
}

std::string queued_status_json(queue::Position p) {
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, "{\"position\":%d,\"step\":\"queued\",\"waiting\":%d}", p.position,
                        p.waiting);
  return std::string(buf, static_cast<std::size_t>(n));
}

void Turn::subscribe(std::shared_ptr<Responder> res, std::int64_t after) {
  // Forget streams that have closed meanwhile (slow readers, clients gone), so the list stays short.
  std::erase_if(subscribers_, [](const Subscriber& s) { return !s.res->is_open(); });
  subscribers_.push_back({std::move(res), after});
}

void Turn::deliver(std::int64_t seq, const std::string& name, const std::string& frame) {
  delivered_ = seq;
  bool last = name == "done";
  for (auto& s : subscribers_) {
    if (seq <= s.after || !s.res->is_open()) continue;
    // A stream over its buffer cap is closed by the server (slow reader); the turn goes on and
    // the stored events wait for a resume.
    if (s.res->write_raw(frame)) count_events_sent("live");
    s.after = seq;
    if (last) s.res->close();
  }
  if (last) subscribers_.clear();
  else std::erase_if(subscribers_, [](const Subscriber& s) { return !s.res->is_open(); });
}

void Turn::send_live(const std::string& frame) {
  for (auto& s : subscribers_)
    if (s.res->is_open() && s.res->write_raw(frame)) count_events_sent("live");
}

void Turn::close_streams(const std::string& last) {
  for (auto& s : subscribers_) {
    if (s.res->is_open()) s.res->write_raw(last);
    s.res->close();
  }
  subscribers_.clear();
}

std::shared_ptr<Turn> TurnRegistry::find(const std::string& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

std::shared_ptr<Turn> TurnRegistry::active_for(const std::string& user) const {
  auto it = by_user_.find(user);
  return it == by_user_.end() ? nullptr : find(it->second);
}

void TurnRegistry::add(const std::shared_ptr<Turn>& t) {
  by_id_[t->id] = t;
  by_user_[t->user] = t->id;
}

void TurnRegistry::remove(const Turn& t) {
  by_id_.erase(t.id);
  auto it = by_user_.find(t.user);
  if (it != by_user_.end() && it->second == t.id) by_user_.erase(it);
}

std::vector<std::shared_ptr<Turn>> TurnRegistry::all() const {
  std::vector<std::shared_ptr<Turn>> out;
  out.reserve(by_id_.size());
  for (const auto& [id, t] : by_id_) out.push_back(t);
  return out;
}

}  // namespace plotq::server
