// plotq quotas [--user ID] [--day YYYY-MM-DD] [--json]: per-user usage against the limits plotqd
// runs with (a table; JSON with --json). Works on a fresh or missing database (headers only).
// plotq quotas reset --user ID [--counter messages|data_runs|pipeline_runs|strikes]: an admin reset
// of today's counters (all three without --counter) or of the user's strikes.
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "store/db.hpp"
#include "store/migrate.hpp"
#include "store/quotas.hpp"
#include "store/strikes.hpp"
#include "store/time.hpp"
#include "tools/commands.hpp"
#include "tools/store_read.hpp"
#include "tools/text_table.hpp"

namespace plotq::cli {
namespace {

constexpr const char* kUsage =
    "usage: plotq quotas [--user ID] [--day YYYY-MM-DD] [--json]\n"
    "       plotq quotas reset --user ID [--counter messages|data_runs|pipeline_runs|strikes]\n";

std::optional<std::int64_t> limit_of(const std::map<std::string, std::int64_t>& limits, const char* name) {
  auto it = limits.find(name);
  if (it == limits.end()) return std::nullopt;
  return it->second;
}

std::string cell(std::int64_t n, std::optional<std::int64_t> limit) {
  return std::to_string(n) + "/" + (limit ? std::to_string(*limit) : "-");
}

nlohmann::json json_limit(std::optional<std::int64_t> v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

int reset(const std::string& path, Args& args) {
  std::string user = take_option(args, "--user");
  std::string counter = take_option(args, "--counter");
  if (!args.empty() || user.empty()) {
    std::fprintf(stderr, "plotq quotas reset: %s\n%s",
                 user.empty() ? "--user is required" : ("unexpected argument '" + args[0] + "'").c_str(), kUsage);
    return 2;
  }
  std::optional<store::Counter> which;
  bool strikes = counter == "strikes";
  if (!counter.empty() && !strikes) {
    which = store::parse_counter(counter);
    if (!which) {
      std::fprintf(stderr, "plotq quotas reset: unknown counter '%s'\n%s", counter.c_str(), kUsage);
      return 2;
    }
  }
  auto db = store::Db::open(path, store::options_from_env());
  store::require_current_schema(*db);
  std::int64_t n = strikes ? store::strikes::clear(*db, user)
                           : store::quotas::reset(*db, user, which, store::now_unix());
  std::printf("reset %s for user %s (%lld row%s removed)\n",
              counter.empty() ? "today's counters" : counter.c_str(), user.c_str(), static_cast<long long>(n),
              n == 1 ? "" : "s");
  return 0;
}

int list(const std::string& path, Args& args) {
  std::string user = take_option(args, "--user");
  std::string day = take_option(args, "--day");
  bool json = take_flag(args, "--json");
  if (!args.empty()) {
    std::fprintf(stderr, "plotq quotas: unexpected argument '%s'\n%s", args[0].c_str(), kUsage);
    return 2;
  }
  store::UnixSeconds now = store::now_unix();
  if (day.empty()) day = store::utc_day(now);
  if (!store::is_utc_day(day)) {
    std::fprintf(stderr, "plotq quotas: --day must be YYYY-MM-DD, got '%s'\n", day.c_str());
    return 2;
  }
  std::optional<std::string> who;
  if (!user.empty()) who = user;

  std::vector<store::QuotaUsage> rows;
  std::map<std::string, std::int64_t> limits;
  if (auto db = open_for_listing(path, "quotas")) {
    rows = store::quotas::usage(*db, day, now, who);
    limits = store::quotas::read_limits(*db);
  } else if (who) {
    rows.push_back({*who, day, 0, 0, 0, 0, 0});
  }
  auto msg_day = limit_of(limits, store::kLimitMessagesPerDay);
  auto msg_min = limit_of(limits, store::kLimitMessagesPerMinute);
  auto data_day = limit_of(limits, store::kLimitDataRunsPerDay);
  auto pipe_day = limit_of(limits, store::kLimitPipelineRunsPerDay);

  if (json) {
    nlohmann::json users = nlohmann::json::array();
    for (const auto& r : rows)
      users.push_back({{"user", r.user_id},
                       {"day", r.day},
                       {"messages", r.messages},
                       {"messages_limit", json_limit(msg_day)},
                       {"messages_this_minute", r.messages_this_minute},
                       {"messages_per_minute_limit", json_limit(msg_min)},
                       {"data_runs", r.data_runs},
                       {"data_runs_limit", json_limit(data_day)},
                       {"pipeline_runs", r.pipeline_runs},
                       {"pipeline_runs_limit", json_limit(pipe_day)},
                       {"strikes", r.strikes}});
    nlohmann::json out = {{"day", day}, {"limits", limits}, {"users", users}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows)
    table.push_back({r.user_id, r.day, cell(r.messages, msg_day), cell(r.messages_this_minute, msg_min),
                     cell(r.data_runs, data_day), cell(r.pipeline_runs, pipe_day), std::to_string(r.strikes)});
  print_table(stdout, {"USER", "DAY", "MESSAGES", "MSG/MIN", "DATA_RUNS", "PIPELINE_RUNS", "STRIKES"}, table);
  return 0;
}

}  // namespace

int cmd_quotas(Args args) {
  try {
    std::string path = take_db_path(args);
    if (!args.empty() && args[0] == "reset") {
      args.erase(args.begin());
      return reset(path, args);
    }
    if (take_flag(args, "--help")) {
      std::printf("%s", kUsage);
      return 0;
    }
    return list(path, args);
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotq quotas: %s: %s\n", e.code().c_str(), e.what());
    return 1;
  }
}

}  // namespace plotq::cli
