// common/metrics: the exposition format's rules, checked on the rendered text.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics.hpp"

using namespace plotq::metrics;

namespace {
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}
bool has_line(const std::string& text, const std::string& l) {
  for (const auto& x : lines_of(text))
    if (x == l) return true;
  return false;
}
}  // namespace

TEST_CASE("format: names and label names follow the format", "[metrics]") {
  CHECK(valid_metric_name("plotq_runs_total"));
  CHECK(valid_metric_name("a:b_c"));
  CHECK(valid_metric_name("_x9"));
  CHECK_FALSE(valid_metric_name(""));
  CHECK_FALSE(valid_metric_name("9x"));
  CHECK_FALSE(valid_metric_name("a-b"));
  CHECK_FALSE(valid_metric_name("a b"));
  CHECK(valid_label_name("route"));
  CHECK_FALSE(valid_label_name("__name"));  // reserved
  CHECK_FALSE(valid_label_name("a:b"));     // colons only in metric names
  CHECK_FALSE(valid_label_name("1a"));
  Registry r;
  CHECK_THROWS_AS(r.counter("bad-name", "x"), std::invalid_argument);
  CHECK_THROWS_AS(r.counter("ok_total", "x", {"bad-label"}), std::invalid_argument);
  CHECK_THROWS_AS(r.histogram("h_seconds", "x", {"le"}, {1}), std::invalid_argument);  // le is the bucket's
  r.counter("twice_total", "x");
  CHECK_THROWS_AS(r.counter("twice_total", "x"), std::invalid_argument);
  CHECK_THROWS_AS(r.histogram("h2_seconds", "x", {}, {2, 1}), std::invalid_argument);
}

TEST_CASE("format: label values and help are escaped", "[metrics]") {
  CHECK(escape_label_value(R"(a\b"c)" "\n" "d") == R"(a\\b\"c\nd)");
  CHECK(escape_help("x\\y\n\"z\"") == "x\\\\y\\n\"z\"");  // quotes stay in HELP
  Registry r;
  auto& c = r.counter("esc_total", "help with \\ and\nnewline", {"v"});
  c.with({"q\"uo\\te\nnl"}).inc(2);
  std::string text = r.render();
  CHECK(has_line(text, "# HELP esc_total help with \\\\ and\\nnewline"));
  CHECK(has_line(text, "# TYPE esc_total counter"));
  CHECK(has_line(text, R"(esc_total{v="q\"uo\\te\nnl"} 2)"));
}

TEST_CASE("format: counters and gauges render HELP TYPE and one line per child", "[metrics]") {
  Registry r;
  auto& c = r.counter("b_total", "counts", {"kind", "outcome"});
  c.with({"data", "ok"}).inc();
  c.with({"data", "ok"}).inc(4);
  c.with({"render", "timeout"}).inc();
  auto& g = r.gauge("a_open", "open things");
  g.with({}).set(3);
  g.with({}).add(-1.5);
  std::string text = r.render();
  auto ls = lines_of(text);
  // families by name: a_open first
  REQUIRE(ls.size() == 7);
  CHECK(ls[0] == "# HELP a_open open things");
  CHECK(ls[1] == "# TYPE a_open gauge");
  CHECK(ls[2] == "a_open 1.5");
  CHECK(ls[3] == "# HELP b_total counts");
  CHECK(ls[4] == "# TYPE b_total counter");
  CHECK(ls[5] == R"(b_total{kind="data",outcome="ok"} 5)");
  CHECK(ls[6] == R"(b_total{kind="render",outcome="timeout"} 1)");
  CHECK(text.back() == '\n');
  CHECK_THROWS_AS(c.with({"only-one"}), std::invalid_argument);
}

TEST_CASE("format: histograms are cumulative with +Inf sum and count", "[metrics]") {
  Registry r;
  auto& h = r.histogram("run_seconds", "run time", {"kind"}, {0.1, 1, 10});
  auto& d = h.with({"data"});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0, 1.0}) d.observe(v);  // 0.1 and 1.0 sit on a bound (le)
  std::string text = r.render();
  CHECK(has_line(text, "# TYPE run_seconds histogram"));
  CHECK(has_line(text, R"(run_seconds_bucket{kind="data",le="0.1"} 2)"));
  CHECK(has_line(text, R"(run_seconds_bucket{kind="data",le="1"} 4)"));
  CHECK(has_line(text, R"(run_seconds_bucket{kind="data",le="10"} 5)"));
  CHECK(has_line(text, R"(run_seconds_bucket{kind="data",le="+Inf"} 6)"));
  CHECK(has_line(text, R"(run_seconds_count{kind="data"} 6)"));
  CHECK(has_line(text, R"(run_seconds_sum{kind="data"} 56.65)"));
  // without labels: le is the only label
  auto& plain = r.histogram("p_seconds", "x", {}, kSecondsBuckets);
  plain.with({}).observe(0.004);
  std::string t2 = r.render();
  CHECK(has_line(t2, R"(p_seconds_bucket{le="0.005"} 1)"));
  CHECK(has_line(t2, R"(p_seconds_bucket{le="120"} 1)"));
  CHECK(has_line(t2, "p_seconds_count 1"));
}

TEST_CASE("format: collected families are read at render time", "[metrics]") {
  Registry r;
  double wal = 4096;
  r.collect("wal_bytes", Type::gauge, "wal", {}, [&] { return std::vector<Sample>{{{}, wal}}; });
  r.collect("slot_busy", Type::gauge, "busy", {"slot"}, [] {
    return std::vector<Sample>{{{"0"}, 1}, {{"1"}, 0}, {{"bad", "arity"}, 7}};
  });
  CHECK(has_line(r.render(), "wal_bytes 4096"));
  wal = 8192;
  std::string text = r.render();
  CHECK(has_line(text, "wal_bytes 8192"));
  CHECK(has_line(text, R"(slot_busy{slot="0"} 1)"));
  CHECK(text.find("arity") == std::string::npos);  // a sample of the wrong arity is left out
  r.drop("wal_bytes");
  CHECK(r.render().find("wal_bytes") == std::string::npos);
  CHECK(format_value(1e30) == "1e+30");
  CHECK(format_value(0.25) == "0.25");
  CHECK(format_value(0.0001) == "0.0001");  // a bucket bound, plain
  CHECK(format_value(3) == "3");
  CHECK(format_value(1.0 / 0.0) == "+Inf");
  CHECK(format_value(std::nan("")) == "NaN");
}

TEST_CASE("format: increments from threads are not lost", "[metrics]") {
  Registry r;
  auto& c = r.counter("t_total", "x", {"w"});
  auto& h = r.histogram("t_seconds", "x", {}, {1});
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.with({t % 2 ? "odd" : "even"}).inc();
        h.with({}).observe(0.5);
      }
    });
  for (auto& t : ts) t.join();
  std::string text = r.render();
  CHECK(has_line(text, R"(t_total{w="even"} 20000)"));
  CHECK(has_line(text, R"(t_total{w="odd"} 20000)"));
  CHECK(has_line(text, "t_seconds_count 40000"));
  CHECK(has_line(text, "t_seconds_sum 20000"));
}
