// The plotq CLI's subcommands. Each is a free function taking the arguments after its name and
// returning the process exit code. Add one by writing tools/cmd_NAME.cpp and a row in plotq.cpp.
#pragma once
#include <string>
#include <vector>

namespace plotq::cli {

using Args = std::vector<std::string>;

// Common option: --db PATH (default: PLOTQ_DB, else ./var/plotq.db). Removes it from args.
std::string take_db_path(Args& args);
// Removes a flag (e.g. "--json") from args and says whether it was there.
bool take_flag(Args& args, const std::string& flag);
// Removes "--name VALUE" (or "--name=VALUE") from args; empty when absent. Throws on a missing value.
std::string take_option(Args& args, const std::string& name);

// Subcommands (one per cmd_NAME.cpp):
int cmd_check(Args args);    // tools/cmd_check.cpp
int cmd_migrate(Args args);  // tools/cmd_migrate.cpp
int cmd_quotas(Args args);   // tools/cmd_quotas.cpp
int cmd_ledger(Args args);   // tools/cmd_ledger.cpp
int cmd_nodes(Args args);    // tools/cmd_nodes.cpp
int cmd_prune(Args args);    // tools/cmd_prune.cpp
int cmd_sandbox(Args args);  // tools/cmd_sandbox.cpp
int cmd_sweep(Args args);    // tools/cmd_sweep.cpp
int cmd_smoke(Args args);    // tools/cmd_smoke.cpp
int cmd_submit(Args args);   // tools/cmd_submit.cpp

}  // namespace plotq::cli
