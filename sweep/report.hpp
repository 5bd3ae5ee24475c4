// What `plotq sweep report` and `plotq sweep diff` compute from stored rows (pure functions; the
// CLI prints them as tables or, with --json, as these documents).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sweeps.hpp"

namespace plotq::runs {

// {label, mode, server_url, state, root, glob, libraries, themes, timeout_s, jobs, plotq_version,
//  created_at, finished_at, runtime_id, files:{total, done, all_render}, rows,
//  outcomes:{render, fail, canvas_off},
//  by_library:[{library, files, render, fail, canvas_exact, canvas_off, off_sizes:[{size, rows}]}]
//  (off_sizes: the most common sizes of the renders off the canvas, the drift),
//  by_reason:[{reason_class, reason, rows, files}] (fails, most first),
//  slowest:[{path, theme, library, outcome, reason_class, wall_s, cpu_s, max_rss_mb}] (top `slowest`),
//  totals:{elapsed_s, wall_s, cpu_s, mean_wall_s, max_rss_mb}}
nlohmann::json sweep_report(const store::Sweep& sweep, const std::vector<store::SweepResult>& rows,
                            std::size_t slowest = 10);

// Rows are matched by (path, theme). A difference is a pair whose outcome or reason_class differs,
// or a row present in only one sweep.
// {a:{label, mode, state, files_done, files_total, runtime_id, plotq_version}, b:{...},
//  runtime_changed, compared, count,
//  differences:[{path, theme, kind: changed|only_a|only_b, hash_changed, cause,
//                a:{outcome, reason, reason_class, sha256}|null, b:{...}|null}]}
// Why a pair that differs differs, the first that holds: "file" (the plot file's bytes changed),
// "runtime" (the sweeps ran on different runtimes, or one's is unknown), "mode" (bare against
// sandbox: the sandbox's own rules), "plotq" (another plotq version), else "unexplained" (same
// inputs: a flaky file or a plotq change within one version).
std::string diff_cause(bool hash_changed, const store::Sweep& a, const store::Sweep& b);

nlohmann::json sweep_diff(const store::Sweep& a, const std::vector<store::SweepResult>& rows_a,
                          const store::Sweep& b, const std::vector<store::SweepResult>& rows_b);

}  // namespace plotq::runs
