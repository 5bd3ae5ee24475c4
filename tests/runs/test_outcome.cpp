// runs/outcome.cpp is the one table of run outcomes: every reason a layer below can report has its
// row, the rows are well formed, and docs/outcomes.md is the table as printed.
#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "runs/libraries.hpp"
#include "runs/outcome.hpp"
#include "sandbox/canvas.hpp"
#include "runs/render_interpret.hpp"
#include "sandbox/figure_renderer.hpp"
#include "sandbox/job.hpp"
#include "sandbox/snippet_libraries.hpp"

using plotq::runs::kOutcomeCount;
using plotq::runs::kOutcomes;
using plotq::runs::Outcome;
using plotq::runs::outcome_named;
using plotq::runs::outcome_row;
using plotq::runs::parse_outcome;
using plotq::runs::TurnEnd;

namespace {
bool known_outcome(const std::string& name) { return parse_outcome(name).has_value(); }
const plotq::runs::OutcomeRow& outcome(const std::string& name) { return outcome_row(outcome_named(name)); }
}  // namespace

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("outcomes: one row per enum value, in its order, read back by name") {
  REQUIRE(kOutcomeCount == static_cast<std::size_t>(Outcome::unknown) + 1);
  for (std::size_t i = 0; i < kOutcomeCount; ++i) {
    const auto o = static_cast<Outcome>(i);
    INFO(kOutcomes[i].name);
    CHECK(kOutcomes[i].outcome == o);
    CHECK(&outcome_row(o) == &kOutcomes[i]);
    CHECK(plotq::runs::to_string(o) == kOutcomes[i].name);
    CHECK(parse_outcome(kOutcomes[i].name) == o);
  }
  CHECK(parse_outcome("a_reason_from_a_newer_layer") == std::nullopt);
  CHECK(parse_outcome("") == std::nullopt);
  std::ostringstream out;
  out << Outcome::guard_refused;
  CHECK(out.str() == "guard_refused");
}

TEST_CASE("outcomes: names are unique plain words and each row says how a turn ends") {
  std::set<std::string> seen;
  std::regex word("^[a-z][a-z0-9_]{0,31}$");
  for (std::size_t i = 0; i < kOutcomeCount; ++i) {
    const auto& o = kOutcomes[i];
    INFO(o.name);
    CHECK(seen.insert(std::string(o.name)).second);
    CHECK(std::regex_match(std::string(o.name), word));
    CHECK_FALSE(o.sentence.empty());
    CHECK((o.turn_end == TurnEnd::done) == (o.name == "ok"));
    CHECK(o.turn_code.empty() == (o.name == "ok"));
    // A host outcome names the error /run-data and /render answer; no other outcome does.
    CHECK(o.host == !o.job_error.empty());
    // A refusal never ends a turn as done; a host outcome never blames the code.
    if (o.host) CHECK(o.turn_code != "run_failed");
  }
}

TEST_CASE("outcomes: every sandbox reason has its row") {
  using plotq::sandbox::Reason;
  for (Reason r : {Reason::ok, Reason::nonzero_exit, Reason::crashed, Reason::timeout, Reason::cancelled, Reason::cpu,
                   Reason::memory, Reason::disk, Reason::files, Reason::output_too_large, Reason::output_rejected,
                   Reason::exec_denied, Reason::harness_error, Reason::launcher, Reason::low_memory,
                   Reason::sandbox_unavailable, Reason::io, Reason::scratch_full, Reason::sandbox_lost,
                   Reason::invalid_job}) {
    INFO(plotq::sandbox::to_string(r));
    CHECK(known_outcome(plotq::sandbox::to_string(r)));
    CHECK(plotq::runs::to_string(plotq::runs::sandbox_outcome(r)) == plotq::sandbox::to_string(r));
  }
}

TEST_CASE("outcomes: every reason of the harness (sandbox/harness/exits.py) has its row") {
  std::string exits = slurp(std::string(PLOTQ_SOURCE_DIR) + "/sandbox/harness/exits.py");
  std::regex entry(R"re((DATA|PLOT)_EXIT\.[A-Z_]+:\s*"([a-z_]+)")re");
  int n = 0;
  for (auto it = std::sregex_iterator(exits.begin(), exits.end(), entry); it != std::sregex_iterator(); ++it, ++n) {
    INFO((*it)[2].str());
    CHECK(known_outcome((*it)[2].str()));
  }
  CHECK(n > 20);  // the scan really read both vocabularies
}

