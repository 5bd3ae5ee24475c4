// The routes' body parsers on a body alone (no HTTP around it, so every execution reaches a parser):
// the first byte picks the route whose parser reads the rest.
#include "fuzz/body_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string_view body = plotq::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: plotq::fuzz::message_body(body); break;
    case 1: plotq::fuzz::run_data_body(body); break;
    case 2: plotq::fuzz::render_body(body); break;
    default: plotq::fuzz::paste_body(body); break;
  }
  return 0;
}
