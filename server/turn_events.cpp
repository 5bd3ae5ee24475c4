#include "server/turn_events.hpp"

#include <SQLiteCpp/Transaction.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <typeinfo>

#include "common/log.hpp"
#include "store/db.hpp"
#include "store/turn_event_writer.hpp"
#include "store/turns.hpp"

namespace plotq::server {
namespace {

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
  pending_.push_back({turn, std::string(name), std::move(data), std::nullopt, turn->next_seq++});
  schedule();
}

void EventLog::finish(const std::shared_ptr<Turn>& turn, const std::string& state,
                      const std::optional<std::string>& code) {
  if (turn->ending()) return;
  nlohmann::json done = {{"turn", turn->id}, {"state", state}};
  pending_.push_back({turn, "done", done.dump(), std::make_pair(state, code), turn->next_seq++});
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
    SQLite::Transaction tx(db_.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    for (auto& p : batch) write(p);
    tx.commit();
    ++commits_;
    return;
  } catch (const std::exception& e) {
    log_event("turn_events_store_failed", {{"events", batch.size()}, {"class", typeid(e).name()}, {"what", e.what()}});
  }
  // The batch failed as a whole (one bad row, the disk, a writer holding the lock past the busy
  // timeout): store what can be stored row by row, so one turn's failure is not everybody's.
  for (auto& p : batch) {
    try {
      SQLite::Transaction tx(db_.sql(), SQLite::TransactionBehavior::IMMEDIATE);
      write(p);
      tx.commit();
    } catch (const std::exception& e) {
      p.failed = true;
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

  // Frames go out first (a broadcast reaches 10,000 streams without waiting for 10,000 inserts),
  // then the batch is committed in the same loop turn: nothing else runs on the loop in between,
  // so no reader, resume or next message can see the store without these events.
  for (auto& p : batch) {
    auto frame = format_sse_event(p.name, p.data, std::to_string(p.seq));
    if (frame) p.turn->deliver(p.seq, p.name, *frame);
  }
  const auto sent = std::chrono::steady_clock::now();
  store(batch, now_iso);
  const auto stored = std::chrono::steady_clock::now();
  // A broadcast to thousands of waiting turns holds the loop this long: say what it cost.
  if (stored - started >= slow_)
    log_event("event_flush_slow", {{"events", batch.size()}, {"send_ms", ms_between(started, sent)},
                                   {"store_ms", ms_between(sent, stored)}});
  for (auto& p : batch) {
    // An event that was sent but could not be stored: its streams end, so the client resumes
    // from the store (it sees the gap in ids, never another event under a sent id: ids only grow).
    if (p.failed) p.turn->close_streams();
    if (p.finish && on_done_) on_done_(p.turn);  // a turn whose end could not be stored is let go too
  }
}

}  // namespace plotq::server
