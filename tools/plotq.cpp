// plotq: the admin tool. Reads and writes the same SQLite file as plotqd, safely while it runs.
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/env.hpp"
#include "tools/commands.hpp"

namespace plotq::cli {

std::string take_option(Args& args, const std::string& name) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name) {
      if (i + 1 >= args.size()) throw std::invalid_argument(name + " needs a value");
      std::string v = args[i + 1];
      args.erase(args.begin() + i, args.begin() + i + 2);
      return v;
    }
    if (args[i].rfind(name + "=", 0) == 0) {
      std::string v = args[i].substr(name.size() + 1);
      args.erase(args.begin() + i);
      return v;
    }
  }
  return {};
}

bool take_flag(Args& args, const std::string& flag) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag) {
      args.erase(args.begin() + i);
      return true;
    }
  }
  return false;
}

std::string take_db_path(Args& args) {
  std::string db = take_option(args, "--db");
  return db.empty() ? env_string("PLOTQ_DB", "./var/plotq.db") : db;
}

}  // namespace plotq::cli

namespace {

struct Command {
  const char* name;
  int (*run)(plotq::cli::Args);
  const char* usage;
};

// One row per subcommand; the function is declared in tools/commands.hpp, defined in cmd_NAME.cpp.
const Command kCommands[] = {
    {"check", plotq::cli::cmd_check,
     "check [--quick] [--json]                        is the store whole? (read-only; plotqd's start check)"},
    {"migrate", plotq::cli::cmd_migrate,
     "migrate [--status]                              apply pending migrations"},
    {"quotas", plotq::cli::cmd_quotas,
     "quotas [--user ID] [--day YYYY-MM-DD] [--json]  per-user usage against the limits\n"
     "  quotas reset --user ID [--counter NAME]         reset today's counters (or strikes)"},
    {"ledger", plotq::cli::cmd_ledger,
     "ledger [--since 24h|ISO] [--user ID] [--kind K] [--job ID] [--limit N] [--json]\n"
     "                                                  the run ledger, newest first"},
    {"nodes", plotq::cli::cmd_nodes,
     "nodes [--json]                                  a cluster's nodes, their leases and the queue (PostgreSQL)"},
    {"prune", plotq::cli::cmd_prune,
     "prune --dry-run|--now [--json]                  retention: what would go (per table) / delete it now"},
    {"sandbox", plotq::cli::cmd_sandbox,
     "sandbox check                                   the sandbox layers active on this machine (JSON)\n"
     "  sandbox run FILE [--mode raw|data|plot] [--timeout S] [--cold]\n"
     "                                                  run FILE in the sandbox, print the result (JSON)"},
    {"smoke", plotq::cli::cmd_smoke,
     "smoke [--server URL] [--timeout S]              deploy smoke: a 2-row snippet through /run-data"},
    {"submit", plotq::cli::cmd_submit,
     "submit data FILE [--out CSV] | submit render FILE [--library L] [--themes light,dark] [--data CSV]\n"
     "              [--out DIR]  [--server URL] [--timeout S] [--job-id ID] [--json]\n"
     "                                                  one job through a running plotqd (/run-data, /render)"},
    {"sweep", plotq::cli::cmd_sweep,
     "sweep run DIR [--glob G] [--library L] [--themes light,dark] [--label NAME] [--timeout S]\n"
     "              [--mode sandbox|bare] [--server URL] [--jobs N] [--resume LABEL]\n"
     "                                                  replay a folder of plot files, record outcomes\n"
     "  sweep report LABEL [--json] | sweep diff A B [--json] | sweep list [--json]\n"
     "                                                  counts and slowest files; outcome changes (exit 1)"},
    {nullptr, nullptr, nullptr}};

int usage(FILE* out) {
  std::fprintf(out, "usage: plotq [--db PATH] COMMAND [ARGS]\n\ncommands:\n");
  for (const Command* c = kCommands; c->name; ++c) std::fprintf(out, "  %s\n", c->usage);
  return out == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  plotq::cli::Args args(argv + 1, argv + argc);
  try {
    // --db may stand before the command; pass it on to the command.
    std::string db = plotq::cli::take_option(args, "--db");
    if (args.empty()) return usage(stderr);
    if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") return usage(stdout);
    for (const Command* c = kCommands; c->name; ++c) {
      if (args[0] == c->name) {
        plotq::cli::Args rest(args.begin() + 1, args.end());
        if (!db.empty()) {
          rest.push_back("--db");
          rest.push_back(db);
        }
        return c->run(rest);
      }
    }
    std::fprintf(stderr, "plotq: unknown command '%s'\n", args[0].c_str());
    return usage(stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "plotq: %s\n", e.what());
    return 2;
  }
}
