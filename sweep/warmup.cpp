#include "sweep/warmup.hpp"

#include <algorithm>

namespace plotq::runs {

std::vector<std::vector<WarmStepPlan>> plan_warm_chains(const std::vector<std::string>& warm_modes, bool chromium,
                                                        bool one_core) {
  const WarmStepPlan browser{true, ""};
  std::vector<std::vector<WarmStepPlan>> chains;
  for (const auto& m : warm_modes) {
    std::vector<WarmStepPlan> chain{{false, m}};
    if (m == "figure" && chromium) chain.push_back(browser);
    chains.push_back(std::move(chain));
  }
  bool warm_figure = std::find(warm_modes.begin(), warm_modes.end(), "figure") != warm_modes.end();
  if (chromium && !warm_figure && !chains.empty()) chains.back().push_back(browser);
  if (one_core) {
    for (std::size_t i = 1; i < chains.size(); ++i)
      for (auto& step : chains[i]) chains[0].push_back(std::move(step));
    chains.resize(std::min<std::size_t>(chains.size(), 1));
  }
  return chains;
}

WarmUp::WarmUp(std::vector<std::vector<WarmStep>> chains, double step_timeout_s,
               std::function<Clock::time_point()> now)
    : step_timeout_s_(step_timeout_s), now_(std::move(now)) {
  for (auto& steps : chains) chains_.push_back(Chain{std::move(steps), 0, {}});
}

WarmUp::Clock::time_point WarmUp::step_deadline() const {
  return now_() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(step_timeout_s_));
}

void WarmUp::begin() {
  for (auto& chain : chains_) {
    if (chain.steps.empty()) continue;
    chain.steps[0].start();
    chain.deadline = step_deadline();
  }
}

bool WarmUp::poll() {
  bool left = false;
  for (auto& chain : chains_) {
    while (chain.at < chain.steps.size() && (chain.steps[chain.at].ready() || now_() >= chain.deadline)) {
      if (++chain.at < chain.steps.size()) {
        chain.steps[chain.at].start();
        chain.deadline = step_deadline();
      }
    }
    left = left || chain.at < chain.steps.size();
  }
  return left;
}

}  // namespace plotq::runs
