// A data run's records as the host reads them after the child exits: result.json, validation.json
// and out.csv are bytes the sandboxed snippet could have written. The input is those three files
// split on "\n=====\n"; a first line "exit N" sets the process's exit code. "@SHA@" in result.json
// is replaced by out.csv's real digest, so the fuzzer gets past the cross-check to the CSV reader.
// What the host builds from an accepted run must be answerable: /run-data's answer is dumped
// strictly (job_claim.cpp stores answer.dump()), and out.csv becomes a dataset version.
#include <nlohmann/json.hpp>

#include "common/sha256.hpp"
#include "fuzz/fuzz.hpp"
#include "runs/data_job.hpp"
#include "table/parse.hpp"

using namespace plotq;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = fuzz::split_parts(fuzz::as_text(data, size), 4);
  sandbox::JobResult job;
  job.reason = sandbox::Reason::ok;
  job.exit_code = 0;
  if (parts[0].rfind("exit ", 0) == 0) {
    int code = std::atoi(parts[0].c_str() + 5);
    job.exit_code = code;
    job.reason = code == 0 ? sandbox::Reason::ok : sandbox::Reason::nonzero_exit;
  }
  std::string& result = parts[1];
  const std::string& csv = parts[3];
  if (auto at = result.find("@SHA@"); at != std::string::npos) result.replace(at, 5, sha256_hex(csv));
  if (!result.empty()) job.outputs["result.json"] = result;
  if (!parts[2].empty()) job.outputs["validation.json"] = parts[2];
  if (!csv.empty()) job.outputs["out.csv"] = csv;

  runs::DataRunResult r = runs::interpret_data_job(std::move(job));
  PLOTQ_FUZZ_CHECK(static_cast<std::size_t>(r.outcome) < runs::kOutcomeCount);
  PLOTQ_FUZZ_CHECK(r.csv_text.has_value() == (r.outcome == runs::Outcome::ok));
  nlohmann::json answer = {{"reason", runs::to_string(r.outcome)}, {"csv_text", r.csv_text ? *r.csv_text : ""},
                           {"error_class", r.error_class.value_or("")}, {"rule", r.refusal_rule.value_or("")},
                           {"stderr_tail", runs::describe(r)}};
  for (const auto& f : r.findings) answer["findings"].push_back({{"code", f.code}, {"message", f.message}});
  try {
    (void)answer.dump();
  } catch (const nlohmann::json::exception& e) {
    std::fprintf(stderr, "the answer cannot be written: %s\n", e.what());
    std::abort();
  }
  if (r.csv_text) (void)table::parse_table(*r.csv_text, {}, table::Delimiter::comma);  // as add_table_version reads it
  return 0;
}
