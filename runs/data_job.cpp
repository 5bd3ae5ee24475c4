#include "runs/data_job.hpp"

#include <nlohmann/json.hpp>

#include "common/sha256.hpp"
#include "runs/outcome.hpp"
#include "runs/record_fields.hpp"
#include "table/parse.hpp"

namespace plotq::runs {
namespace {

constexpr const char* kSnippet = "snippet.py";
constexpr const char* kOut = "out.csv";
constexpr const char* kResult = "result.json";
constexpr const char* kValidation = "validation.json";

// 20000 -> "20,000": how a cap reads in a sentence.
std::string grouped(std::size_t n) {
  std::string s = std::to_string(n);
  for (std::size_t i = s.size(); i > 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

std::string size_text(std::size_t bytes) {
  return bytes % 1024 == 0 ? grouped(bytes / 1024) + " KiB" : grouped(bytes) + " bytes";
}

}  // namespace

sandbox::JobSpec data_job_spec(const std::string& source, double timeout_s) {
  sandbox::JobSpec spec;
  spec.mode = "data";
  spec.files[kSnippet] = source;
  spec.argv = {"--data", kSnippet};
  spec.timeout_s = timeout_s;
  spec.outputs[kOut] = kMaxCsvBytes;
  spec.outputs[kResult] = 64 * 1024;
  spec.outputs[kValidation] = 256 * 1024;
  const table::Caps caps;
  spec.env["PLOTQ_DATA_MAX_ROWS"] = std::to_string(caps.max_rows);
  spec.env["PLOTQ_DATA_MAX_COLUMNS"] = std::to_string(caps.max_columns);
  spec.env["PLOTQ_DATA_MAX_CSV_BYTES"] = std::to_string(caps.max_bytes);
  spec.env["PLOTQ_DATA_MAX_CELL_CHARS"] = std::to_string(caps.max_cell_chars);
  spec.env["PLOTQ_DATA_MAX_CODE_CHARS"] = std::to_string(kMaxDataCodeChars);
  spec.label = "data";
  return spec;
}

DataRunResult interpret_data_job(sandbox::JobResult job) {
  DataRunResult r;
  r.measured = job.measured;
  r.limit = job.limit;
  auto output = [&](const char* name) -> const std::string* {
    auto it = job.outputs.find(name);
    return it == job.outputs.end() ? nullptr : &it->second;
  };
  // The sandbox's verdict comes first: a stop by the host, a crash, a refused layer.
  if (job.reason != sandbox::Reason::ok && job.reason != sandbox::Reason::nonzero_exit) {
    r.outcome = sandbox_outcome(job.reason);
    r.job = std::move(job);
    return r;
  }
  nlohmann::json rec;
  if (const std::string* text = output(kResult)) rec = parse_record(*text);
  int exit_code = job.exit_code.value_or(-1);
  auto rec_exit = int_field(rec, "exit_code");
  auto rec_reason = str_field(rec, "reason");
  // A reason outside the outcome table, or one of the host's, is not one the harness writes: the
  // child's own text would otherwise become the answer's reason and the ledger's outcome (an empty
  // one was found by fuzz/data_records).
  const std::optional<Outcome> said = rec_reason ? parse_outcome(*rec_reason) : std::nullopt;
  if (!rec.is_object() || !rec_exit || !said || *rec_exit != exit_code || outcome_row(*said).host) {
    // No record, or one that disagrees with the process: the snippet ended the process itself
    // (os._exit, a signal) or tampered with the harness. Never success.
    r.outcome = Outcome::harness_error;
    r.job = std::move(job);
    return r;
  }
  r.outcome = *said;
  if (rec.contains("error") && rec["error"].is_object()) {
    auto cls = str_field(rec["error"], "class");
    if (cls && plain_class_name(*cls)) r.error_class = cls;
    if (auto line = int_field(rec["error"], "line")) r.error_line = static_cast<int>(*line);
  }
  if (rec.contains("refusal") && rec["refusal"].is_object())
    r.refusal_rule = str_field(rec["refusal"], "rule");
  if (auto m = num_field(rec, "measured")) r.measured = m;
  if (auto l = num_field(rec, "limit")) r.limit = l;

  if (exit_code == 0 && r.outcome == Outcome::ok) {
    const std::string* csv = output(kOut);
    auto digest = str_field(rec, "sha256");
    // The harness writes UTF-8; other bytes mean the records were tampered with, and would make
    // /run-data's answer unwritable (found by fuzz/data_records).
    if (!csv || !digest || sha256_hex(*csv) != *digest || !table::valid_utf8(*csv)) {
      r.outcome = Outcome::harness_error;
    } else {
      r.csv_text = *csv;
      r.rows = int_field(rec, "rows");
      r.columns = int_field(rec, "columns");
    }
  } else if (r.outcome == Outcome::ok) {
    r.outcome = Outcome::harness_error;  // exit code and record disagree about success
  }
  if (r.outcome == Outcome::validation) {
    // The harness writes validation.json whenever it exits for validation: without a readable one
    // the records disagree, like a result.json that is missing or does not parse.
    const std::string* text = output(kValidation);
    nlohmann::json v = text ? parse_record(*text) : nlohmann::json();
    if (!v.is_object() || !v.contains("findings") || !v["findings"].is_array()) {
      r.outcome = Outcome::harness_error;
    } else {
      for (const auto& f : v["findings"]) {
        auto code = str_field(f, "code");
        if (!code) continue;
        r.findings.push_back(Finding{*code, static_cast<int>(int_field(f, "line").value_or(0)),
                                     str_field(f, "message").value_or("")});
      }
    }
  }
  r.job = std::move(job);
  return r;
}

std::string describe(const DataRunResult& r) {
  const Outcome o = r.outcome;
  auto at_line = [&] { return r.error_line ? " at line " + std::to_string(*r.error_line) : std::string(); };
  if (o == Outcome::ok)
    return "The code made a table of " + std::to_string(r.rows.value_or(0)) + " rows and " +
           std::to_string(r.columns.value_or(0)) + " columns.";
  if (o == Outcome::validation) {
    std::string s = "The code was not run: it breaks " + std::to_string(r.findings.size()) +
                    (r.findings.size() == 1 ? " rule" : " rules") + " for data code";
    if (!r.findings.empty())
      s += " (first: " + r.findings.front().code + " at line " + std::to_string(r.findings.front().line) + ")";
    return s + ".";
  }
  if (o == Outcome::guard_refused)
    return "The code tried something data code may not do (" + r.refusal_rule.value_or("refused") + ")" +
           at_line() + ", so the run was stopped.";
  if (o == Outcome::snippet_error)
    return "The code raised " + r.error_class.value_or("an error") + at_line() + ".";
  // The table's caps, as the job had them.
  const table::Caps caps;
  if (o == Outcome::too_many_rows) return "The table has more than " + grouped(caps.max_rows) + " rows.";
  if (o == Outcome::too_many_columns) return "The table has more than " + grouped(caps.max_columns) + " columns.";
  if (o == Outcome::too_large) return "The table is larger than " + size_text(caps.max_bytes) + " as CSV.";
  if (o == Outcome::cell_too_long)
    return "A cell or column name is longer than " + grouped(caps.max_cell_chars) + " characters.";
  // Everything else says what the outcome table says (runs/outcome.cpp).
  return std::string(outcome_row(o).sentence);
}

}  // namespace plotq::runs