TEST_CASE("outcomes: every code of the figure renderer maps onto a row") {
  // The renderer's own vocabulary, read from its one table (sandbox/figure/lib/errors.mjs: CODES).
  std::ifstream f(std::string(PLOTQ_SOURCE_DIR) + "/sandbox/figure/lib/errors.mjs");
  std::stringstream text;
  text << f.rdbuf();
  const std::string js = text.str();
  const auto start = js.find("CODES = Object.freeze([");
  REQUIRE(start != std::string::npos);
  const std::string table = js.substr(start, js.find("]);", start) - start);
  std::set<std::string> codes;
  const std::regex name(R"(^\s*'([a-z_]+)',)", std::regex::multiline);
  for (std::sregex_iterator it(table.begin(), table.end(), name), end; it != end; ++it) codes.insert((*it)[1]);
  CHECK(codes.size() >= 20);
  CHECK(codes.count("snippet_error") == 1);
  // ... and the host's own codes (sandbox/figure_renderer.hpp), and one nobody listed.
  for (const char* host : {"runtime_unavailable", "renderer_start_failed", "renderer_crashed", "protocol_error", "busy",
                           "shutdown", "something_new"})
    codes.insert(host);
  for (const auto& code : codes) {
    INFO(code);
    CHECK(plotq::runs::figure_outcome(code) != Outcome::ok);
    CHECK(plotq::runs::figure_outcome(code) != Outcome::unknown);
  }
  CHECK(plotq::runs::figure_outcome("snippet_error") == Outcome::plot_error);
  CHECK(plotq::runs::figure_outcome("blank") == Outcome::blank);
  CHECK(plotq::runs::figure_outcome("something_new") == Outcome::renderer_error);
}

TEST_CASE("outcomes: an outcome nobody listed is the code's failure, never success and never the host's") {
  CHECK(outcome_named("a_reason_from_a_newer_layer") == Outcome::unknown);
  const auto& o = outcome("a_reason_from_a_newer_layer");
  CHECK(o.name == "unknown");
  CHECK_FALSE(o.host);
  CHECK_FALSE(o.refusal);
  CHECK(o.turn_end == TurnEnd::failed);
  CHECK(o.turn_code == "run_failed");
  CHECK_FALSE(known_outcome("a_reason_from_a_newer_layer"));
}

TEST_CASE("outcomes: the ledger's refusals and the turn's refusals") {
  for (const char* r : {"validation", "guard_refused", "exec_denied", "sandbox_unavailable", "low_memory", "capacity",
                        "runtime_unavailable", "data_runs_exhausted", "pipeline_runs_exhausted"}) {
    INFO(r);
    CHECK(outcome(r).refusal);
  }
  for (const char* r : {"ok", "timeout", "memory", "crashed", "plot_error", "launcher", "io", "cancelled", "unknown"}) {
    INFO(r);
    CHECK_FALSE(outcome(r).refusal);
  }
  CHECK(outcome("guard_refused").turn_end == TurnEnd::refused);
  CHECK(outcome("guard_refused").turn_code == "invalid_code");
  CHECK(outcome("low_memory").turn_code == "unavailable");
  CHECK(outcome("cancelled").job_error == "cancelled");
}

// docs/outcomes.md is the table printed. Regenerate it with the file this test writes when they differ.
TEST_CASE("outcomes: docs/outcomes.md is the table as generated") {
  std::string want = plotq::runs::outcomes_markdown();
  std::string have = slurp(std::string(PLOTQ_SOURCE_DIR) + "/docs/outcomes.md");
  std::string fresh = std::string(PLOTQ_BINARY_DIR) + "/outcomes.md";
  if (have != want) {
    std::ofstream(fresh) << want;
    FAIL("docs/outcomes.md is stale: cp " << fresh << " " << PLOTQ_SOURCE_DIR << "/docs/outcomes.md");
  }
  for (std::size_t i = 0; i < kOutcomeCount; ++i) CHECK(want.find("| `" + std::string(kOutcomes[i].name) + "` |") != std::string::npos);
}

// runs/README.md's ThemeRun table names only outcomes the table has, and every outcome that is the
// host's (the sandbox could not run it) is named there.
TEST_CASE("outcomes: runs/README.md's ThemeRun table agrees with the outcome table") {
  const std::string readme = slurp(std::string(PLOTQ_SOURCE_DIR) + "/runs/README.md");
  const auto begin = readme.find("### ThemeRun outcomes");
  REQUIRE(begin != std::string::npos);
  const auto end = readme.find("\n\n", readme.find("| outcome |", begin));
  std::set<std::string> named;
  std::istringstream lines(readme.substr(begin, end - begin));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const std::string first = line.substr(1, line.find(" |", 1));  // the row's first column
    for (std::size_t a = first.find('`'); a != std::string::npos; a = first.find('`', first.find('`', a + 1) + 1)) {
      const auto b = first.find('`', a + 1);
      if (b == std::string::npos) break;
      named.insert(first.substr(a + 1, b - a - 1));
    }
  }
  REQUIRE(named.size() > 20);
  for (const auto& n : named) {
    INFO(n);
    CHECK(known_outcome(n));
  }
  for (std::size_t i = 0; i < kOutcomeCount; ++i) {
    if (!kOutcomes[i].host) continue;
    INFO(kOutcomes[i].name);
    CHECK(named.count(std::string(kOutcomes[i].name)) == 1);
  }
}

