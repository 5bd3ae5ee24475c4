#include "common/metrics.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace plotq::metrics {

const std::vector<double> kSecondsBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
                                             2.5,   5,    10,    20,   30,  60,   120};
const std::vector<double> kFastSecondsBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                 0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};

// ---- format rules ----

bool valid_metric_name(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool valid_label_name(std::string_view n) {
  if (n.empty() || n.starts_with("__")) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

namespace {
std::string escape(std::string_view v, bool quote) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (quote && c == '"') out += "\\\"";
    else out += c;
  }
  return out;
}
}  // namespace

std::string escape_label_value(std::string_view v) { return escape(v, true); }
std::string escape_help(std::string_view v) { return escape(v, false); }

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // Plain decimals where they are short (bucket bounds read "0.0001", not "1e-04"), else the
  // shortest round-trip form; both are valid floats to Prometheus.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  if (r.ec == std::errc() && r.ptr - buf <= 24) return std::string(buf, r.ptr);
  r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// ---- Histogram ----

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
      throw std::invalid_argument("histogram bounds must be finite and strictly increasing");
  }
  buckets_ = std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1);
}

void Histogram::observe(double v) {
  std::size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;  // le: a value equal to a bound is in it
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  std::uint64_t run = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    run += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative.push_back(run);
  }
  s.count = run;
  s.sum = sum_.load(std::memory_order_relaxed);
  return s;
}

// ---- Family ----

template <class M>
M& Family<M>::with(const std::vector<std::string>& values) {
  if (values.size() != labels_.size()) throw std::invalid_argument("label values do not match the label names");
  std::lock_guard lock(mu_);
  auto it = children_.find(values);
  if (it == children_.end()) {
    std::unique_ptr<M> m;
    if constexpr (std::is_same_v<M, Histogram>) m = std::make_unique<M>(bounds_);
    else m = std::make_unique<M>();
    it = children_.emplace(values, std::move(m)).first;
  }
  return *it->second;
}

template <class M>
M& Family<M>::with(std::initializer_list<std::string_view> values) {
  std::vector<std::string> v(values.begin(), values.end());
  return with(v);
}

template <class M>
std::vector<std::pair<std::vector<std::string>, const M*>> Family<M>::children() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::vector<std::string>, const M*>> out;
  out.reserve(children_.size());
  for (const auto& [k, v] : children_) out.emplace_back(k, v.get());
  return out;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

// ---- Registry ----

Registry::Entry& Registry::add(std::string name, std::string help, Type type, std::vector<std::string> labels) {
  if (!valid_metric_name(name)) throw std::invalid_argument("bad metric name: " + name);
  for (const auto& l : labels)
    if (!valid_label_name(l) || (type == Type::histogram && l == "le"))
      throw std::invalid_argument("bad label name: " + l);
  std::lock_guard lock(mu_);
  if (entries_.count(name)) throw std::invalid_argument("metric registered twice: " + name);
  auto e = std::make_shared<Entry>(Entry{name, std::move(help), type, std::move(labels), nullptr, nullptr});
  return *entries_.emplace(std::move(name), std::move(e)).first->second;
}

CounterFamily& Registry::counter(std::string name, std::string help, std::vector<std::string> labels) {
  auto f = std::make_shared<CounterFamily>(labels);
  add(std::move(name), std::move(help), Type::counter, std::move(labels)).family = f;
  return *f;
}

GaugeFamily& Registry::gauge(std::string name, std::string help, std::vector<std::string> labels) {
  auto f = std::make_shared<GaugeFamily>(labels);
  add(std::move(name), std::move(help), Type::gauge, std::move(labels)).family = f;
  return *f;
}

HistogramFamily& Registry::histogram(std::string name, std::string help, std::vector<std::string> labels,
                                     std::vector<double> bounds) {
  Histogram check(bounds);  // bad bounds throw here, not at a first observation
  auto f = std::make_shared<HistogramFamily>(labels, std::move(bounds));
  add(std::move(name), std::move(help), Type::histogram, std::move(labels)).family = f;
  return *f;
}

void Registry::collect(std::string name, Type type, std::string help, std::vector<std::string> labels, Collect fn) {
  if (type == Type::histogram) throw std::invalid_argument("collected families are counters or gauges");
  {
    std::lock_guard lock(mu_);  // a second owner replaces the first (e.g. a test's second server)
    if (auto it = entries_.find(name); it != entries_.end() && it->second->collect) entries_.erase(it);
  }
  add(std::move(name), std::move(help), type, std::move(labels)).collect = std::move(fn);
}

void Registry::drop(std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(name); it != entries_.end()) entries_.erase(it);
}

namespace {

const char* type_name(Type t) {
  switch (t) {
    case Type::counter: return "counter";
    case Type::gauge: return "gauge";
    case Type::histogram: return "histogram";
  }
  return "untyped";
}

// {a="x",b="y"} plus an optional extra label (le); empty when there are none.
std::string label_text(const std::vector<std::string>& names, const std::vector<std::string>& values,
                       std::string_view extra_name = {}, std::string_view extra_value = {}) {
  if (names.empty() && extra_name.empty()) return {};
  std::string out = "{";
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i) out += ',';
    out += names[i] + "=\"" + escape_label_value(values[i]) + '"';
  }
  if (!extra_name.empty()) {
    if (!names.empty()) out += ',';
    out += std::string(extra_name) + "=\"" + std::string(extra_value) + '"';
  }
  return out + "}";
}

void line(std::string& out, const std::string& name, const std::string& labels, double v) {
  out += name;
  out += labels;
  out += ' ';
  out += format_value(v);
  out += '\n';
}

}  // namespace

std::string Registry::render() const {
  std::vector<std::shared_ptr<Entry>> list;
  {
    std::lock_guard lock(mu_);
    for (const auto& [n, e] : entries_) list.push_back(e);
  }
  std::string out;
  for (const auto& e : list) {
    out += "# HELP " + e->name + ' ' + escape_help(e->help) + '\n';
    out += "# TYPE " + e->name + ' ' + type_name(e->type) + '\n';
    if (e->collect) {
      for (const Sample& s : e->collect())
        if (s.label_values.size() == e->labels.size()) line(out, e->name, label_text(e->labels, s.label_values), s.value);
      continue;
    }
    switch (e->type) {
      case Type::counter:
        for (const auto& [lv, c] : static_cast<CounterFamily*>(e->family.get())->children())
          line(out, e->name, label_text(e->labels, lv), double(c->value()));
        break;
      case Type::gauge:
        for (const auto& [lv, g] : static_cast<GaugeFamily*>(e->family.get())->children())
          line(out, e->name, label_text(e->labels, lv), g->value());
        break;
      case Type::histogram:
        for (const auto& [lv, h] : static_cast<HistogramFamily*>(e->family.get())->children()) {
          Histogram::Snapshot s = h->snapshot();
          for (std::size_t i = 0; i < s.bounds.size(); ++i)
            line(out, e->name + "_bucket", label_text(e->labels, lv, "le", format_value(s.bounds[i])),
                 double(s.cumulative[i]));
          line(out, e->name + "_bucket", label_text(e->labels, lv, "le", "+Inf"), double(s.count));
          line(out, e->name + "_sum", label_text(e->labels, lv), s.sum);
          line(out, e->name + "_count", label_text(e->labels, lv), double(s.count));
        }
        break;
    }
  }
  return out;
}

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace plotq::metrics
