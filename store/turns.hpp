// turns and turn_events: a chat turn's lifecycle (queued -> running -> done) and every SSE event
// it sent, numbered 1, 2, 3, ... so a reconnecting client resumes after Last-Event-ID.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"
#include "store/types.hpp"

namespace plotq::store {

struct Turn {
  std::string id;
  std::string session_id;
  std::string user_id;
  UnixSeconds created_at = 0;
  std::int64_t text_chars = 0;  // length of the message; the text itself is never stored
  TurnAction action = TurnAction::none;
  ScopeVerdict scope = ScopeVerdict::none;
  TurnStatus status = TurnStatus::queued;
  std::optional<std::string> outcome;  // when done: ok | refused | error | cancelled | abandoned ...
  std::optional<std::string> code;     // refusal or error code, if any
  std::optional<UnixSeconds> ended_at;
};

struct NewTurn {
  std::string id;  // the turn's run id
  std::string session_id;
  std::string user_id;  // must own session_id (else StoreError "constraint")
  std::int64_t text_chars = 0;
  TurnAction action = TurnAction::none;
  bool running = false;  // written as started (a plain turn admitted in the same transaction)
  // A cluster node admitting it (docs/scale-out.md): the node and epoch that own its writes.
  std::optional<std::string> node;
  std::int64_t node_epoch = 0;
};

struct TurnEvent {
  std::string turn_id;
  std::int64_t seq = 0;  // 1, 2, 3 ... per turn; the SSE id
  std::string event;     // SSE event name: ready, status, message, plot, refusal, error, done, ...
  std::string data;      // compact JSON
  UnixSeconds created_at = 0;
};

namespace turns {
void create(Db& db, const NewTurn& turn, UnixSeconds now);  // status queued (running when turn.running)
std::optional<Turn> get(Db& db, const std::string& id);
// queued -> running. Unknown: not_found; not queued: bad_state.
void start(Db& db, const std::string& id);
// Records the scope verdict of the trusted caller (any status). Unknown: not_found.
void set_scope(Db& db, const std::string& id, ScopeVerdict scope);
// -> done with an outcome word ([a-z]+) and an optional code. Unknown: not_found; done: bad_state.
void finish(Db& db, const std::string& id, const std::string& outcome,
            const std::optional<std::string>& code, UnixSeconds now);
// Appends an event with the next seq (returned). data must be valid JSON (else "constraint").
std::int64_t append_event(Db& db, const std::string& turn_id, const std::string& event,
                          const std::string& data_json, UnixSeconds now);
// Events with seq > after_seq, oldest first, at most limit.
std::vector<TurnEvent> events_after(Db& db, const std::string& turn_id, std::int64_t after_seq,
                                    int limit = 1000);
// The user's turn that is queued or running, if any (plotqd allows one in flight per user).
std::optional<Turn> active_for_user(Db& db, const std::string& user_id);
// At plotqd start: turns left queued/running by a previous process end as 'abandoned' (code
// 'abandoned'), and each gets the two events its stream never sent: error{code:"abandoned", ref}
// and done{state:"error", turn}, so a resume with Last-Event-ID ends with a done like any other
// turn. Their seqs start kAbandonedSeqGap above the turn's last stored event: the dead process may
// have sent events it never stored, and an id a client saw must never name another event.
// One transaction. Returns how many turns it ended.
inline constexpr std::int64_t kAbandonedSeqGap = 1000;
std::int64_t finish_abandoned(Db& db, UnixSeconds now);
// The same for one turn of this process whose own end the store refused (a full file system):
// outcome 'error', code as given (storage_full, store_unavailable), the two events kAbandonedSeqGap
// above its last stored one. Nothing when the turn is already done. Throws StoreError.
void end_unstored(Db& db, const std::string& turn_id, const std::string& code, UnixSeconds now);
// Ends each turn (id, its last stored seq) inside the caller's transaction: error{code, ref} and
// done{state} stored kAbandonedSeqGap above that seq (state "cancelled" for outcome cancelled,
// else "error"), the row done with outcome and code.
void end_with_error(Db& db, const std::vector<std::pair<std::string, std::int64_t>>& turns,
                    const std::string& outcome, const std::string& code, UnixSeconds now);
std::vector<Turn> list_for_session(Db& db, const std::string& session_id, int limit = 1000);
}  // namespace turns

}  // namespace plotq::store
