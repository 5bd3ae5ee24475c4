// The closed vocabularies of the schema (each is a CHECK in migrations/0001_init.sql), as enums
// with to_string / parse_* so callers cannot misspell them.
#pragma once
#include <optional>
#include <string_view>

namespace plotq::store {

enum class Counter { messages, data_runs, pipeline_runs };           // quota counters
enum class CloseReason { refusals, admin, idle, user };              // sessions.close_reason
enum class TurnAction { none, data, plot };                          // turns.action
enum class ScopeVerdict { none, out_of_scope, attack, needs_data };  // turns.scope
enum class TurnStatus { queued, running, done };                     // turns.status
enum class RunKind { data, render, sweep, raw };                     // runs.kind
enum class RunOutcome { ok, failed, refused };                       // runs.outcome
enum class DatasetSource { code, paste };                            // dataset_versions.source
enum class SweepOutcome { render, fail };                            // sweep_results.outcome

std::string_view to_string(Counter v);
std::string_view to_string(CloseReason v);
std::string_view to_string(TurnAction v);
std::string_view to_string(ScopeVerdict v);
std::string_view to_string(TurnStatus v);
std::string_view to_string(RunKind v);
std::string_view to_string(RunOutcome v);
std::string_view to_string(DatasetSource v);
std::string_view to_string(SweepOutcome v);

std::optional<Counter> parse_counter(std::string_view s);
std::optional<CloseReason> parse_close_reason(std::string_view s);
std::optional<TurnAction> parse_turn_action(std::string_view s);
std::optional<ScopeVerdict> parse_scope_verdict(std::string_view s);
std::optional<TurnStatus> parse_turn_status(std::string_view s);
std::optional<RunKind> parse_run_kind(std::string_view s);
std::optional<RunOutcome> parse_run_outcome(std::string_view s);
std::optional<DatasetSource> parse_dataset_source(std::string_view s);
std::optional<SweepOutcome> parse_sweep_outcome(std::string_view s);

}  // namespace plotq::store
