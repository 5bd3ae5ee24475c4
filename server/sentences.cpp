#include "server/sentences.hpp"

#include <iterator>

namespace plotq::server {

const Sentence kSentences[] = {
    // A turn's error{code} (docs/api.md "Turn events").
    {"capacity", "The render queue is full or the wait ran out. Please try again in a minute."},
    {"deadline", "The run took longer than a turn may take."},
    {"cancelled", "Cancelled."},
    {"run_failed", "The code ran but failed."},
    {"unsupported", "This kind of request is not supported yet."},
    {"runtime_unavailable", "This plotting library cannot be rendered here."},
    {"unavailable", "The sandbox cannot run code right now. Please try again later."},
    {"abandoned", "The server restarted while this ran. Please send it again."},
    {"node_lost", "The server running this stopped. It was not run again: please send it again."},
    {"internal", "Something went wrong on the server."},
    {"storage_full", "The server's storage is full. Please try again later."},
    {"store_unavailable", "The server cannot save right now. Please send it again in a moment."},

    // A turn's refusal{code} (server/limits.cpp, the scope check, the validator).
    {"rate_limited", "Too many messages this minute. Wait a moment and send it again."},
    {"daily_limit", "You reached today's message limit. It resets at midnight UTC."},
    {"session_closed", "This session is closed after repeated off-topic requests. Reload the page to start a new one."},
    {"locked_out", "Your account is locked for a while after repeated misuse."},
    {"out_of_scope", "plotq only makes datasets and plots; that request is outside what it does."},
    {"needs_data", "This needs data first: paste a table in the data panel or send a data snippet."},
    {"data_runs_exhausted", "You used today's data runs. They reset at midnight UTC."},
    {"pipeline_runs_exhausted", "You used today's plot renders. They reset at midnight UTC."},
    {"turn_run_limit", "A turn may start only a few runs; send a new message for the next one."},
    {"no_number_column", "The table has no number or date column, so there is nothing to plot. Add one and try again."},
    {"invalid_code", "The code was not run."},

    // HTTP errors (server/errors.hpp) a person can meet on the page.
    {"bad_request", "The request was malformed."},
    {"unauthenticated", "You are not signed in."},
    {"forbidden", "You may not do that."},
    {"not_found", "That does not exist."},
    {"session_not_found", "This session is gone. Start a new one."},
    {"method_not_allowed", "That request is not allowed here."},
    {"job_conflict", "A different request already used that job id."},
    {"run_active", "Another turn of yours is still running."},
    {"too_large", "That is larger than the server accepts."},
    {"too_long", "That text is longer than allowed."},
    {"invalid_job", "The request was not understood."},
    {"invalid_library", "plotq does not draw with that library."},
    {"headers_too_large", "The request's headers are too large."},
    {"client_gone", "The connection closed before the answer."},
    {"busy", "The render slot stayed busy. Please try again in a minute."},
    {"low_memory", "The server is low on memory. Please try again shortly."},
    {"stuck", "A stopped run is still alive on the server. Please try again shortly."},
    {"sandbox_unavailable", "The sandbox cannot run code here."},
    {"renderer_failed", "The figure renderer failed. Please try again."},
    {"sandbox_lost", "The sandbox lost the run. Please try again."},
    {"io", "A server I/O failure stopped the run. Please try again."},
    {"scratch_full", "The sandbox's scratch space is full. Please try again later."},

    // A pasted table's refusals (POST .../datasets; table/classify).
    {"code", "That looks like code, not a table: send it as a data snippet instead."},
    {"formula", "That looks like a formula, not a table: send a data snippet that computes it instead."},
    {"encoding", "The text is not valid UTF-8."},
    {"control_chars", "The text has control characters."},
    {"empty", "Nothing to add: the paste is empty."},
    {"unparseable", "No table could be read from it (commas or tabs, first row = column names)."},
    {"too_many_columns", "Too many columns."},
    {"too_many_rows", "Too many rows."},
    {"cell_too_long", "A cell is too long."},
};
const std::size_t kSentenceCount = std::size(kSentences);

std::string_view sentence(std::string_view code) {
  for (const auto& s : kSentences)
    if (s.code == code) return s.text;
  return "The request was refused.";
}

nlohmann::json sentences_json() {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& s : kSentences) out[std::string(s.code)] = s.text;
  return out;
}

}  // namespace plotq::server
