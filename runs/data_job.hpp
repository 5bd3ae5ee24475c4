// A data run: the snippet that builds a table, run by the harness's data mode in the sandbox.
// data_job_spec() says what to run; interpret_data_job() turns the launcher's JobResult and the
// harness's records (result.json, validation.json, out.csv) into one outcome from a fixed
// vocabulary. The records are written inside the sandbox, so they are cross-checked: the record's
// exit code must be the process's, and out.csv's SHA-256 must be the one the harness recorded.
#pragma once
#include "common/limits.hpp"
#include <optional>
#include <string>
#include <vector>

#include "runs/outcome.hpp"
#include "sandbox/job.hpp"
#include "table/table.hpp"

namespace plotq::runs {

using ::plotq::limits::kMaxDataSourceBytes;  // common/limits.hpp
// A data snippet's characters as the harness's validator admits them, passed into every data job
// (PLOTQ_DATA_MAX_CODE_CHARS): the widest any route admits (/run-data's source in bytes, the bound
// of PLOTQ_TURN_DATA_CODE_MAX_CHARS), so the validator never refuses as `size` what the wire let in.
using ::plotq::limits::kMaxDataCodeChars;  // common/limits.hpp
using ::plotq::limits::kMaxDataTimeoutS;  // common/limits.hpp
// The table caps are table::Caps, the parser's: data_job_spec() passes them into the job's
// environment (PLOTQ_DATA_MAX_*), the harness caps the table under them, and the host reads
// out.csv back under the same ones.
inline constexpr std::size_t kMaxCsvBytes = table::Caps{}.max_bytes;

struct Finding {
  std::string code;
  int line = 0;
  std::string message;
};

struct DataRunResult {
  sandbox::JobResult job;
  // ok, a harness reason (validation, guard_refused, snippet_error, ..., the table caps' reasons,
  // internal_error), a sandbox reason (timeout, memory, cpu, disk, files, cancelled, launcher,
  // output_*, exec_denied, ...), or harness_error when the records contradict the process.
  Outcome outcome = Outcome::ok;
  std::optional<std::string> csv_text;  // only when outcome == ok
  std::optional<std::string> error_class;
  std::optional<int> error_line;
  std::optional<std::string> refusal_rule;
  std::vector<Finding> findings;  // when outcome == validation
  std::optional<long long> rows, columns;
  std::optional<double> measured, limit;  // from the sandbox or the harness, whichever stopped it
};

sandbox::JobSpec data_job_spec(const std::string& source, double timeout_s);
DataRunResult interpret_data_job(sandbox::JobResult job);

// One sentence written by plotq from the outcome (never from what the snippet printed), for the
// chat's message and refusal texts.
std::string describe(const DataRunResult& r);

}  // namespace plotq::runs
