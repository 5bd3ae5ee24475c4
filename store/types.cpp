#include "store/types.hpp"

#include <array>

namespace plotq::store {
namespace {

template <class E, size_t N>
std::string_view name_of(E v, const std::array<std::string_view, N>& names) {
  return names.at(size_t(v));
}

template <class E, size_t N>
std::optional<E> parse(std::string_view s, const std::array<std::string_view, N>& names) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == s) return E(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 3> kCounter{"messages", "data_runs", "pipeline_runs"};
constexpr std::array<std::string_view, 4> kClose{"refusals", "admin", "idle", "user"};
constexpr std::array<std::string_view, 3> kAction{"none", "data", "plot"};
constexpr std::array<std::string_view, 4> kScope{"none", "out_of_scope", "attack", "needs_data"};
constexpr std::array<std::string_view, 3> kStatus{"queued", "running", "done"};
constexpr std::array<std::string_view, 4> kKind{"data", "render", "sweep", "raw"};
constexpr std::array<std::string_view, 3> kOutcome{"ok", "failed", "refused"};
constexpr std::array<std::string_view, 2> kSource{"code", "paste"};
constexpr std::array<std::string_view, 2> kSweepOutcome{"render", "fail"};

}  // namespace

std::string_view to_string(Counter v) { return name_of(v, kCounter); }
std::string_view to_string(CloseReason v) { return name_of(v, kClose); }
std::string_view to_string(TurnAction v) { return name_of(v, kAction); }
std::string_view to_string(ScopeVerdict v) { return name_of(v, kScope); }
std::string_view to_string(TurnStatus v) { return name_of(v, kStatus); }
std::string_view to_string(RunKind v) { return name_of(v, kKind); }
std::string_view to_string(RunOutcome v) { return name_of(v, kOutcome); }
std::string_view to_string(DatasetSource v) { return name_of(v, kSource); }
std::string_view to_string(SweepOutcome v) { return name_of(v, kSweepOutcome); }

std::optional<Counter> parse_counter(std::string_view s) { return parse<Counter>(s, kCounter); }
std::optional<CloseReason> parse_close_reason(std::string_view s) { return parse<CloseReason>(s, kClose); }
std::optional<TurnAction> parse_turn_action(std::string_view s) { return parse<TurnAction>(s, kAction); }
std::optional<ScopeVerdict> parse_scope_verdict(std::string_view s) { return parse<ScopeVerdict>(s, kScope); }
std::optional<TurnStatus> parse_turn_status(std::string_view s) { return parse<TurnStatus>(s, kStatus); }
std::optional<RunKind> parse_run_kind(std::string_view s) { return parse<RunKind>(s, kKind); }
std::optional<RunOutcome> parse_run_outcome(std::string_view s) { return parse<RunOutcome>(s, kOutcome); }
std::optional<DatasetSource> parse_dataset_source(std::string_view s) { return parse<DatasetSource>(s, kSource); }
std::optional<SweepOutcome> parse_sweep_outcome(std::string_view s) { return parse<SweepOutcome>(s, kSweepOutcome); }

}  // namespace plotq::store
