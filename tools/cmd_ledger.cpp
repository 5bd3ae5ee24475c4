// plotq ledger [--since 24h|ISO] [--user ID] [--kind data|render|sweep|raw] [--job ID] [--limit N]
// [--json]: the run ledger, newest first (a table; JSON with --json). Defaults: --since 24h,
// --limit 50. Works on a fresh or missing database (headers only).
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <regex>

#include <nlohmann/json.hpp>

#include "store/db.hpp"
#include "store/ledger.hpp"
#include "store/migrate.hpp"
#include "store/time.hpp"
#include "tools/commands.hpp"
#include "tools/store_read.hpp"
#include "tools/text_table.hpp"

namespace plotq::cli {
namespace {

constexpr const char* kUsage =
    "usage: plotq ledger [--since DURATION|ISO] [--user ID] [--kind data|render|sweep|raw] [--job ID]\n"
    "                    [--limit N] [--json]\n"
    "  DURATION is a number and s|m|h|d (e.g. 90m, 24h, 7d); ISO is YYYY-MM-DD[THH:MM[:SS]][Z] (UTC)\n";

// "1h" -> now - 3600; "2026-10-14" / "2026-10-14T09:30:00Z" -> that time (UTC).
std::optional<store::UnixSeconds> parse_since(const std::string& s, store::UnixSeconds now) {
  static const std::regex kDuration(R"(^([0-9]{1,9})([smhd])$)");
  std::smatch m;
  if (std::regex_match(s, m, kDuration)) {
    std::int64_t n = std::stoll(m[1].str());
    char unit = m[2].str()[0];
    std::int64_t mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
    return now - n * mult;
  }
  return store::parse_utc(s);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json to_json(const store::LedgerEntry& e) {
  return {{"id", e.id},
          {"created_at", store::iso_utc(e.created_at)},
          {"job_id", e.job_id},
          {"kind", std::string(store::to_string(e.kind))},
          {"user", e.user_id},
          {"session_id", opt(e.session_id)},
          {"turn_id", opt(e.turn_id)},
          {"theme", opt(e.theme)},
          {"outcome", std::string(store::to_string(e.outcome))},
          {"refusal_code", opt(e.refusal_code)},
          {"reason", opt(e.reason)},
          {"measured", opt(e.measured)},
          {"limit", opt(e.limit)},
          {"exit_code", opt(e.exit_code)},
          {"signal", opt(e.signal)},
          {"timed_out", e.timed_out},
          {"slot_wait_s", e.slot_wait_s},
          {"wall_s", e.wall_s},
          {"cpu_s", e.cpu_s},
          {"max_rss_mb", opt(e.max_rss_mb)},
          {"attempts", e.attempts}};
}

}  // namespace

int cmd_ledger(Args args) {
  try {
    std::string path = take_db_path(args);
    if (take_flag(args, "--help")) {
      std::printf("%s", kUsage);
      return 0;
    }
    std::string since = take_option(args, "--since");
    std::string user = take_option(args, "--user");
    std::string kind = take_option(args, "--kind");
    std::string job = take_option(args, "--job");
    std::string limit = take_option(args, "--limit");
    bool json = take_flag(args, "--json");
    if (!args.empty()) {
      std::fprintf(stderr, "plotq ledger: unexpected argument '%s'\n%s", args[0].c_str(), kUsage);
      return 2;
    }
    store::UnixSeconds now = store::now_unix();
    store::LedgerQuery q;
    q.since = parse_since(since.empty() ? "24h" : since, now);
    if (!q.since) {
      std::fprintf(stderr, "plotq ledger: --since '%s' is neither a duration nor a UTC time\n%s", since.c_str(), kUsage);
      return 2;
    }
    if (!user.empty()) q.user_id = user;
    if (!job.empty()) q.job_id = job;
    if (!kind.empty()) {
      q.kind = store::parse_run_kind(kind);
      if (!q.kind) {
        std::fprintf(stderr, "plotq ledger: unknown --kind '%s'\n%s", kind.c_str(), kUsage);
        return 2;
      }
    }
    q.limit = 50;
    if (!limit.empty()) {
      char* end = nullptr;
      long n = std::strtol(limit.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 100000) {
        std::fprintf(stderr, "plotq ledger: --limit must be an integer in [1, 100000]\n");
        return 2;
      }
      q.limit = int(n);
    }

    std::vector<store::LedgerEntry> rows;
    if (auto db = open_for_listing(path, "ledger")) rows = store::ledger::query(*db, q);

    if (json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& e : rows) out.push_back(to_json(e));
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }
    std::vector<std::vector<std::string>> table;
    for (const auto& e : rows) {
      std::string why = e.refusal_code ? *e.refusal_code : e.reason.value_or("-");
      if (e.measured && e.limit) why += " (" + fixed(*e.measured, 1) + "/" + fixed(*e.limit, 1) + ")";
      std::string exit = e.signal ? "sig" + std::to_string(*e.signal)
                                  : e.exit_code ? std::to_string(*e.exit_code) : "-";
      if (e.timed_out) exit += " timeout";
      table.push_back({store::iso_utc(e.created_at), e.job_id, std::string(store::to_string(e.kind)),
                       e.user_id, e.theme.value_or("-"), std::string(store::to_string(e.outcome)), why, exit,
                       fixed(e.slot_wait_s, 2), fixed(e.wall_s, 2), fixed(e.cpu_s, 2),
                       e.max_rss_mb ? fixed(*e.max_rss_mb, 1) : "-", std::to_string(e.attempts)});
    }
    print_table(stdout,
                {"TIME", "JOB", "KIND", "USER", "THEME", "OUTCOME", "WHY", "EXIT", "SLOT_S", "WALL_S", "CPU_S",
                 "RSS_MB", "TRIES"},
                table);
    return 0;
  } catch (const store::StoreError& e) {
    std::fprintf(stderr, "plotq ledger: %s: %s\n", e.code().c_str(), e.what());
    return 1;
  }
}

}  // namespace plotq::cli
