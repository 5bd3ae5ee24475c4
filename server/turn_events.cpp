#include "server/turn_events.hpp"

#include <SQLiteCpp/Transaction.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <typeinfo>

#include "common/log.hpp"
#include "store/db.hpp"
#include "store/turns.hpp"

namespace plotq::server {

EventLog::EventLog(boost::asio::io_context& io, store::Db& db) : io_(io), db_(db) {}

void EventLog::emit(const std::shared_ptr<Turn>& turn, std::string_view name, const nlohmann::json& data) {
  if (turn->ending()) return;
  pending_.push_back({turn, std::string(name),
                      data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), std::nullopt, 0});
  schedule();
}

void EventLog::finish(const std::shared_ptr<Turn>& turn, const std::string& state,
                      const std::optional<std::string>& code) {
  if (turn->ending()) return;
  nlohmann::json done = {{"turn", turn->id}, {"state", state}};
  pending_.push_back({turn, "done", done.dump(), std::make_pair(state, code), 0});
  turn->stage = Turn::Stage::ending;
  schedule();
}

void EventLog::schedule() {
  if (scheduled_) return;
  scheduled_ = true;
  boost::asio::post(io_, [this] { flush(); });
}

void EventLog::flush() {
  scheduled_ = false;
  if (pending_.empty()) return;
  std::vector<Pending> batch;
  batch.swap(pending_);
  auto now = store::now_unix();
  bool stored = false;
  try {
    SQLite::Transaction tx(db_.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    for (auto& p : batch) {
      p.seq = store::turns::append_event(db_, p.turn->id, p.name, p.data, now);
      if (p.finish) store::turns::finish(db_, p.turn->id, p.finish->first, p.finish->second, now);
    }
    tx.commit();
    stored = true;
    ++commits_;
  } catch (const std::exception& e) {
    ++failures_;
    log_event("turn_events_store_failed", {{"events", batch.size()}, {"class", typeid(e).name()}});
  }

  if (stored) {
    for (auto& p : batch) {
      auto frame = format_sse_event(p.name, p.data, std::to_string(p.seq));
      if (frame) p.turn->deliver(p.seq, p.name, *frame);
      if (p.finish && on_done_) on_done_(p.turn);
    }
    return;
  }
  // Not stored, so not sent. Streams of these turns end (a resume finds what was stored); a turn
  // whose end could not be stored is still let go, so its user is not blocked for good.
  for (auto& p : batch) {
    p.turn->close_streams();
    if (p.finish) {
      try {
        store::turns::finish(db_, p.turn->id, p.finish->first, p.finish->second, now);
      } catch (const std::exception&) {
      }
      if (on_done_) on_done_(p.turn);
    }
  }
}

}  // namespace plotq::server
