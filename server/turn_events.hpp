// Every event of every turn goes through here. An event's id (its seq) is the turn's next one,
// taken when it is emitted. Events emitted during one loop turn are handled together at the end of
// that loop turn: they are stored in ONE transaction (cached statements; a queue broadcast to
// 10,000 waiting turns is one commit; one batch at a time, in order, through the store's ordered
// lane), then their frames are written to the turns' streams in the loop turn that learns of the
// commit, so a client only ever sees stored events and nothing else on the loop can run between
// the commit's answer and the writes. When the commit fails the rows are stored one by one; a
// row that still fails is logged (turn_event_lost), is never sent, and its turn's streams get an
// id-less error{code} (storage_full or store_unavailable) and end, so the client resumes from what
// was stored. A turn whose end could not be stored is ended in the store later (error{code},
// done{state:"error"}), as soon as the store takes writes again. Loop thread only.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/turn.hpp"

namespace boost::asio {
class io_context;
}
namespace plotq::store {
class Db;
class Exec;
namespace turns {
class EventWriter;
}
}  // namespace plotq::store

namespace plotq::server {

struct BatchResult;  // what the store answered for a batch (turn_events.cpp)

class EventLog {
 public:
  // slow: a flush that takes this long is logged (event_flush_slow, with its frame and store times).
  EventLog(boost::asio::io_context& io, store::Exec& store, std::chrono::duration<double, std::milli> slow);
  ~EventLog();

  // Queues one event of the turn (ignored once the turn is ending).
  void emit(const std::shared_ptr<Turn>& turn, std::string_view name, const nlohmann::json& data);
  // The same with data already compact JSON (hot paths format it without nlohmann::json).
  void emit_json(const std::shared_ptr<Turn>& turn, std::string_view name, std::string data);
  // Queues done{turn, state} and the turn's end in the store (turns::finish with outcome = state
  // and code); the turn is ending from now on. on_done runs after the done event was delivered.
  void finish(const std::shared_ptr<Turn>& turn, const std::string& state, const std::optional<std::string>& code);
  // Sends events that the store already has (a turn ended by its admission's transaction, which
  // wrote them as seq 1, 2, ...; the last is done) and lets the turn go, as deliver() would.
  void deliver_stored(const std::shared_ptr<Turn>& turn, const std::vector<std::pair<std::string, std::string>>& events);
  // Called once per turn after its done event went out (the service forgets the turn there).
  void on_turn_done(std::function<void(const std::shared_ptr<Turn>&)> hook) { on_done_ = std::move(hook); }
  // Called for each event once it is stored, before it is sent (a cluster node hints its followers).
  void on_event_stored(std::function<void(const Turn&)> hook) { on_stored_ = std::move(hook); }

  // Stores what is queued now, then delivers it (normally posted; called directly at shutdown).
  void flush();
  bool in_flight() const { return in_flight_; }

  std::uint64_t commits() const { return commits_; }
  std::uint64_t failures() const { return failures_; }  // events that could not be stored
  std::size_t unstored_ends() const { return unstored_ends_.size(); }  // turn ends waiting for the store

 private:
  struct Pending {
    std::shared_ptr<Turn> turn;
    std::string name;
    std::string data;
    std::optional<std::pair<std::string, std::optional<std::string>>> finish;  // outcome, code
    std::int64_t seq = 0;
    bool failed = false;  // could not be stored (even on its own)
    std::string failure;  // then why: storage_full | store_unavailable
  };
  struct UnstoredEnd {
    std::string turn;
    std::string code;
  };
  void schedule();
  // The batch's frames to its turns' streams once the store answered (failed rows: id-less errors).
  void deliver(std::vector<Pending>& batch, const BatchResult& r, std::chrono::steady_clock::time_point started);
  // Ends in the store, from a timer, the turns whose done could not be stored, until it takes them.
  void schedule_unstored_retry();

  boost::asio::io_context& io_;
  store::Exec& store_;
  bool in_flight_ = false;  // a batch is with the store
  std::chrono::duration<double, std::milli> slow_;
  std::vector<Pending> pending_;
  bool scheduled_ = false;
  std::function<void(const std::shared_ptr<Turn>&)> on_done_;
  std::function<void(const Turn&)> on_stored_;
  std::vector<UnstoredEnd> unstored_ends_;
  bool retry_scheduled_ = false;
  std::uint64_t commits_ = 0, failures_ = 0;
};

}  // namespace plotq::server
