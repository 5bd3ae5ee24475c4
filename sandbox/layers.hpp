// Which layers of the sandbox are really active on this machine, probed at start by trying each
// one in a throw-away child (a namespace is unshared, a filter installed, a uid taken, ...).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sandbox/cgroup.hpp"
#include "sandbox/config.hpp"

namespace plotq::sandbox {

// Layer names: uid, no_new_privs, rlimits, seccomp (with TSYNC), exec_filter, pid_ns, net_ns,
// mount_ns, ipc_ns, uts_ns, user_ns (warm starts), cgroup_memory, cgroup_pids, pidfd, python,
// confine_lib, harness (entry.py, visible inside jobs), warm.
struct Layer {
  std::string name;
  bool available = false;  // the kernel/machine supports it
  bool active = false;     // available and used with this Config
  std::string detail;
};

struct LayerReport {
  std::vector<Layer> layers;
  std::vector<std::string> required;
  std::vector<std::string> missing;  // required but not active
  bool ok() const { return missing.empty(); }
  bool active(const std::string& name) const;
  const Layer* find(const std::string& name) const;
};

// Probes every layer (forks a few short-lived children; once per Launcher, not per job). cgroups:
// pass the Launcher's setup result so that the report says what jobs really get.
LayerReport probe_layers(const Config& config, const CgroupSupport& cgroups);

nlohmann::json to_json(const LayerReport& r);

}  // namespace plotq::sandbox
