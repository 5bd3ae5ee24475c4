// Every fixed limit of plotq in one place, in the manner of SQLite's sqliteLimit.h: each with its
// bound, its unit, why it is that, and the setting it bounds (a setting may move a limit only
// within the range its registry line gives, never past the bound here). The code reads the
// constants; kLimits describes them, and docs/limits.md is kLimits (tests/server/limits_table_test.cpp
// holds the two equal, and each setting's registered maximum to its bound).
//
// Not here: the settings' own defaults (each on its registry line, docs/settings.md), the queue's
// (queue/ depends on nothing of ours), and numbers that are a format's, not a limit (file modes,
// magic numbers, header sizes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace plotq::limits {

// ---- what a request may carry (server/route_bodies.hpp, runs/) ----
inline constexpr std::size_t kMaxRenderSourceChars = 131'072;
inline constexpr std::size_t kMaxDataCsvChars = 2'097'152;
inline constexpr double kMaxRenderTimeoutS = 120;
inline constexpr std::size_t kMaxDataSourceBytes = 16 * 1024;
inline constexpr std::size_t kMaxDataCodeChars = 16'384;
static_assert(kMaxDataSourceBytes <= kMaxDataCodeChars, "a /run-data source of n bytes has at most n characters");
inline constexpr double kMaxDataTimeoutS = 30;
inline constexpr std::size_t kRunDataBodyLimit = 64 * 1024;
inline constexpr std::size_t kRenderBodyLimit = 8 * 1024 * 1024;
inline constexpr std::size_t kPasteBodyLimit = 2 * 1024 * 1024;
inline constexpr std::size_t kMaxBodyDepth = 8;

// ---- what a child may hand back (runs/, sandbox/) ----
inline constexpr std::size_t kMaxPngBytes = 10'485'760;
inline constexpr std::size_t kMaxRenderRecordBytes = 64 * 1024;
inline constexpr std::size_t kMaxRecordDepth = 8;
inline constexpr int kCanvasTolerancePx = 16;
inline constexpr std::uint64_t kScratchFullBytes = 256 * 1024;

// ---- what the host reads or keeps ----
inline constexpr std::size_t kMaxRuntimeManifestBytes = 256 * 1024;
inline constexpr std::size_t kMaxSessionOwners = 100'000;
inline constexpr std::size_t kMaxSweepFileBytes = 4u << 20;
inline constexpr std::size_t kThumbMaxBytes = 2u << 20;
inline constexpr int kThumbMaxWidth = 320;
inline constexpr int kThumbMaxHeight = 240;
inline constexpr std::uint64_t kThumbMaxSourcePixels = 25'000'000;

// ---- the sandbox's own processes ----
inline constexpr int kMaxSparesLost = 8;

struct Limit {
  std::string_view name;
  double bound;
  std::string_view unit;
  std::string_view setting;  // the setting this bounds ("" none: fixed)
  std::string_view why;
};

