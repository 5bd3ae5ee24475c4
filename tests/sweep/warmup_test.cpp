// The staggered warm-up (sweep/warmup.hpp) with fake steps and a fake clock: which chains a sweep
// plans, and when each step starts.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "sweep/warmup.hpp"

using namespace plotq::runs;

namespace {

const WarmStepPlan kChromium{true, ""};
WarmStepPlan zygote(const std::string& mode) { return {false, mode}; }

// Steps that log their start and are ready when the test says so; time moves when the test says so.
struct Fake {
  WarmUp::Clock::time_point t0 = WarmUp::Clock::now();
  double at_s = 0;
  std::vector<std::string> started;
  std::map<std::string, bool> ready;

  WarmStep step(const std::string& name) {
    return {[this, name] { started.push_back(name + "@" + std::to_string(static_cast<int>(at_s * 10))); },
            [this, name] { return ready[name]; }};
  }
  std::function<WarmUp::Clock::time_point()> clock() {
    return [this] {
      return t0 + std::chrono::duration_cast<WarmUp::Clock::duration>(std::chrono::duration<double>(at_s));
    };
  }
};

}  // namespace

TEST_CASE("warm-up plan: plot and figure side by side with Chromium after the figure zygote", "[warmup]") {
  auto chains = plan_warm_chains({"plot", "figure"}, true, false);
  CHECK(chains == std::vector<std::vector<WarmStepPlan>>{{zygote("plot")}, {zygote("figure"), kChromium}});
}

TEST_CASE("warm-up plan: on one core the chains run one after the other in one chain", "[warmup]") {
  auto chains = plan_warm_chains({"plot", "figure"}, true, true);
  CHECK(chains == std::vector<std::vector<WarmStepPlan>>{{zygote("plot"), zygote("figure"), kChromium}});
  CHECK(plan_warm_chains({"plot", "figure"}, false, true) ==
        std::vector<std::vector<WarmStepPlan>>{{zygote("plot"), zygote("figure")}});
}

TEST_CASE("warm-up plan: without a figure zygote Chromium ends the last chain", "[warmup]") {
  CHECK(plan_warm_chains({"plot"}, true, false) == std::vector<std::vector<WarmStepPlan>>{{zygote("plot"), kChromium}});
  CHECK(plan_warm_chains({"raw", "plot"}, true, false) ==
        std::vector<std::vector<WarmStepPlan>>{{zygote("raw")}, {zygote("plot"), kChromium}});
}

TEST_CASE("warm-up plan: the operator's mode order is kept and no Chromium without a renderer", "[warmup]") {
  CHECK(plan_warm_chains({"figure", "plot"}, true, false) ==
        std::vector<std::vector<WarmStepPlan>>{{zygote("figure"), kChromium}, {zygote("plot")}});
  CHECK(plan_warm_chains({"plot", "figure"}, false, false) ==
        std::vector<std::vector<WarmStepPlan>>{{zygote("plot")}, {zygote("figure")}});
  CHECK(plan_warm_chains({}, true, false).empty());
  CHECK(plan_warm_chains({}, true, true).empty());
}

TEST_CASE("warm-up: begin starts the first step of every chain and nothing else", "[warmup]") {
  Fake f;
  WarmUp w({{f.step("plot")}, {f.step("figure"), f.step("chromium")}}, 5, f.clock());
  CHECK_FALSE(w.empty());
  CHECK(f.started.empty());
  w.begin();
  CHECK(f.started == std::vector<std::string>{"plot@0", "figure@0"});
  f.at_s = 1;
  CHECK(w.poll());
  CHECK(f.started.size() == 2);
}

TEST_CASE("warm-up: a ready step starts the next of its chain only", "[warmup]") {
  Fake f;
  WarmUp w({{f.step("plot")}, {f.step("figure"), f.step("chromium")}}, 5, f.clock());
  w.begin();
  f.at_s = 2;
  f.ready["figure"] = true;
  CHECK(w.poll());
  CHECK(f.started == std::vector<std::string>{"plot@0", "figure@0", "chromium@20"});
  f.at_s = 3;
  f.ready["chromium"] = true;
  CHECK(w.poll());  // the plot zygote is still warming
  f.ready["plot"] = true;
  CHECK_FALSE(w.poll());
  CHECK(f.started.size() == 3);
}

TEST_CASE("warm-up: a step that is not ready in time lets the next one start", "[warmup]") {
  Fake f;
  WarmUp w({{f.step("figure"), f.step("chromium")}}, 5, f.clock());
  w.begin();
  f.at_s = 4.9;
  CHECK(w.poll());
  CHECK(f.started == std::vector<std::string>{"figure@0"});
  f.at_s = 5;
  CHECK(w.poll());
  CHECK(f.started == std::vector<std::string>{"figure@0", "chromium@50"});
  // The next step's time counts from its own start.
  f.at_s = 9.9;
  CHECK(w.poll());
  f.at_s = 10;
  CHECK_FALSE(w.poll());
  CHECK(f.started.size() == 2);
}

TEST_CASE("warm-up: steps already ready are passed in one poll", "[warmup]") {
  Fake f;
  WarmUp w({{f.step("plot"), f.step("figure"), f.step("chromium")}}, 5, f.clock());
  w.begin();
  f.ready["plot"] = f.ready["figure"] = true;
  f.at_s = 1;
  CHECK(w.poll());
  CHECK(f.started == std::vector<std::string>{"plot@0", "figure@10", "chromium@10"});
  f.ready["chromium"] = true;
  CHECK_FALSE(w.poll());
}

TEST_CASE("warm-up: no chains and empty chains have nothing to do", "[warmup]") {
  Fake f;
  WarmUp none({}, 5, f.clock());
  CHECK(none.empty());
  none.begin();
  CHECK_FALSE(none.poll());
  WarmUp hollow({{}}, 5, f.clock());
  hollow.begin();
  CHECK_FALSE(hollow.poll());
  CHECK(f.started.empty());
}
