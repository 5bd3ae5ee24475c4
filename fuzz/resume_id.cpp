// The SSE resume point: a Last-Event-ID header (first byte odd) or ?after=N (even), through
// resume_after as GET .../events reads it. Accepted values are exactly the decimal numbers of at
// most 18 digits (spaces around a header value ignored); everything else is refused.
#include "fuzz/fuzz.hpp"
#include "server/router.hpp"
#include "server/turn_stream.hpp"

using namespace plotq::server;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string value(plotq::fuzz::as_text(data + 1, size - 1));
  Request req;
  std::string_view digits = value;
  if (data[0] & 1) {
    req.headers.push_back({"Last-Event-ID", value});
    while (!digits.empty() && digits.front() == ' ') digits.remove_prefix(1);
    while (!digits.empty() && digits.back() == ' ') digits.remove_suffix(1);
  } else {
    auto q = parse_query("after=" + value);
    if (!q) return 0;
    req.query = std::move(*q);
    digits = req.query.front().second;
  }
  auto after = resume_after(req);
  bool decimal = !digits.empty() && digits.size() <= 18 &&
                 digits.find_first_not_of("0123456789") == std::string_view::npos;
  PLOTQ_FUZZ_CHECK(after.has_value() == decimal);
  if (after) {
    PLOTQ_FUZZ_CHECK(*after >= 0);
    PLOTQ_FUZZ_CHECK(std::to_string(*after) == std::string(digits).erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1)));
  }
  return 0;
}
