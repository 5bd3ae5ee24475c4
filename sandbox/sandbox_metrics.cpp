#include "sandbox/sandbox_metrics.hpp"

#include "common/metrics.hpp"

namespace plotq::sandbox {
namespace {

struct SandboxMetrics {
  metrics::CounterFamily& zygote_ready;
  metrics::CounterFamily& zygote_exit;
  metrics::CounterFamily& chromium_ready;
  metrics::CounterFamily& chromium_exit;
};

SandboxMetrics& m() {
  auto& r = metrics::registry();
  static SandboxMetrics x{
      r.counter("plotq_zygote_starts_total", "warm zygotes that came up, by mode", {"mode"}),
      r.counter("plotq_zygote_exits_total", "warm zygotes that exited, by mode (each is restarted by the next job)",
                {"mode"}),
      r.counter("plotq_chromium_starts_total", "figure renderer (Chromium) processes that came up"),
      r.counter("plotq_chromium_exits_total", "figure renderer processes that exited or were killed"),
  };
  return x;
}

// Families present at zero in any process that links this file (plotqd).
[[maybe_unused]] const bool kRegistered = [] {
  m().chromium_ready.with({});
  m().chromium_exit.with({});
  for (const char* mode : {"raw", "data", "plot", "figure"}) {
    m().zygote_ready.with({mode});
    m().zygote_exit.with({mode});
  }
  return true;
}();

}  // namespace

void count_zygote_ready(std::string_view mode) { m().zygote_ready.with({mode}).inc(); }
void count_zygote_exit(std::string_view mode) { m().zygote_exit.with({mode}).inc(); }
void count_chromium_ready() { m().chromium_ready.with({}).inc(); }
void count_chromium_exit() { m().chromium_exit.with({}).inc(); }

}  // namespace plotq::sandbox
