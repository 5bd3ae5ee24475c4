// The one table of run outcomes. Every way a data run or a render theme can end has one row here,
// and every place that has to decide something about an outcome reads its row: the ledger (refused
// or failed), a chat turn (how it ends and with which code), /run-data and /render (kept as the
// answer, or an error answer that a retry runs again), the sweep (the file's outcome, or a stop of
// the sweep that --resume picks up) and the sentence a user reads when nothing more specific is
// known. Add an outcome here and nowhere else.
#pragma once
#include <string>
#include <string_view>

namespace plotq::runs {

// How a chat turn whose run ended so ends.
enum class TurnEnd {
  done,     // the action goes on (ok)
  refused,  // refusal{code, text}: plotq would not run this code, and says why
  failed,   // error{code}: the run was tried and did not make what was asked
};

struct Outcome {
  std::string_view name;  // the wire name: the ledger's reason, the answer's outcome, the sweep's reason
  // The run says nothing about the code: the host's trouble (no sandbox, low memory, a failed fork,
  // a dead renderer) or a stop from outside (cancel). A turn does not blame the code; /run-data and
  // /render answer `job_error` and do not keep it as the job's answer, so a retry runs again; a
  // sweep stops (exit 1) instead of recording it as the file's outcome. Never set for an outcome
  // the code can bring about by itself, or a hostile file could stop every sweep it is in.
  bool host;
  bool refusal;                // the ledger books it refused (a policy said no), not failed
  TurnEnd turn_end;            // how a chat turn ends with it
  std::string_view turn_code;  // the code of that refusal or error ("" for ok)
  std::string_view job_error;  // host outcomes: the error code /run-data and /render answer with
  std::string_view sentence;   // what a user reads when the run has nothing more specific to say
};

// Every row, in the order docs/outcomes.md lists them.
extern const Outcome kOutcomes[];
extern const std::size_t kOutcomeCount;

// The row of `name`; an outcome not in the table gets the row of "unknown" (a failure of the code's
// run, never the host's, never a refusal), so a new reason from below is never taken for success.
const Outcome& outcome(std::string_view name);

// True when `name` has its own row.
bool known_outcome(std::string_view name);

// The outcomes table as Markdown (docs/outcomes.md is this, generated; a test compares them).
std::string outcomes_markdown();

}  // namespace plotq::runs
