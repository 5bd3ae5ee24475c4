// The work-dir watchdog's measurements: a walk of the live work dir (no link followed, stopping
// early once over a limit) and the machine's MemAvailable. The Launcher runs them every
// watch_interval_ms on a worker thread (never on the event loop) and once more after the exit.
#pragma once
#include <cstdint>
#include <optional>

namespace plotq::sandbox {

struct TreeLimits {
  std::uint64_t max_bytes = 64ull << 20;
  std::uint64_t max_entries = 10000;
  std::uint32_t max_depth = 32;
};

struct TreeMeasure {
  std::uint64_t bytes = 0;    // allocated bytes (st_blocks * 512) of every entry seen
  std::uint64_t entries = 0;  // files, directories, links, ... (the root not counted)
  bool measurable = true;     // false: too deep, or a listing/stat error other than a vanished entry
  bool over_bytes(const TreeLimits& l) const { return bytes > l.max_bytes; }
  bool over_entries(const TreeLimits& l) const { return entries > l.max_entries; }
};

// Walks the directory open at dirfd. Stops as soon as a limit is exceeded or it is unmeasurable.
TreeMeasure measure_tree(int dirfd, const TreeLimits& limits);

// /proc/meminfo MemAvailable in MiB; empty when unreadable.
std::optional<std::uint64_t> mem_available_mb();

}  // namespace plotq::sandbox
