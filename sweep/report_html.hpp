// `plotq sweep report LABEL --html DIR` and `plotq sweep diff A B --html DIR`: the page to look at.
// Pure functions from the report/diff documents (sweep/report.hpp) and the rows to HTML text; the
// CLI (tools/cmd_sweep.cpp) copies the thumbnails (sweep/images.hpp) into DIR/img and writes
// DIR/index.html. The page works offline: no script, no CDN, no font, its CSS inline and pinned
// by hash in a strict Content-Security-Policy meta (default-src 'none'; images from the page's own
// directory only). Every text from a sweep (paths, classes, reasons, details: a plot file's name
// and its exception class are a stranger's) is HTML-escaped, invalid UTF-8 shown as U+FFFD.
#pragma once
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sweeps.hpp"

namespace plotq::runs {

// & < > " ' as entities, invalid UTF-8 bytes as U+FFFD: safe in text and in quoted attributes.
std::string html_escape(std::string_view text);

// What a row counts as in the report's table: "render", else its reason_class.
std::string outcome_class(const store::SweepResult& row);

// The page's <meta http-equiv="Content-Security-Policy"> value (style pinned by its sha256).
std::string report_csp();

// report: sweep_report(sweep, rows). images: the thumbnail names (sweep_image_name) present in
// DIR/img/. Counts per library and outcome class (cells carry data-library and data-class), then
// a card per file with each theme's thumbnail (or "no image"), outcome, canvas, size and timing.
std::string report_html(const nlohmann::json& report, const std::vector<store::SweepResult>& rows,
                        const std::set<std::string>& images);

// diff: sweep_diff(a, rows_a, b, rows_b). images_a/images_b: the names present in DIR/img/a/ and
// DIR/img/b/. One block per difference: path, theme, kind, cause, then A and B side by side
// (image, outcome, reason).
std::string diff_html(const nlohmann::json& diff, const std::set<std::string>& images_a,
                      const std::set<std::string>& images_b);

}  // namespace plotq::runs
