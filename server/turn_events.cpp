#include "server/turn_events.hpp"

#include "store/sql.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <typeinfo>

#include "common/log.hpp"
#include "server/errors.hpp"
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

EventLog::EventLog(boost::asio::io_context& io, store::Db& db, std::chrono::duration<double, std::milli> slow)
    : io_(io), db_(db), slow_(slow) {}

EventLog::~EventLog() = default;

void EventLog::emit(const std::shared_ptr<Turn>& turn, std::string_view name, const nlohmann::json& data) {
  if (turn->ending()) return;
  emit_json(turn, name, data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void EventLog::emit_json(const std::shared_ptr<Turn>& turn, std::string_view name, std::string data) {
  if (turn->ending()) return;
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

void EventLog::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  boost::asio::post(io_, [this] { flush(); });
}

void EventLog::store(std::vector<Pending>& batch, const std::string& now_iso) {
  auto write = [&](const Pending& p) {
    if (!writer_) writer_ = std::make_unique<store::turns::EventWriter>(db_);
    writer_->append(p.turn->id, p.seq, p.name, p.data, now_iso);
    if (p.finish) writer_->finish(p.turn->id, p.finish->first, p.finish->second, now_iso);
  };
  try {
    const auto began = std::chrono::steady_clock::now();
    store::Tx tx(db_);
    for (auto& p : batch) write(p);
    tx.commit();
    ++commits_;
    store::observe_commit("turn_events", std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
    return;
  } catch (const std::exception& e) {
    log_event("turn_events_store_failed", {{"events", batch.size()}, {"class", typeid(e).name()}, {"what", e.what()}});
  }
  // The batch failed as a whole (one bad row, the disk, a writer holding the lock past the busy
  // timeout): store what can be stored row by row, so one turn's failure is not everybody's.
  for (auto& p : batch) {
    try {
      store::Tx tx(db_);
      write(p);
      tx.commit();
    } catch (const std::exception& e) {
      p.failed = true;
      p.failure = std::string(store_failure_code(e));
      ++failures_;
      log_event("turn_event_lost", {{"turn", p.turn->id}, {"seq", p.seq}, {"event", p.name}, {"class", typeid(e).name()}});
    }
  }
}

void EventLog::flush() {
  scheduled_ = false;
  if (pending_.empty()) return;
  std::vector<Pending> batch;
  batch.swap(pending_);
  const std::string now_iso = store::iso_utc(store::now_unix());
  const auto started = std::chrono::steady_clock::now();

  // Stored first, then sent, in the same loop turn: a client never holds an event the store does
  // not have (a kill between the two loses nothing a client saw), and nothing else on the loop (a
  // resume, the next message, a status read) runs in between.
  store(batch, now_iso);
  const auto stored = std::chrono::steady_clock::now();
  for (auto& p : batch) {
    if (p.failed) {
      // Its streams get the reason (an event without an id, never stored) and end; the client
      // resumes from the store. Ids only grow, so no later event reuses this one's id.
      auto frame = format_sse_event("error", nlohmann::json{{"code", p.failure}, {"ref", p.turn->id}}.dump());
      p.turn->close_streams(frame.value_or(""));
      continue;
    }
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
    std::erase_if(unstored_ends_, [&](const UnstoredEnd& u) {
      try {
        store::turns::end_unstored(db_, u.turn, u.code, now);
        log_event("turn_end_stored", {{"turn", u.turn}, {"code", u.code}});
        return true;
      } catch (const std::exception&) {
        return false;
      }
    });
    schedule_unstored_retry();
  });
}

}  // namespace plotq::server
