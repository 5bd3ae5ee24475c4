// The chat turn flow (docs/api.md): a turn starts at once; the per-user limits come
// first; a plain turn is answered by the server (ready -> message -> done) even while the slot is
// held; only a data or plot action takes the render slot (through TurnSlot, queued FIFO with
// status{queued} updates). Every turn ends with done{turn, state}. Loop thread only.
#pragma once
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "runs/ledger_row.hpp"
#include "server/app.hpp"
#include "server/limits.hpp"
#include "server/session_owners.hpp"
#include "server/turn.hpp"
#include "server/turn_action.hpp"
#include "server/turn_events.hpp"
#include "server/turn_wire.hpp"
#include "store/cluster.hpp"

namespace plotq::runs {
class Renderer;
}

namespace plotq::server {

class TurnService {
 public:
  explicit TurnService(App& app);
  ~TurnService();

  App& app;
  const TurnConfig& cfg;
  EventLog events;
  TurnRegistry turns;
  SessionOwners owners;  // sessions this node has seen, by id: their user
  std::unique_ptr<runs::Renderer> renderer;  // null when plot renders are not built in
  // This node's part in a cluster (docs/scale-out.md); null on a single node. Made by the turn
  // routes with the service; main joins it before serving and stops it at shutdown.
  std::unique_ptr<class ClusterNode> cluster;

  // Starts a turn for a message that passed the HTTP checks (413, 404, 409): admits and creates it
  // in one transaction, streams it on res and runs it. When the store fails, res gets the store's
  // error instead; when the session is gone, session_not_found.
  void start(const std::string& user, const std::string& session_id, MessageRequest msg,
             std::shared_ptr<Responder> res);

  // POST .../cancel: "cancelled" (a waiting or not yet running turn ended), "cancelling" (its running
  // job is being killed; the turn ends when it is gone) or "done" (it had already ended).
  std::string cancel(const std::string& turn_id);

  // SIGTERM: every live turn ends with error{unavailable}; running jobs are killed.
  void shutdown();

  // ---- cluster (server/cluster_node.hpp) ----
  // Runs a turn whose queue entry this node claimed: its action, under a local slot, writing its
  // events from the entry's next seq (a follower of it on this node becomes its writer).
  void run_claimed(const store::cluster::Claimed& c, std::int64_t epoch, const TurnAction& action);
  // A fenced node lets a turn go without writing anything: its job killed, its streams ended with
  // `closing` (their clients resume on another node), the turn forgotten here.
  void drop(const std::shared_ptr<Turn>& t, const std::string& closing);
  // Turns this node writes (not followers): the drain waits for these.
  std::size_t own_turns() const;

  // ---- endings (used by the actions) ----
  void refuse(const std::shared_ptr<Turn>& t, const std::string& code, const std::string& text = "");
  void fail(const std::shared_ptr<Turn>& t, const std::string& code);
  void complete(const std::shared_ptr<Turn>& t);
  void emit(const std::shared_ptr<Turn>& t, std::string_view name, const nlohmann::json& data) {
    events.emit(t, name, data);
  }

  // Runs step (entering the render queue) once every turn that started before t has entered the
  // queue or ended: turns take their queue places in the order they started, also when their
  // store calls come back in another order (PostgreSQL's pool). A null step: t will not enter.
  // RunningAction::take_slot enters through it.
  void in_arrival_order(const std::shared_ptr<Turn>& t, std::function<void()> step);

  // Sends status{queued, position, waiting}: at once when the last one is older than
  // PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S (queue::Config), else once at the end of that interval with the
  // newest position (the queue merges its broadcasts at the same rate; this keeps a turn that entered
  // between two of them from getting two statuses within the interval).
  void queued_status(const std::shared_ptr<Turn>& t, queue::Position p);
  // A refused run's ledger row (quota, capacity, cancelled while waiting); logged when it cannot be written.
  void ledger_refused(const runs::RunWho& who, store::RunKind kind, runs::Outcome code, double slot_wait_s = 0);
  // Seconds since the turn queued for the slot.
  static double waited(const Turn& t);

  // The plain turn's answer: plotq has no language model, so it says what it can do.
  static const char* help_text();

 private:
  // An admitted message with an action runs it (a refusal, a scope verdict and a plain answer end
  // the turn at its admission: ended_at_admission).
  void answer(const std::shared_ptr<Turn>& t, const MessageRequest& msg);
  // Runs the data or plot action (an exception ends the turn with error{internal}).
  void run_action(const std::shared_ptr<Turn>& t, const TurnAction& action);
  // A turn the admission ended (a refusal, a plain answer): its events are stored, they are sent.
  void ended_at_admission(const std::shared_ptr<Turn>& t, const Admission& a, const MessageRequest& msg);
  void on_deadline(const std::shared_ptr<Turn>& t);
  // The turn's hold on this node's render slot (taken at its first job; its deadline calls on_deadline).
  void give_slot(const std::shared_ptr<Turn>& t);
  void end(const std::shared_ptr<Turn>& t, const std::string& state, const std::optional<std::string>& code);
  void send_deferred_statuses();

  // Turns with a deferred status, by due time; one timer for all of them.
  struct Deferred {
    std::chrono::steady_clock::time_point due;
    std::weak_ptr<Turn> turn;
    bool operator>(const Deferred& o) const { return due > o.due; }
  };
  std::priority_queue<Deferred, std::vector<Deferred>, std::greater<Deferred>> deferred_;
  std::unique_ptr<boost::asio::steady_timer> deferred_timer_;
  std::uint64_t next_arrival_ = 0;   // the next turn's arrival number
  std::uint64_t next_to_enter_ = 0;  // the first arrival that has not had its turn at the queue
  std::map<std::uint64_t, std::function<void()>> waiting_to_enter_;
  std::chrono::steady_clock::time_point deferred_timer_at_{};
};

// The data action (a RunningAction, server/turn_action.hpp): book a daily data run, take the turn's
// slot, run the snippet in the sandbox, store the table as the session's next dataset version
// (server/turn_data.cpp).
void run_data_action(TurnService& s, const std::shared_ptr<Turn>& t, const TurnAction& action);
// The plot action: book a daily pipeline run, take the slot, render each theme, store the PNGs
// (server/turn_plot.cpp).
void run_plot_action(TurnService& s, const std::shared_ptr<Turn>& t, const TurnAction& action);
// Makes the service's Renderer when plot renders are built in (server/turn_plot.cpp).
std::unique_ptr<runs::Renderer> make_renderer(App& app);

}  // namespace plotq::server
