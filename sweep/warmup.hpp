// The staggered warm-up of a sandboxed sweep. Each warm mode's zygote preloads its libraries, and
// Chromium starts its browser: started all at once on few cores, they slow each other and the
// first files wait for all of them. So they run as chains side by side, one per warm mode: the
// plot zygote alone; the figure zygote, then Chromium once that zygote is ready (or its step timed
// out). The plot preload is the longer one, so the figure chain, Chromium included, fits beside
// it. On one core the chains run one after the other. A step starts the next of its chain when it
// is ready or when step_timeout_s has passed since it started; the caller polls (the CLI every
// 100 ms on its io_context) until no step is left.
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace plotq::runs {

// One step of a chain as planned: a mode's zygote, or Chromium.
struct WarmStepPlan {
  bool chromium = false;
  std::string mode;  // the zygote's mode when not chromium

  bool operator==(const WarmStepPlan&) const = default;
};

// The chains for the launcher's warm modes. chromium: a figure renderer is to be started (it goes
// after the figure zygote, or at the end of the last chain when figure mode is not warmed).
// one_core: everything in one chain, in the same order.
std::vector<std::vector<WarmStepPlan>> plan_warm_chains(const std::vector<std::string>& warm_modes, bool chromium,
                                                        bool one_core);

struct WarmStep {
  std::function<void()> start;
  std::function<bool()> ready;
};

class WarmUp {
 public:
  using Clock = std::chrono::steady_clock;

  WarmUp(std::vector<std::vector<WarmStep>> chains, double step_timeout_s,
         std::function<Clock::time_point()> now = &Clock::now);
  // Starts the first step of every chain.
  void begin();
  // Moves every chain past its steps that are ready or timed out, starting each next step; true
  // while a step is left (poll again later).
  bool poll();
  bool empty() const { return chains_.empty(); }

 private:
  struct Chain {
    std::vector<WarmStep> steps;
    std::size_t at = 0;
    Clock::time_point deadline;
  };
  Clock::time_point step_deadline() const;

  std::vector<Chain> chains_;
  double step_timeout_s_;
  std::function<Clock::time_point()> now_;
};

}  // namespace plotq::runs
