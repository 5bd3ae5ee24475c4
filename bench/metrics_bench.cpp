// common/metrics: what counting costs where the work happens, and what one scrape costs the loop.
//   metrics_bench [rounds=7]
// Baselines in the same run: a bare relaxed std::atomic add (the irreducible cost of a counter), and
// writing the same number of sample lines with snprintf (the irreducible cost of the text).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/stats.hpp"
#include "common/metrics.hpp"

using Clock = std::chrono::steady_clock;
using namespace plotq;

namespace {
double ns_since(Clock::time_point t, double n) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t).count() / n;
}
}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  constexpr int kOps = 2'000'000;
  metrics::Registry reg;
  auto& fam = reg.counter("b_requests_total", "x", {"route", "method", "status"});
  auto& hist = reg.histogram("b_request_seconds", "x", {"route"}, metrics::kSecondsBuckets);
  // About plotqd's size: 20 routes x 3 statuses, a histogram per route.
  const char* statuses[] = {"200", "404", "422"};
  for (int r = 0; r < 20; ++r)
    for (const char* s : statuses) {
      fam.with({"/route/" + std::to_string(r), "GET", s}).inc();
      hist.with({"/route/" + std::to_string(r)}).observe(0.01 * r);
    }
  metrics::Counter& kept = fam.with({"/route/3", "GET", "200"});
  std::atomic<std::uint64_t> bare{0};

  std::vector<double> base, inc, lookup, observe, render, text;
  std::size_t lines = 0;
  for (int round = 0; round < rounds; ++round) {
    auto t = Clock::now();
    for (int i = 0; i < kOps; ++i) bare.fetch_add(1, std::memory_order_relaxed);
    base.push_back(ns_since(t, kOps));
    t = Clock::now();
    for (int i = 0; i < kOps; ++i) kept.inc();
    inc.push_back(ns_since(t, kOps));
    t = Clock::now();
    for (int i = 0; i < kOps / 10; ++i) fam.with({"/route/3", "GET", "200"}).inc();
    lookup.push_back(ns_since(t, kOps / 10));
    metrics::Histogram& h = hist.with({"/route/3"});
    t = Clock::now();
    for (int i = 0; i < kOps; ++i) h.observe(0.003 * (i & 63));
    observe.push_back(ns_since(t, kOps));

    t = Clock::now();
    std::string out = reg.render();
    render.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
    lines = 0;
    for (char c : out) lines += c == '\n';
    t = Clock::now();
    std::string plain;
    char buf[160];
    for (std::size_t i = 0; i < lines; ++i) {
      int n = std::snprintf(buf, sizeof buf, "b_request_seconds_bucket{route=\"/route/%zu\",le=\"%g\"} %zu\n", i % 20,
                            0.005 * double(i), i);
      plain.append(buf, std::size_t(n));
    }
    text.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  auto p50 = [](const std::vector<double>& v) { return bench::pct(v, 0.5); };
  std::printf("counter inc, kept reference: %.2f ns (bare atomic add %.2f ns, ratio %.2f)\n", p50(inc), p50(base),
              p50(inc) / p50(base));
  std::printf("counter inc through with({3 labels}): %.1f ns (ratio to bare %.1f)\n", p50(lookup), p50(lookup) / p50(base));
  std::printf("histogram observe (15 buckets): %.2f ns (ratio to bare %.2f)\n", p50(observe), p50(observe) / p50(base));
  std::printf("render %zu lines: %.1f us (snprintf of as many lines %.1f us, ratio %.2f)\n", lines, p50(render),
              p50(text), p50(render) / p50(text));
  return 0;
}
