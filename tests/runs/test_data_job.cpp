// interpret_data_job on synthetic launcher results: the records written inside the sandbox are
// believed only when they agree with the process and with out.csv.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "common/sha256.hpp"
#include "runs/data_job.hpp"
#include "runs/outcome.hpp"
#include "runs/ledger_row.hpp"

using namespace plotq;

static sandbox::JobResult exited(int code) {
  sandbox::JobResult j;
  j.reason = code == 0 ? sandbox::Reason::ok : sandbox::Reason::nonzero_exit;
  j.exit_code = code;
  j.attempts = 1;
  return j;
}

static std::string ok_record(const std::string& csv, int rows, int cols) {
  return R"({"mode":"data","exit_code":0,"reason":"ok","error":null,"refusal":null,"measured":null,)"
         R"("limit":null,"rows":)" + std::to_string(rows) + R"(,"columns":)" + std::to_string(cols) +
         R"(,"bytes":)" + std::to_string(csv.size()) + R"(,"sha256":")" + sha256_hex(csv) + "\"}";
}

TEST_CASE("the spec runs snippet.py in data mode and collects the records under caps") {
  auto spec = runs::data_job_spec("df = 1\n", 5);
  CHECK(spec.mode == "data");
  CHECK(spec.files.at("snippet.py") == "df = 1\n");
  CHECK(spec.argv == std::vector<std::string>{"--data", "snippet.py"});
  CHECK(spec.outputs.at("out.csv") == 204'800);
  CHECK(spec.timeout_s == 5);
}

TEST_CASE("the spec gives the job the parser's table caps - the harness has no caps of its own") {
  auto spec = runs::data_job_spec("df = 1\n", 5);
  const table::Caps caps;
  CHECK(spec.env.at("PLOTQ_DATA_MAX_ROWS") == std::to_string(caps.max_rows));
  CHECK(spec.env.at("PLOTQ_DATA_MAX_COLUMNS") == std::to_string(caps.max_columns));
  CHECK(spec.env.at("PLOTQ_DATA_MAX_CSV_BYTES") == std::to_string(caps.max_bytes));
  CHECK(spec.env.at("PLOTQ_DATA_MAX_CELL_CHARS") == std::to_string(caps.max_cell_chars));
  CHECK(spec.outputs.at("out.csv") == caps.max_bytes);
  // And the snippet's character cap: the widest a route admits, so the validator never refuses as
  // size what the wire let in (PLOTQ_TURN_DATA_CODE_MAX_CHARS is bounded by the same constant).
  CHECK(spec.env.at("PLOTQ_DATA_MAX_CODE_CHARS") == std::to_string(runs::kMaxDataCodeChars));
}

TEST_CASE("a table over a cap is described with the cap the job was given") {
  auto said = [](runs::Outcome outcome) {
    runs::DataRunResult r;
    r.outcome = outcome;
    return runs::describe(r);
  };
  CHECK(said(runs::Outcome::too_many_rows) == "The table has more than 20,000 rows.");
  CHECK(said(runs::Outcome::too_many_columns) == "The table has more than 50 columns.");
  CHECK(said(runs::Outcome::too_large) == "The table is larger than 200 KiB as CSV.");
  CHECK(said(runs::Outcome::cell_too_long) == "A cell or column name is longer than 200 characters.");
}

TEST_CASE("a clean run gives the CSV and its shape") {
  auto j = exited(0);
  std::string csv = "x,y\n1,2\n";
  j.outputs["out.csv"] = csv;
  j.outputs["result.json"] = ok_record(csv, 1, 2);
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::ok);
  REQUIRE(r.csv_text);
  CHECK(*r.csv_text == csv);
  CHECK(r.rows == 1);
  CHECK(r.columns == 2);
  CHECK(runs::describe(r) == "The code made a table of 1 rows and 2 columns.");
}

TEST_CASE("out.csv that does not match the recorded digest is never success") {
  auto j = exited(0);
  j.outputs["out.csv"] = "x\n666\n";
  j.outputs["result.json"] = ok_record("x\n1\n", 1, 1);
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::harness_error);
  CHECK_FALSE(r.csv_text);
}

TEST_CASE("out.csv that is not UTF-8 is never success - even with its digest recorded") {
  // fuzz/corpus/data_records/crash-csv-not-utf8: /run-data's answer could not be written.
  const std::string csv = "a,b\n\xff,2\n";
  auto j = exited(0);
  j.outputs["out.csv"] = csv;
  j.outputs["result.json"] = ok_record(csv, 1, 2);
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::harness_error);
  CHECK_FALSE(r.csv_text);
}

TEST_CASE("exit 0 without a record (os._exit(0) from the snippet) is never success") {
  auto j = exited(0);
  j.outputs["out.csv"] = "x\n1\n";
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::harness_error);
  CHECK_FALSE(r.csv_text);
}

