// Every event of every turn goes through here: stored first, then sent. Events emitted during one
// loop turn are written in ONE SQLite transaction at the end of that loop turn (a queue broadcast
// to 10,000 waiting turns is one commit, not 10,000), and only after the commit are they delivered
// to the turns' streams, with their seq as the SSE id. Loop thread only.
#pragma once
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
}

namespace plotq::server {

class EventLog {
 public:
  EventLog(boost::asio::io_context& io, store::Db& db);

  // Queues one event of the turn (ignored once the turn is ending).
  void emit(const std::shared_ptr<Turn>& turn, std::string_view name, const nlohmann::json& data);
  // Queues done{turn, state} and the turn's end in the store (turns::finish with outcome = state
  // and code); the turn is ending from now on. on_done runs after the done event was delivered.
  void finish(const std::shared_ptr<Turn>& turn, const std::string& state, const std::optional<std::string>& code);
  // Called once per turn after its done event went out (the service forgets the turn there).
  void on_turn_done(std::function<void(const std::shared_ptr<Turn>&)> hook) { on_done_ = std::move(hook); }

  // Stores and delivers what is queued now (normally posted; called directly at shutdown).
  void flush();

  std::uint64_t commits() const { return commits_; }
  std::uint64_t failures() const { return failures_; }

 private:
  struct Pending {
    std::shared_ptr<Turn> turn;
    std::string name;
    std::string data;
    std::optional<std::pair<std::string, std::optional<std::string>>> finish;  // outcome, code
    std::int64_t seq = 0;
  };
  void schedule();

  boost::asio::io_context& io_;
  store::Db& db_;
  std::vector<Pending> pending_;
  bool scheduled_ = false;
  std::function<void(const std::shared_ptr<Turn>&)> on_done_;
  std::uint64_t commits_ = 0, failures_ = 0;
};

}  // namespace plotq::server
