// Order statistics for the benchmarks: every figure in bench/README.md is computed here.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <vector>

namespace plotq::bench {

// The sample at fraction p (0..1) of the sorted values, nearest rank; 0 for no values.
inline double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

struct Stats {
  double p50 = 0, p90 = 0, mean = 0;
  int failures = 0;
};

inline Stats stats(std::vector<double> v, int failures = 0) {
  Stats s;
  s.failures = failures;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.p50 = v[v.size() / 2];
  s.p90 = v[std::min(v.size() - 1, v.size() * 9 / 10)];
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

// The 1-minute load average (/proc/loadavg), quoted with every figure taken on a shared machine.
inline double loadavg() {
  double l = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1) l = 0;
    std::fclose(f);
  }
  return l;
}

}  // namespace plotq::bench
