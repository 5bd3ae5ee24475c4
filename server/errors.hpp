// The one error vocabulary of plotqd. Every error answer is {"detail":"<code>"} with a code from
// this table and the table's status; codes match ^[a-z_]{1,32}$ so a client can tell plotqd's errors
// from a proxy's. Add a code here (and to the table in server/README.md; a test compares them).
#pragma once
#include <exception>
#include <string>
#include <string_view>

namespace plotq::server {

struct ErrorCode {
  std::string_view code;
  int status;
  std::string_view meaning;  // one line, for the README table and reviewers
};

inline constexpr ErrorCode kErrorCodes[] = {
    {"bad_request", 400, "malformed HTTP, bad percent-encoding, a Last-Event-ID or X-Plotq-User out of its form"},
    {"unauthenticated", 401, "no bearer token, a malformed one, or an unknown one"},
    {"forbidden", 403, "caller known but not allowed here (role, or development mode off loopback)"},
    {"not_found", 404, "no route for this path, or the named object does not exist"},
    {"session_not_found", 404, "no such chat session for this caller"},
    {"method_not_allowed", 405, "the path exists but not with this method"},
    {"job_conflict", 409, "same job id, different payload (idempotency)"},
    {"run_active", 409, "the user already has a turn in flight"},
    {"too_large", 413, "request body over the body limit (answered before reading it)"},
    {"too_long", 413, "a text field over its character cap (e.g. a turn's text)"},
    {"invalid_job", 422, "the body is not JSON or does not match the route's wire model"},
    {"invalid_library", 422, "a plotting library plotq does not render (runs/libraries.hpp lists them)"},
    {"code", 422, "a paste that is code: send it as a data snippet in the chat instead"},
    {"formula", 422, "a paste that is a formula, not a table"},
    {"encoding", 422, "a paste that is not valid UTF-8"},
    {"control_chars", 422, "a paste with control characters other than tab, LF, CR"},
    {"empty", 422, "a paste with no table in it"},
    {"unparseable", 422, "a paste that is not a table the parser can read"},
    {"too_many_columns", 422, "a paste with more than 50 columns"},
    {"too_many_rows", 422, "a paste with more than 20,000 rows"},
    {"cell_too_long", 422, "a paste with a cell or header over 200 characters"},
    {"headers_too_large", 431, "request line plus headers over the header limit"},
    {"cancelled", 499, "the job was cancelled before it finished"},
    {"client_gone", 499, "the client went away before the answer"},
    {"internal", 500, "unexpected failure; logged by class name only"},
    {"unavailable", 503, "draining (with Retry-After), at the connection limit, or a failing health or readiness check"},
    {"busy", 503, "waited too long for the render slot"},
    {"capacity", 503, "the queue is full"},
    {"low_memory", 503, "available memory below the floor before a sandbox start"},
    {"stuck", 503, "a killed sandbox is still alive"},
    {"sandbox_unavailable", 503, "the sandbox launcher cannot run here"},
    {"runtime_unavailable", 503, "this job needs a runtime this instance lacks"},
    {"renderer_failed", 503, "the figure renderer (Chromium) failed; a retry draws again"},
    {"sandbox_lost", 503, "the sandbox lost the job's process (its zygote died under it); a retry runs again"},
    {"io", 503, "host I/O failure (failed fork, unwritable dir)"},
    {"scratch_full", 503, "the sandbox's scratch file system (the runs dir) is full; the job did not run or failed for it"},
    {"node_lost", 503, "a cluster node running the job was lost mid-run; kept as its answer: the job id never runs it again"},
    {"store_unavailable", 503, "the store cannot be used now (a SQLite file, or PostgreSQL out of reach); Retry-After says when to try again"},
    {"storage_full", 503, "the store's file system is full: writes wait for space, reads still answer"},
};

// The table row for a code, or nullptr when the code is not in the vocabulary.
const ErrorCode* find_error(std::string_view code);

// The code for a failed store call: storage_full when SQLite found the file system full (a write
// that can succeed again by itself once space is freed), else store_unavailable.
std::string_view store_failure_code(const std::exception& e);
// The same for a store call's failure code as store::Exec hands it back (Stored::code).
std::string_view store_failure_code(std::string_view store_code);

// {"detail":"<code>"} (compact JSON, no newline).
std::string error_body(std::string_view code);

}  // namespace plotq::server
