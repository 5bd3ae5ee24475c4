// A rendered plot scaled down for the sweep's HTML report (sweep/images.hpp keeps one per file and
// theme). Pure: PNG bytes in, PNG bytes out (libpng's simplified API).
#pragma once
#include "common/limits.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace plotq::runs {

// Both canvases scale by exactly 1/10 into this box (3200x1800 -> 320x180, 2400x2400 -> 240x240):
// 8.7 KB on average for tests/catalogue's renders, whose full PNGs are 72-118 KB: the 650 files of
// the real catalogue in two themes make a report of about 11 MB.
using ::plotq::limits::kThumbMaxWidth;  // common/limits.hpp
using ::plotq::limits::kThumbMaxHeight;  // common/limits.hpp
// A PNG is a child's output: its header may declare any size. Decoding needs 4 bytes a pixel, so
// more pixels than this (6000 x 4166, 100 MB) get no thumbnail.
using ::plotq::limits::kThumbMaxSourcePixels;  // common/limits.hpp

// The image scaled (area average, alpha premultiplied) to fit max_w x max_h, never enlarged;
// RGB when every pixel is opaque, else RGBA. nullopt when png is not a PNG libpng decodes, or
// declares more than kThumbMaxSourcePixels.
std::optional<std::string> png_thumbnail(std::string_view png, int max_w = kThumbMaxWidth,
                                         int max_h = kThumbMaxHeight);

}  // namespace plotq::runs