inline constexpr Limit kLimits[] = {
    {"kMaxRenderSourceChars", kMaxRenderSourceChars, "characters", "PLOTQ_TURN_PLOT_CODE_MAX_CHARS",
     "a plot's source in /render and a turn: a script, with room for a dataset written inline"},
    {"kMaxDataCsvChars", kMaxDataCsvChars, "characters", "",
     "the data.csv a render reads: the table parser's largest table, with room for quoting"},
    {"kMaxRenderTimeoutS", kMaxRenderTimeoutS, "seconds", "PLOTQ_TURN_RENDER_TIMEOUT_S",
     "a render's own timeout_s: a figure library's cold start on a loaded host fits, a stuck job is not kept"},
    {"kMaxDataSourceBytes", kMaxDataSourceBytes, "bytes", "", "a /run-data source: a data snippet builds a table, not a program"},
    {"kMaxDataCodeChars", kMaxDataCodeChars, "characters", "PLOTQ_TURN_DATA_CODE_MAX_CHARS",
     "the data snippet the harness's validator admits (passed in as PLOTQ_DATA_MAX_CODE_CHARS): the widest any route admits"},
    {"kMaxDataTimeoutS", kMaxDataTimeoutS, "seconds", "", "a /run-data's own timeout_s: building a table is quick"},
    {"kRunDataBodyLimit", kRunDataBodyLimit, "bytes", "", "POST /run-data's body: its largest source, JSON-escaped"},
    {"kRenderBodyLimit", kRenderBodyLimit, "bytes", "", "POST /render's body: the largest source and data_csv, JSON-escaped"},
    {"kPasteBodyLimit", kPasteBodyLimit, "bytes", "", "a pasted table's body: the table parser's text cap, JSON-escaped"},
    {"kMaxBodyDepth", kMaxBodyDepth, "levels", "",
     "JSON nesting of a request body: the wire models are 3 deep; deeper recursion overflowed the loop's stack (fuzz/wire)"},
    {"kMaxPngBytes", kMaxPngBytes, "bytes", "", "a render's PNG read back from the child: a 3200x1800 plot is well under 1 MiB"},
    {"kMaxRenderRecordBytes", kMaxRenderRecordBytes, "bytes", "", "a render's result.json from the child: a flat record of a few fields"},
    {"kMaxRecordDepth", kMaxRecordDepth, "levels", "", "JSON nesting of a child's records: they are flat; deeper is not one of them"},
    {"kCanvasTolerancePx", kCanvasTolerancePx, "pixels", "", "how far a PNG may be off 3200x1800 or 2400x2400 and still be exact"},
    {"kScratchFullBytes", kScratchFullBytes, "bytes", "",
     "free space under which a failed job's file system counts as full (scratch_full): a few pages"},
    {"kMaxRuntimeManifestBytes", kMaxRuntimeManifestBytes, "bytes", "", "a runtime manifest read at start: a few KiB"},
    {"kMaxSessionOwners", kMaxSessionOwners, "sessions", "", "the session -> user cache of a node: a day's sessions"},
    {"kMaxSweepFileBytes", kMaxSweepFileBytes, "bytes", "", "a catalogue file the sweep reads to hash (a larger one fails source_too_large)"},
    {"kThumbMaxBytes", kThumbMaxBytes, "bytes", "", "a sweep thumbnail read back; a larger file is not one of ours"},
    {"kThumbMaxWidth", kThumbMaxWidth, "pixels", "", "a sweep thumbnail's box: both canvases scale by 1/10"},
    {"kThumbMaxHeight", kThumbMaxHeight, "pixels", "", "a sweep thumbnail's box: both canvases scale by 1/10"},
    {"kThumbMaxSourcePixels", static_cast<double>(kThumbMaxSourcePixels), "pixels", "",
     "a child's PNG the sweep decodes for a thumbnail (4 bytes a pixel): its header may declare any size"},
    {"kMaxSparesLost", kMaxSparesLost, "spares", "",
     "armed spares of a mode that die waiting in a row before it stops arming them (until its zygote restarts): no fork loop"},
};

// docs/limits.md: kLimits as a Markdown table.
inline std::string markdown() {
  auto num = [](double v) {
    std::string s = std::to_string(static_cast<long long>(v));
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
    return s;
  };
  std::string out =
      "# Limits\n\nEvery fixed limit of plotq, declared once in `common/limits.hpp` (in the manner of SQLite's\n"
      "`sqliteLimit.h`); this file is generated from it (tests/server/limits_table_test.cpp). A limit that bounds\n"
      "a setting names it: the setting may be moved within its range (docs/settings.md), never past the\n"
      "bound.\n\n| limit | bound | unit | bounds the setting | why |\n|---|---|---|---|---|\n";
  for (const auto& l : kLimits)
    out += "| `" + std::string(l.name) + "` | " + num(l.bound) + " | " + std::string(l.unit) + " | " +
           (l.setting.empty() ? std::string("fixed") : "`" + std::string(l.setting) + "`") + " | " + std::string(l.why) +
           " |\n";
  return out;
}

}  // namespace plotq::limits
