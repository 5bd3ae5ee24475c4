#include "server/turn_stream.hpp"

#include <boost/asio/steady_timer.hpp>
#include <deque>

#include "server/server_metrics.hpp"
#include "store/exec.hpp"
#include "server/cluster_node.hpp"
#include "server/turn_service.hpp"
#include "store/turns.hpp"

namespace plotq::server {
namespace {

std::optional<std::int64_t> parse_seq(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

constexpr int kPage = 200;                                   // stored events read per query
constexpr auto kPace = std::chrono::milliseconds(10);        // re-check of a full buffer

struct Replay : std::enable_shared_from_this<Replay> {
  Replay(TurnService& svc, std::string id, std::int64_t a, std::shared_ptr<Responder> r)
      : s(svc), turn_id(std::move(id)), after(a), res(std::move(r)), timer(svc.app.ioc),
        budget(std::max<std::size_t>(svc.app.config.http.stream_buffer_bytes / 2, 512)) {}

  TurnService& s;
  std::string turn_id;
  std::int64_t after;
  std::shared_ptr<Responder> res;
  boost::asio::steady_timer timer;
  std::size_t budget;
  std::deque<store::TurnEvent> page;
  bool live_at_read = false;  // the turn was live when the last read was sent
  bool adopt_tried = false;   // a cluster node looked for the turn in the store once

  void step() {
    for (;;) {
      if (!res->is_open()) return;
      if (page.empty()) return read();
      const store::TurnEvent& e = page.front();
      auto frame = format_sse_event(e.event, e.data, std::to_string(e.seq));
      if (!frame) return res->close();
      std::size_t queued = res->pending_bytes();
      if (queued > 0 && queued + frame->size() > budget) return wait();
      if (res->write_raw(*frame)) count_events_sent("replay");
      after = e.seq;
      bool done = e.event == "done";
      page.pop_front();
      if (done) return res->close();
    }
  }

  // The next page of stored events (on PostgreSQL the answer comes back in a later loop turn).
  void read() {
    live_at_read = s.turns.find(turn_id) != nullptr;
    s.app.store.run(
        "read turn events",
        [turn_id = turn_id, after = after](store::Db& db) { return store::turns::events_after(db, turn_id, after, kPage); },
        [self = shared_from_this()](store::Stored<std::vector<store::TurnEvent>> got) {
          if (!self->res->is_open()) return;
          if (!got.ok()) return self->res->close();
          if (got.value->empty()) return self->attach();
          self->page.assign(std::make_move_iterator(got.value->begin()), std::make_move_iterator(got.value->end()));
          self->step();
        });
  }

  void wait() {
    timer.expires_after(kPace);
    timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->step();
    });
  }

  // Everything stored is out: follow the live turn. Events delivered while the last read was on
  // its way are stored (stored, then delivered): read them first, then subscribe in the same loop
  // turn as the check, so nothing falls between.
  void attach() {
    auto t = s.turns.find(turn_id);
    if (t && t->delivered() > after) return read();
    if (t) return t->subscribe(res, after);
    // It ended while the read was on its way: a read from now on sees every event it stored.
    if (live_at_read) return read();
    if (s.cluster && !adopt_tried) return adopt();
    res->close();  // ended (or abandoned by an earlier process) without more to send
  }

  // A cluster node resuming a turn that another node runs (or that waits in the cluster's queue):
  // it follows the turn from the store. A turn that has ended gets one more read, for what it
  // stored since the last one.
  void adopt() {
    adopt_tried = true;
    s.app.store.run(
        "read a turn to follow", [turn_id = turn_id](store::Db& db) { return store::turns::get(db, turn_id); },
        [self = shared_from_this()](store::Stored<std::optional<store::Turn>> got) {
          if (!self->res->is_open()) return;
          if (!got.ok()) return self->res->close();
          const auto& row = *got.value;
          if (!row || row->status == store::TurnStatus::done) return self->read();
          auto t = self->s.turns.find(self->turn_id);
          if (!t) {
            t = std::make_shared<Turn>(row->id, row->session_id, row->user_id);
            t->set_delivered(self->after);
            self->s.turns.add(t);
            self->s.cluster->follow(t, true);
          }
          if (t->delivered() > self->after) return self->read();
          t->subscribe(self->res, self->after);
        });
  }
};

}  // namespace

std::optional<std::int64_t> resume_after(const Request& req) {
  if (auto h = req.header("Last-Event-ID")) {
    std::string_view v = *h;
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    return parse_seq(v);
  }
  if (auto q = req.query_value("after")) return parse_seq(*q);
  return 0;
}

void follow_turn(TurnService& s, const std::string& turn_id, std::int64_t after, std::shared_ptr<Responder> res) {
  count_resume();
  std::make_shared<Replay>(s, turn_id, after, std::move(res))->step();
}

}  // namespace plotq::server
