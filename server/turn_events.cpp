#include "server/turn_events.hpp"

#include "store/sql.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <typeinfo>

#include "common/log.hpp"
#include "server/errors.hpp"
#include "store/exec.hpp"
#include "store/store_metrics.hpp"
#include "store/db.hpp"
#include "store/turn_event_writer.hpp"
#include "store/turns.hpp"

namespace plotq::server {
namespace {

// How often the end of a turn that the store refused is tried again while nothing else flushes.
constexpr std::chrono::seconds kUnstoredRetry{2};

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

EventLog::EventLog(boost::asio::io_context& io, store::Exec& store, std::chrono::duration<double, std::milli> slow)
    : io_(io), store_(store), slow_(slow) {}

EventLog::~EventLog() = default;

void EventLog::emit(const std::shared_ptr<Turn>& turn, std::string_view name, const nlohmann::json& data) {
  if (turn->ending()) return;
  emit_json(turn, name, data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void EventLog::emit_json(const std::shared_ptr<Turn>& turn, std::string_view name, std::string data) {
  if (turn->ending() || turn->follower) return;  // a follower's events are written by the node running it
  // The id is the turn's next seq, taken now: ids only grow, even past an event that failed to store.
  pending_.push_back({turn, std::string(name), std::move(data), std::nullopt, turn->next_seq++, false, {}});
  schedule();
}

void EventLog::finish(const std::shared_ptr<Turn>& turn, const std::string& state,
                      const std::optional<std::string>& code) {
  if (turn->ending()) return;
  nlohmann::json done = {{"turn", turn->id}, {"state", state}};
  pending_.push_back({turn, "done", done.dump(), std::make_pair(state, code), turn->next_seq++, false, {}});
  turn->stage = Turn::Stage::ending;
  schedule();
}

void EventLog::deliver_stored(const std::shared_ptr<Turn>& turn,
                              const std::vector<std::pair<std::string, std::string>>& events) {
  if (turn->ending()) return;
  turn->stage = Turn::Stage::ending;
  for (const auto& [name, data] : events) {
    const std::int64_t seq = turn->next_seq++;
    auto frame = format_sse_event(name, data, std::to_string(seq));
    if (frame) turn->deliver(seq, name, *frame);
  }
  if (on_done_) on_done_(turn);
}

void EventLog::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  boost::asio::post(io_, [this] { flush(); });
}

struct BatchResult {
  std::vector<std::string> failures;  // per row: "" stored, else storage_full | store_unavailable
  std::vector<std::string> classes;   // per row: the exception class when it failed
  std::string batch_class;            // the whole batch's failure, when it had one
  double commit_s = -1;               // the one transaction's time, when it committed
};

namespace {

// What the store is given of a pending event: plain values (the turn itself stays on the loop).
struct Row {
  std::string turn;
  std::int64_t seq;
  std::string name;
  std::string data;
  std::optional<std::pair<std::string, std::optional<std::string>>> finish;
};

// One transaction for the batch; when it fails, row by row (marking the rows that failed).
BatchResult store_rows(store::Db& db, const std::vector<Row>& rows, const std::string& now_iso) {
  BatchResult r;
  r.failures.assign(rows.size(), "");
  r.classes.assign(rows.size(), "");
  store::turns::EventWriter writer(db);
  auto write = [&](const Row& p) {
    writer.append(p.turn, p.seq, p.name, p.data, now_iso);
    if (p.finish) writer.finish(p.turn, p.finish->first, p.finish->second, now_iso);
  };
  try {
    const auto began = std::chrono::steady_clock::now();
    store::Tx tx(db, "");  // inserts, and ends by key
    for (auto& p : rows) write(p);
    tx.commit();
    r.commit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    return r;
  } catch (const std::exception& e) {
    r.batch_class = typeid(e).name();
  }
  // The batch failed as a whole (one bad row, the disk, a writer holding the lock past the busy
  // timeout): store what can be stored row by row, so one turn's failure is not everybody's.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    try {
      store::Tx tx(db, "");  // inserts, and ends by key
      write(rows[i]);
      tx.commit();
    } catch (const std::exception& e) {
      r.failures[i] = std::string(store_failure_code(e));
      r.classes[i] = typeid(e).name();
    }
  }
  return r;
}

}  // namespace

void EventLog::flush() {
  scheduled_ = false;
  // One batch at a time, in order: the next waits for this one's commit (on PostgreSQL the commit
  // comes back in a later loop turn; on SQLite at once).
  if (pending_.empty() || in_flight_) return;
  auto batch = std::make_shared<std::vector<Pending>>();
  batch->swap(pending_);
  std::vector<Row> rows;
  rows.reserve(batch->size());
  for (auto& p : *batch) rows.push_back({p.turn->id, p.seq, p.name, p.data, p.finish});
  const auto started = std::chrono::steady_clock::now();
  in_flight_ = true;
  store_.run(
      "store turn events",
      [rows = std::move(rows), now_iso = store::iso_utc(store::now_unix())](store::Db& db) {
        return store_rows(db, rows, now_iso);
      },
      [this, batch, started](store::Stored<BatchResult> r) {
        in_flight_ = false;
        if (!r.ok()) {  // no connection at all: every row failed
          r.value.emplace();
          r.value->failures.assign(batch->size(), std::string(store_failure_code(r.code)));
          r.value->classes.assign(batch->size(), "unreachable");
        }
        deliver(*batch, *r.value, started);
        if (!pending_.empty()) schedule();
      },
      store::Lane::events);
}

// Stored first, then sent, in the same loop turn as the store's answer: a client never holds an
// event the store does not have (a kill between the two loses nothing a client saw), and nothing
// else on the loop (a resume, the next message, a status read) runs in between.
void EventLog::deliver(std::vector<Pending>& batch, const BatchResult& r, std::chrono::steady_clock::time_point started) {
  if (r.commit_s >= 0) {
    ++commits_;
    store::observe_commit("turn_events", r.commit_s);
  } else if (!r.batch_class.empty()) {
    log_event("turn_events_store_failed", {{"events", batch.size()}, {"class", r.batch_class}});
  }
  const auto stored = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Pending& p = batch[i];
    if (!r.failures[i].empty()) {
      p.failed = true;
      p.failure = r.failures[i];
      ++failures_;
      log_event("turn_event_lost", {{"turn", p.turn->id}, {"seq", p.seq}, {"event", p.name}, {"class", r.classes[i]}});
      // Its streams get the reason (an event without an id, never stored) and end; the client
      // resumes from the store. Ids only grow, so no later event reuses this one's id.
      auto frame = format_sse_event("error", nlohmann::json{{"code", p.failure}, {"ref", p.turn->id}}.dump());
      p.turn->close_streams(frame.value_or(""));
      continue;
    }
    if (on_stored_) on_stored_(*p.turn);
    auto frame = format_sse_event(p.name, p.data, std::to_string(p.seq));
    if (frame) p.turn->deliver(p.seq, p.name, *frame);
  }
  const auto sent = std::chrono::steady_clock::now();
  // A broadcast to thousands of waiting turns holds the loop this long: say what it cost.
  if (sent - started >= slow_)
    log_event("event_flush_slow", {{"events", batch.size()}, {"store_ms", ms_between(started, stored)},
                                   {"send_ms", ms_between(stored, sent)}});
  for (auto& p : batch) {
    if (!p.finish) continue;
    // A turn whose end could not be stored is let go here too; its end is stored once the store
    // takes writes again (schedule_unstored_retry).
    if (p.failed) unstored_ends_.push_back({p.turn->id, p.failure});
    if (on_done_) on_done_(p.turn);
  }
  schedule_unstored_retry();
}