// docs/sandbox.md's reason table is sandbox::Reason: every reason has its row, and every row is a reason.
TEST_CASE("sandbox reasons: docs/sandbox.md's table lists each sandbox::Reason, and nothing else") {
  const std::string doc = slurp(std::string(PLOTQ_SOURCE_DIR) + "/docs/sandbox.md");
  const auto begin = doc.find("| reason | when | measured / limit |");
  REQUIRE(begin != std::string::npos);
  const auto end = doc.find("\n\n", begin);
  std::set<std::string> rows;
  std::istringstream lines(doc.substr(begin, end - begin));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| `", 0) == 0) rows.insert(line.substr(3, line.find('`', 3) - 3));
  std::set<std::string> reasons;
  // invalid_job is the enum's last: a reason added after it moves this bound.
  for (int r = int(plotq::sandbox::Reason::ok); r <= int(plotq::sandbox::Reason::invalid_job); ++r)
    reasons.insert(plotq::sandbox::to_string(static_cast<plotq::sandbox::Reason>(r)));
  CHECK(rows == reasons);
}

TEST_CASE("canvases: one table (sandbox/canvas.hpp) that the checks and the outcome's sentence read") {
  CHECK(plotq::sandbox::canvases_text() == "3200x1800 or 2400x2400");
  CHECK(std::string(outcome("canvas_size").sentence).find(plotq::sandbox::canvases_text()) != std::string::npos);
  CHECK(plotq::sandbox::on_canvas(3200, 1800));
  CHECK(plotq::sandbox::on_canvas(2400, 2400));
  CHECK_FALSE(plotq::sandbox::on_canvas(3200, 1801));
  CHECK(plotq::sandbox::on_canvas(3216, 1784, 16));
  CHECK_FALSE(plotq::sandbox::on_canvas(3217, 1800, 16));
  CHECK(plotq::sandbox::meant_width(1600, 900) == 3200);
  CHECK(plotq::sandbox::meant_width(900, 900) == 2400);
}

// docs/api.md's list of a plot's libraries is runs/libraries.hpp's table: no library missing, none extra.
TEST_CASE("libraries: docs/api.md names exactly the table's libraries") {
  const std::string doc = slurp(std::string(PLOTQ_SOURCE_DIR) + "/docs/api.md");
  const auto at = doc.find("(library one of `runs/libraries.hpp`:");
  REQUIRE(at != std::string::npos);
  const std::string para = doc.substr(at, doc.find("another name", at) - at);
  std::set<std::string> named;
  for (std::size_t a = para.find('`', para.find(':')); a != std::string::npos; a = para.find('`', a)) {
    const auto b = para.find('`', a + 1);
    if (b == std::string::npos) break;
    std::istringstream names(para.substr(a + 1, b - a - 1));
    for (std::string n; names >> n;)
      if (n != "|") named.insert(n);
    a = b + 1;
  }
  std::set<std::string> table;
  for (const auto& lib : plotq::runs::kLibraries) table.insert(std::string(lib.name));
  CHECK(named == table);
}

TEST_CASE("the host reads the renderer's own snippet table: every snippet library of the library table and its files") {
  // lib/snippet.mjs loads its bundles from the same file (snippet_libraries.json); no copy here.
  const auto& table = plotq::sandbox::snippet_library_files();
  std::set<std::string> snippet_libraries;
  for (const auto& lib : plotq::runs::kLibraries)
    if (lib.mode == plotq::runs::RenderMode::snippet) snippet_libraries.insert(std::string(lib.name));
  std::set<std::string> in_table;
  for (const auto& [name, files] : table) in_table.insert(name);
  CHECK(in_table == snippet_libraries);
  REQUIRE(table.count("chartjs"));
  CHECK(table.at("chartjs") == std::vector<std::string>{"chart.js/dist/chart.umd.js"});
  REQUIRE(table.count("muix"));  // bundled by esbuild: the packages it is made of
  CHECK(table.at("muix").size() > 1);
  CHECK(table.count("plotly") == 0);
}

TEST_CASE("a snippet table with a library without files or a path out of the modules dir is refused") {
  using plotq::sandbox::parse_snippet_libraries;
  CHECK(parse_snippet_libraries(R"({"d3": {"pkg": "d3", "dist": "d3/dist/d3.min.js"}})").at("d3") ==
        std::vector<std::string>{"d3/dist/d3.min.js"});
  CHECK_THROWS(parse_snippet_libraries(R"({"x": {"pkg": "x", "dist": null, "needs": []}})"));
  CHECK_THROWS(parse_snippet_libraries(R"({"x": {"pkg": "x", "dist": "../etc/passwd"}})"));
  CHECK_THROWS(parse_snippet_libraries(R"({"x": {"pkg": "x", "dist": "/etc/passwd"}})"));
}