TEST_CASE("a record whose reason the harness never writes is harness_error - never the child's text") {
  // fuzz/corpus/data_records/crash-empty-reason: {"exit_code":5,"reason":""} was the outcome "".
  for (const char* reason : {"", "my own words", "cancelled", "low_memory"}) {
    auto j = exited(5);
    j.outputs["result.json"] = nlohmann::json{{"exit_code", 5}, {"reason", reason}}.dump();
    auto r = runs::interpret_data_job(j);
    CHECK(r.outcome == runs::Outcome::harness_error);
  }
  auto j = exited(5);
  j.outputs["result.json"] = R"({"exit_code":5,"reason":"guard_refused","refusal":{"rule":"open"}})";
  CHECK(runs::interpret_data_job(j).outcome == runs::Outcome::guard_refused);
}

TEST_CASE("a record whose exit code differs from the process is refused") {
  auto j = exited(12);
  j.outputs["result.json"] = R"({"exit_code":0,"reason":"ok","sha256":"x"})";
  CHECK(runs::interpret_data_job(j).outcome == runs::Outcome::harness_error);
}

TEST_CASE("a snippet error gives class and line, never a message") {
  auto j = exited(12);
  j.outputs["result.json"] =
      R"({"exit_code":12,"reason":"snippet_error","error":{"class":"ZeroDivisionError","line":3},"refusal":null})";
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::snippet_error);
  CHECK(r.error_class == "ZeroDivisionError");
  CHECK(r.error_line == 3);
  CHECK(runs::describe(r) == "The code raised ZeroDivisionError at line 3.");
}

TEST_CASE("a class name that is not a plain name is dropped") {
  auto j = exited(12);
  j.outputs["result.json"] =
      R"({"exit_code":12,"reason":"snippet_error","error":{"class":"<script>x</script>","line":1}})";
  auto r = runs::interpret_data_job(j);
  CHECK_FALSE(r.error_class);
}

TEST_CASE("validation findings are read from validation.json") {
  auto j = exited(10);
  j.outputs["result.json"] = R"({"exit_code":10,"reason":"validation"})";
  j.outputs["validation.json"] =
      R"({"findings":[{"code":"banned-name","line":2,"message":"open is not allowed"}]})";
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::validation);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].code == "banned-name");
  CHECK(r.findings[0].line == 2);
  CHECK(runs::outcome_row(r.outcome).refusal);
}

// Valid JSON nested past the records' cap: nlohmann would parse it (and the record would pass),
// so only the depth scan refuses it.
static std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST_CASE("a result.json nested deeper than a record is refused unparsed") {
  auto j = exited(0);
  std::string csv = "x\n1\n";
  j.outputs["out.csv"] = csv;
  std::string rec = ok_record(csv, 1, 1);
  rec.insert(rec.size() - 1, R"(,"pad":)" + nested(64));
  REQUIRE(nlohmann::json::parse(rec, nullptr, false).is_object());
  j.outputs["result.json"] = rec;
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::harness_error);
  CHECK_FALSE(r.csv_text);
}

TEST_CASE("a validation.json nested deeper than a record is refused unparsed") {
  auto j = exited(10);
  j.outputs["result.json"] = R"({"exit_code":10,"reason":"validation"})";
  std::string v = R"({"findings":[{"code":"banned-name","line":2,"message":"m","pad":)" + nested(64) + "}]}";
  REQUIRE(nlohmann::json::parse(v, nullptr, false).is_object());
  j.outputs["validation.json"] = v;
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::harness_error);
  CHECK(r.findings.empty());
}

TEST_CASE("an exit for validation without a readable validation.json is harness_error") {
  auto j = exited(10);
  j.outputs["result.json"] = R"({"exit_code":10,"reason":"validation"})";
  CHECK(runs::interpret_data_job(j).outcome == runs::Outcome::harness_error);
  j.outputs["validation.json"] = "{not json";
  CHECK(runs::interpret_data_job(j).outcome == runs::Outcome::harness_error);
}

TEST_CASE("a host stop wins over whatever the records say") {
  sandbox::JobResult j;
  j.reason = sandbox::Reason::timeout;
  j.timed_out = true;
  j.outputs["result.json"] = R"({"exit_code":0,"reason":"ok"})";
  auto r = runs::interpret_data_job(j);
  CHECK(r.outcome == runs::Outcome::timeout);
  CHECK(runs::describe(r) == "The code did not finish within the time limit.");
}

TEST_CASE("ledger rows: ok, refused and failed") {
  runs::RunWho who{"job-1", "alice", std::nullopt, std::nullopt};
  auto ok = runs::ledger_row(who, store::RunKind::data, exited(0), runs::Outcome::ok, 0.5);
  CHECK(ok.outcome == store::RunOutcome::ok);
  CHECK_FALSE(ok.refusal_code);
  auto refused = runs::ledger_row(who, store::RunKind::data, exited(11), runs::Outcome::guard_refused, 0);
  CHECK(refused.outcome == store::RunOutcome::refused);
  CHECK(refused.refusal_code == "guard_refused");
  auto failed = runs::ledger_row(who, store::RunKind::data, exited(12), runs::Outcome::snippet_error, 0);
  CHECK(failed.outcome == store::RunOutcome::failed);
  CHECK(failed.reason == "snippet_error");
  auto before = runs::refused_row(who, store::RunKind::data, runs::Outcome::capacity);
  CHECK(before.outcome == store::RunOutcome::refused);
  CHECK(before.refusal_code == "capacity");
}