void EventLog::schedule_unstored_retry() {
  if (unstored_ends_.empty() || retry_scheduled_) return;
  // From a timer, not from every flush: while the disk stays full each try is a failing write.
  retry_scheduled_ = true;
  auto timer = std::make_shared<boost::asio::steady_timer>(io_, kUnstoredRetry);
  timer->async_wait([this, timer](const boost::system::error_code& ec) {
    retry_scheduled_ = false;
    if (ec) return;
    const auto now = store::now_unix();
    auto ends = std::make_shared<std::vector<UnstoredEnd>>(std::move(unstored_ends_));
    unstored_ends_.clear();
    store_.run(
        "store unstored turn ends",
        [ends, now](store::Db& db) {
          std::vector<bool> stored;
          for (const auto& u : *ends) {
            try {
              store::turns::end_unstored(db, u.turn, u.code, now);
              stored.push_back(true);
            } catch (const std::exception&) {
              stored.push_back(false);
            }
          }
          return stored;
        },
        [this, ends](store::Stored<std::vector<bool>> stored) {
          for (std::size_t i = 0; i < ends->size(); ++i) {
            if (stored.ok() && (*stored.value)[i]) log_event("turn_end_stored", {{"turn", (*ends)[i].turn}, {"code", (*ends)[i].code}});
            else unstored_ends_.push_back((*ends)[i]);
          }
          schedule_unstored_retry();
        },
        store::Lane::events);
  });
}

}  // namespace plotq::server
