// What `plotq sweep run` was asked, and the two decisions made from it before anything runs: the
// settings of a new sweep, or whether a stored sweep may go on with what was given. Pure functions
// (the CLI reads the command line into SweepRunArgs and does the store and file system look-ups).
#pragma once
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "common/settings.hpp"
#include "store/sweeps.hpp"

namespace plotq::runs {

// The command line as given: an empty string (or no jobs) means the option was not given.
struct SweepRunArgs {
  std::string dir{};
  std::string glob{};
  std::string library{};
  std::string themes{};
  std::string label{};
  std::string timeout{};
  std::string mode{};
  std::string server{};
  std::string resume{};
  std::optional<int> jobs{};
};

// A new sweep's settings, or why the command line cannot start one (a usage error).
struct NewSweepSettings {
  store::Sweep sweep;  // label, mode, server_url, glob, libraries, themes, timeout_s, jobs
  std::string error;   // non-empty: nothing else is set
};

// The defaults filled in and every value checked, in the order the usage errors are reported.
// now names the sweep when no --label is given (sweep-YYYYMMDD-HHMMSS, UTC).
NewSweepSettings new_sweep_settings(const SweepRunArgs& args, std::time_t now);

// A setting the command line gives that differs from the stored sweep's.
struct ResumeDifference {
  std::string option;  // "DIR", "--glob", ...
  std::string given;
  std::string stored;
};

// A resumed sweep keeps every setting that decides outcomes, so asking for another is an error:
// the first given setting that differs from the stored one, or nullopt. root_given is DIR made
// canonical, empty when no DIR was given. A --timeout that is not a number throws
// std::invalid_argument (only read when every setting before it agrees).
std::optional<ResumeDifference> resume_difference(const store::Sweep& stored, const SweepRunArgs& given,
                                                  const std::string& root_given);

// join is the inverse of plotq::split_list (common/settings.hpp): {"a", "b"} -> "a,b".
using plotq::split_list;
std::string join(const std::vector<std::string>& v);

}  // namespace plotq::runs
