// The sweep's own PLOTQ_* settings (bare mode and the CLI's log switch), declared once with their
// bounds and reasons; docs/settings.md prints them (section "plotq sweep").
#include "common/settings.hpp"
#include "sandbox/config.hpp"
#include "sweep/bare.hpp"

namespace plotq::runs {

void register_sweep_settings(Settings& s, BareConfig& c) {
  s.add("PLOTQ_SWEEP_TMP_ROOT", &c.sweep_tmp_root, "bare mode makes a fresh dir per file and theme here");
  s.add("PLOTQ_SWEEP_STDERR_KEEP_BYTES", &c.sweep_stderr_keep_bytes,
        "bare mode keeps this much of a file's stderr to read its error class, bytes")
      .range(1024, 16 << 20);
  s.add("PLOTQ_SWEEP_RSCRIPT", &c.rscript, "bare mode runs R files with this Rscript (one fresh process a file and theme)");
  s.add("PLOTQ_SWEEP_LOG", &c.sweep_log,
        "keep the launcher's structured log on stderr during a sweep (zygote starts, each job): for a slow or failing sweep");
}

BareConfig bare_config_from_env() {
  BareConfig c = load_from_env<BareConfig>(register_sweep_settings);
  // The interpreter and harness are the sandbox's own settings (PLOTQ_PYTHON, PLOTQ_HARNESS_DIR),
  // read through its registry: the same defaults, the same refusals.
  sandbox::Config sandbox = load_from_env<sandbox::Config>(sandbox::register_settings);
  c.python = sandbox.python;
  c.harness_dir = sandbox.harness_dir;  // "" in both: <PLOTQ_HOME>/sandbox/harness
  return c;
}

}  // namespace plotq::runs
