// plotq sweep's subcommands apart from their dispatch (tools/cmd_sweep.cpp).
#pragma once
#include <optional>
#include <string>

#include "tools/commands.hpp"

namespace plotq::cli {

// `plotq sweep run` (tools/sweep_run.cpp): the exit code (0 done, 1 stopped by an error, 2 a usage
// error, 128 + signal).
int sweep_run(const std::string& db_path, Args args);

// Prints what is wrong and plotq sweep's usage on stderr; 2 (tools/cmd_sweep.cpp).
int sweep_usage_error(const std::string& what);

inline std::string id_or_unknown(const std::optional<std::string>& id) { return id.value_or("unknown"); }

}  // namespace plotq::cli
