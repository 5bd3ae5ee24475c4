// Per-user and per-session limits of chat turns, all in SQLite (atomic, they survive restarts):
// messages per UTC minute and per UTC day, daily data runs and pipeline runs, runs per turn,
// the session that closes after N scope refusals, and the attack-strike lockout. Every limit is a
// field of TurnConfig (server/settings.cpp maps each to its PLOTQ_* variable).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/db.hpp"
#include "store/time.hpp"
#include "store/turns.hpp"
#include "store/types.hpp"

namespace plotq::server {

struct TurnConfig {
  // per user
  std::int64_t messages_per_minute = 10;     // PLOTQ_USER_MESSAGES_PER_MINUTE (UTC minute)
  std::int64_t messages_per_day = 200;       // PLOTQ_USER_MESSAGES_PER_DAY (UTC day)
  std::int64_t data_runs_per_day = 30;       // PLOTQ_DAILY_DATA_RUNS
  std::int64_t pipeline_runs_per_day = 40;   // PLOTQ_DAILY_PIPELINE_RUNS
  std::int64_t attack_strikes = 3;           // PLOTQ_ATTACK_STRIKES: strikes that lock a user out; 0 = never
  std::int64_t attack_strike_window_s = 86'400;  // PLOTQ_ATTACK_STRIKE_WINDOW_S
  // per session / turn
  std::int64_t session_refusals = 3;         // PLOTQ_SESSION_REFUSALS: scope refusals that close a session
  std::int64_t data_runs_per_turn = 2;       // PLOTQ_TURN_DATA_RUNS
  // wire caps (characters, UTF-8 code points)
  std::int64_t text_max_chars = 2000;        // PLOTQ_TURN_TEXT_MAX_CHARS
  std::int64_t data_code_max_chars = 6000;   // PLOTQ_TURN_DATA_CODE_MAX_CHARS
  std::int64_t plot_code_max_chars = 131'072;  // PLOTQ_TURN_PLOT_CODE_MAX_CHARS
  // runs
  double data_timeout_s = 30;                // PLOTQ_TURN_DATA_TIMEOUT_S: one data run's sandbox timeout
  double render_timeout_s = 60;              // PLOTQ_TURN_RENDER_TIMEOUT_S: one theme's render timeout
  // stream
  int retry_ms = 2000;                       // PLOTQ_SSE_RETRY_MS: the stream's first "retry:" line
  // PLOTQ_LOG_SLOW_FLUSH_MS: a loop turn whose events took this long to write and store is logged
  // (event_flush_slow); 0 = every one.
  double slow_flush_log_ms = 50;
  std::int64_t preview_rows = 20;            // PLOTQ_TURN_PREVIEW_ROWS: rows in a dataset event
  std::int64_t preview_cell_chars = 64;      // PLOTQ_TURN_PREVIEW_CELL_CHARS: longer cells are cut
};

// The names and values written to quota_limits at start (store::quotas::write_limits).
std::map<std::string, std::int64_t> limits_table(const TurnConfig& c);

// Books one daily data run or pipeline run: nullopt, or data_runs_exhausted | pipeline_runs_exhausted.
std::optional<std::string> book_run(store::Db& db, const TurnConfig& c, const std::string& user,
                                    store::TurnAction kind, store::UnixSeconds now);
// The same inside the caller's transaction, which holds Tx(db, quotas::quota_lock(user)) (a cluster
// node books a turn's run and enqueues its work in one transaction).
std::optional<std::string> book_run_in_tx(store::Db& db, const TurnConfig& c, const std::string& user,
                                    store::TurnAction kind, store::UnixSeconds now);

// True while the user has at least attack_strikes strikes in the last attack_strike_window_s.
bool locked_out(store::Db& db, const TurnConfig& c, const std::string& user, store::UnixSeconds now);

// What a scope verdict from the assistant service did: the refusal code to answer
// (out_of_scope, needs_data, session_closed when this refusal closed the session, locked_out when
// this strike locked the user out).
struct ScopeOutcome {
  std::string code;
  bool closed_session = false;
  bool locked = false;
};
// Records the verdict on the turn, adds a strike for attack, counts the session's refusals
// (needs_data never counts) and closes the session at session_refusals.
ScopeOutcome apply_scope(store::Db& db, const TurnConfig& c, const std::string& user,
                         const std::string& session, const std::string& turn, store::ScopeVerdict scope,
                         store::UnixSeconds now);

// A message's admission, and its turn's row, in one transaction under the user's quota lock (one
// store call), in the order plotqd has always checked: the message limits (rate_limited,
// daily_limit), a closed session (as the transaction reads it), the lockout, then a scope verdict; only a message that passes
// the first three is counted. All it reads is one statement, so on PostgreSQL the whole call is
// two round trips. A turn that ends here (a refusal, or a plain turn answered with plain_answer)
// is ended in the same transaction: its events (ready, refusal or message, done) and its end are
// written with it, and `events` lists them for the loop to send. A store failure writes nothing.
// refusal: the code to answer, nullopt to go on; scope: what a verdict did, for the log.
struct Admission {
  struct Event {
    std::string name;
    std::string data;  // compact JSON, as EventLog writes it
  };
  std::optional<std::string> refusal;
  std::optional<ScopeOutcome> scope;
  std::vector<Event> events;  // seq 1, 2, ...; empty when the turn goes on to its action
  bool session_missing = false;  // the session is gone: nothing was written (session_not_found)
  bool run_active = false;       // the user's last turn has not ended (on any node): nothing written (409 run_active)
};
Admission admit_message(store::Db& db, const TurnConfig& c, store::NewTurn turn, store::ScopeVerdict scope,
                        store::UnixSeconds now, std::string_view plain_answer);

// The fixed sentence shown with a refusal code.
std::string refusal_text(const std::string& code);

}  // namespace plotq::server
