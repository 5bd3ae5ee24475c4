// Which files a sweep draws: every regular file under a root whose path relative to the root
// matches a glob (fnmatch with FNM_PATHNAME: `*` never crosses a '/'), optionally only some
// libraries, in path order. The library comes from the file's stem, as in anyplot's layout
// plots/<spec>/implementations/python/<stem>.py, through runs/libraries.hpp's table (letsplot.py is
// lets-plot; a stem no library has is kept as it is and answers invalid_library). A file's task carries its bytes, sha256 and
// the data.csv found beside it, if any.
#pragma once
#include "common/limits.hpp"
#include "common/text.hpp"
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace plotq::runs {

inline constexpr const char* kDefaultSweepGlob = "plots/*/implementations/python/*.py";
// JavaScript snippets: chartjs.js, d3.js, echarts.js, highcharts.js and MUI X's muix.tsx.
inline constexpr const char* kJavaScriptSweepGlob = "plots/*/implementations/javascript/*";
inline constexpr const char* kAllSweepGlob = "plots/*/implementations/*/*";
// R files (ggplot2.R: mode r) and Julia files (makie.jl: no runtime, every one runtime_unavailable).
inline constexpr const char* kRSweepGlob = "plots/*/implementations/r/*.R";
inline constexpr const char* kJuliaSweepGlob = "plots/*/implementations/julia/*.jl";
// A file larger than this is not read for hashing (it fails as source_too_large either way).
using ::plotq::limits::kMaxSweepFileBytes;  // common/limits.hpp

struct SweepFile {
  std::string rel_path;  // relative to the root, '/'-separated
  std::string abs_path;
  std::string library;   // the library its stem names (library_of)
};

// Throws std::runtime_error when root is not a readable directory. Symlinks are not followed
// (neither directories nor files): a catalogue is plain files. libraries empty = all; a library
// is named by its name or its file stem (lets-plot or letsplot).
std::vector<SweepFile> find_sweep_files(const std::string& root, const std::string& glob,
                                        const std::vector<std::string>& libraries);

std::string library_of(const std::string& rel_path);

// Which of the catalogue's languages a glob can match, by matching it against one file path of
// each in the catalogue's layout (plots/<spec>/implementations/python/matplotlib.py, .../javascript/
// chartjs.js and muix.tsx). A glob outside that layout is taken to be Python's, as before.
struct SweepLanguages {
  bool python = false;
  bool javascript = false;
  bool r = false;  // .../r/ggplot2.R: the R runtime's id (runtime/r) is part of the sweep's
};
SweepLanguages sweep_languages(const std::string& glob);

struct SweepTask {
  std::size_t index = 0;  // position in the sweep's file list (for job ids)
  SweepFile file;
  std::string sha256;     // of the file's bytes
  std::string source;     // the file's bytes
  std::string data_csv;   // <dir>/data.csv when present
  // A reason decided before anything runs, the same in every mode: source_too_large,
  // source_invalid (not UTF-8), data_too_large, unreadable.
  std::optional<std::string> refused;
};

// Reads the file (and data.csv beside it), hashes it and applies the request caps of POST /render
// (runs/render_job.hpp: kMaxRenderSourceChars, kMaxDataCsvChars, counted in UTF-8 characters).
SweepTask load_sweep_task(const SweepFile& file, std::size_t index);

using plotq::utf8_chars;  // common/text.hpp
bool valid_utf8(const std::string& s);

}  // namespace plotq::runs
