// Process metrics in the Prometheus text exposition format (version 0.0.4), written by this one
// module instead of prometheus-cpp: plotq needs counters, gauges and histograms with fixed label
// sets and one text rendering, about 300 lines; a library would add a dependency (and its own
// HTTP exposer we do not use) for that.
//
//   auto& runs = metrics::registry().counter("plotq_x_total", "what it counts", {"kind", "outcome"});
//   runs.with({"data", "ok"}).inc();            // a child is made once, then an atomic add
//   metrics::Counter& ok = runs.with({"data", "ok"});   // keep the reference on a hot path
//
// Threading: increments and observations are relaxed atomics (sandbox workers run on threads).
// `with()` takes the family's mutex for a map lookup; rendering copies the child list under that
// mutex and reads the atomics outside it, so a scrape never holds a lock while it formats.
// Children are never removed: a label set must come from a bounded vocabulary (route templates,
// outcome codes), never from a request's own text.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace plotq::metrics {

// Upper bounds (seconds) that suit 5 ms .. 120 s: sandbox runs, slot waits, HTTP requests.
extern const std::vector<double> kSecondsBuckets;
// Upper bounds (seconds) for store commits and other sub-second work: 100 us .. 5 s.
extern const std::vector<double> kFastSecondsBuckets;

class Counter {
 public:
  void inc(std::uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  std::uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> v_{0};
};

class Gauge {
 public:
  void set(double v) { v_.store(v, std::memory_order_relaxed); }
  void add(double d) { v_.fetch_add(d, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

class Histogram {
 public:
  // bounds: strictly increasing, finite; +Inf is implied. Throws std::invalid_argument otherwise.
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative;  // per bound, then +Inf (== count)
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bound, then +Inf; not cumulative
  std::atomic<double> sum_{0};
};

enum class Type { counter, gauge, histogram };

// One metric name with its label names; children by label values.
template <class M>
class Family {
 public:
  Family(std::vector<std::string> labels, std::vector<double> bounds = {})
      : labels_(std::move(labels)), bounds_(std::move(bounds)) {}
  // The child for these label values (as many as label names; throws std::invalid_argument else).
  M& with(std::initializer_list<std::string_view> values);
  M& with(const std::vector<std::string>& values);
  const std::vector<std::string>& labels() const { return labels_; }
  // The children now, ordered by label values (copied under the mutex; the metrics stay alive).
  std::vector<std::pair<std::vector<std::string>, const M*>> children() const;

 private:
  std::vector<std::string> labels_;
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<M>> children_;
};

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<Histogram>;

// A sample computed at scrape time (a gauge read from the state that owns it, e.g. the WAL's size).
struct Sample {
  std::vector<std::string> label_values;
  double value = 0;
};
using Collect = std::function<std::vector<Sample>()>;

class Registry {
 public:
  // Each name once (std::invalid_argument on a second registration, a bad name or label name).
  CounterFamily& counter(std::string name, std::string help, std::vector<std::string> labels = {});
  GaugeFamily& gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  HistogramFamily& histogram(std::string name, std::string help, std::vector<std::string> labels,
                             std::vector<double> bounds);
  // Samples read when scraped. `fn` runs on the scraping thread: it must be cheap and safe there.
  // Collecting a name again replaces the earlier one (the newest owner is shown).
  void collect(std::string name, Type type, std::string help, std::vector<std::string> labels, Collect fn);
  // Forgets a collect()ed family (its owner is going away).
  void drop(std::string_view name);

  // The exposition text of every family, by name.
  std::string render() const;

 private:
  struct Entry {
    std::string name;
    std::string help;
    Type type;
    std::vector<std::string> labels;
    std::shared_ptr<void> family;  // CounterFamily / GaugeFamily / HistogramFamily, or null
    Collect collect;
  };
  Entry& add(std::string name, std::string help, Type type, std::vector<std::string> labels);
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>, std::less<>> entries_;
};

// The process's registry (plotqd serves it at GET /metrics).
Registry& registry();

// Format rules, exposed for tests.
bool valid_metric_name(std::string_view name);  // [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_label_name(std::string_view name);   // [a-zA-Z_][a-zA-Z0-9_]*, not starting with __
std::string escape_label_value(std::string_view v);  // \ -> \\, " -> \", LF -> \n
std::string escape_help(std::string_view v);         // \ -> \\, LF -> \n
std::string format_value(double v);                  // round-trip: plain when short; +Inf, -Inf, NaN

}  // namespace plotq::metrics
