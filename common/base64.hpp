// Standard base64 (RFC 4648, with padding): the PNGs of POST /render's answer travel this way.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace plotq {

std::string base64_encode(std::string_view bytes);
// nullopt when `text` is not padded base64 (a length not a multiple of 4, a foreign character,
// padding anywhere but at the end).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace plotq
