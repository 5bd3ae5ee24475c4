// Small text scans that several layers apply to a stranger's bytes, written once.
#pragma once
#include <cstddef>
#include <string_view>

namespace plotq {

// Code points of UTF-8 text (bytes that are not continuation bytes). Limits on characters count
// these, so a limit means the same in every route and record.
std::size_t utf8_chars(std::string_view s);

// UTF-8 (no overlong forms, no surrogates, at most U+10FFFF) without a NUL byte: what a text column
// holds on both store engines (PostgreSQL's text refuses the rest).
bool storable_text(std::string_view s);

// The deepest bracket nesting ([ and {) outside JSON strings. Run before a JSON parser sees a
// stranger's document, so a bomb nested a million deep is refused in one linear pass.
std::size_t json_depth(std::string_view s);

}  // namespace plotq
