// What every fuzz target shares: the libFuzzer entry point's signature, a check that aborts (so a
// broken invariant is a crash libFuzzer keeps, and a failed replay in the g++ build), and the split
// of one input into several files (the child-record targets need result.json, out.csv, ... at once).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// Aborts with the failed condition: an invariant a target checks on a parser's answer.
#define PLOTQ_FUZZ_CHECK(cond)                                                            \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

namespace plotq::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits on the line "\n=====\n" into exactly n parts (missing ones are empty, extra separators stay
// in the last part). Seeds stay readable text; libFuzzer learns the separator from them.
inline std::vector<std::string> split_parts(std::string_view in, std::size_t n) {
  static constexpr std::string_view kSep = "\n=====\n";
  std::vector<std::string> parts;
  while (parts.size() + 1 < n) {
    std::size_t at = in.find(kSep);
    if (at == std::string_view::npos) break;
    parts.emplace_back(in.substr(0, at));
    in.remove_prefix(at + kSep.size());
  }
  parts.emplace_back(in);
  parts.resize(n);
  return parts;
}

}  // namespace plotq::fuzz
