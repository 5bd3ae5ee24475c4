// `plotq sweep report LABEL --html DIR` and `plotq sweep diff A B --html DIR`: the file side of
// the page (the page itself is sweep/report_html.hpp). Copies the sweep's kept thumbnails
// (sweep/images.hpp) into DIR/img/ (diff: DIR/img/a/ and DIR/img/b/) and writes DIR/index.html.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sweeps.hpp"

namespace plotq::cli {

// 0, or 1 when DIR cannot be written (the reason on stderr). Prints what it wrote on stdout.
int write_report_html(const std::string& db_path, const store::Sweep& sweep,
                      const std::vector<store::SweepResult>& rows, const nlohmann::json& report,
                      const std::string& dir);
int write_diff_html(const std::string& db_path, const store::Sweep& a, const store::Sweep& b,
                    const nlohmann::json& diff, const std::string& dir);

}  // namespace plotq::cli
