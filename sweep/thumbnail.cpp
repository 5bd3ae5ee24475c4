#include "sweep/thumbnail.hpp"

#include <png.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace plotq::runs {
namespace {

// png_image owns libpng's state until png_image_free; this frees it on every path.
struct ImageGuard {
  png_image* image;
  ~ImageGuard() { png_image_free(image); }
};

}  // namespace

std::optional<std::string> png_thumbnail(std::string_view png, int max_w, int max_h) {
  if (max_w < 1 || max_h < 1 || png.size() < 8) return std::nullopt;
  png_image in;
  std::memset(&in, 0, sizeof in);
  in.version = PNG_IMAGE_VERSION;
  ImageGuard guard{&in};
  if (!png_image_begin_read_from_memory(&in, png.data(), png.size())) return std::nullopt;
  const std::uint64_t sw = in.width, sh = in.height;
  if (sw == 0 || sh == 0 || sw * sh > kThumbMaxSourcePixels) return std::nullopt;
  in.format = PNG_FORMAT_RGBA;
  std::vector<std::uint8_t> src(PNG_IMAGE_SIZE(in));
  if (!png_image_finish_read(&in, nullptr, src.data(), 0, nullptr)) return std::nullopt;

  // Fit the box, keep the aspect ratio, never enlarge.
  double scale = std::min({1.0, static_cast<double>(max_w) / static_cast<double>(sw),
                           static_cast<double>(max_h) / static_cast<double>(sh)});
  const std::uint64_t dw = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(sw) * scale + 0.5));
  const std::uint64_t dh = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(sh) * scale + 0.5));

  // Area average: destination pixel (x, y) is the mean of source columns [x*sw/dw, (x+1)*sw/dw)
  // and the rows likewise, colour weighted by alpha so that transparent pixels add no colour.
  std::vector<std::uint8_t> dst(dw * dh * 4);
  std::vector<std::uint64_t> acc(dw * 4);
  bool opaque = true;
  for (std::uint64_t y = 0; y < dh; ++y) {
    std::fill(acc.begin(), acc.end(), 0);
    const std::uint64_t y0 = y * sh / dh, y1 = std::max(y0 + 1, (y + 1) * sh / dh);
    for (std::uint64_t sy = y0; sy < y1; ++sy) {
      const std::uint8_t* row = src.data() + sy * sw * 4;
      for (std::uint64_t x = 0; x < dw; ++x) {
        const std::uint64_t x0 = x * sw / dw, x1 = std::max(x0 + 1, (x + 1) * sw / dw);
        std::uint64_t* a = acc.data() + x * 4;
        for (std::uint64_t sx = x0; sx < x1; ++sx) {
          const std::uint8_t* p = row + sx * 4;
          a[0] += std::uint64_t{p[0]} * p[3];
          a[1] += std::uint64_t{p[1]} * p[3];
          a[2] += std::uint64_t{p[2]} * p[3];
          a[3] += p[3];
        }
      }
    }
    for (std::uint64_t x = 0; x < dw; ++x) {
      const std::uint64_t x0 = x * sw / dw, x1 = std::max(x0 + 1, (x + 1) * sw / dw);
      const std::uint64_t n = (x1 - x0) * (y1 - y0);
      const std::uint64_t* a = acc.data() + x * 4;
      std::uint8_t* q = dst.data() + (y * dw + x) * 4;
      for (int c = 0; c < 3; ++c) q[c] = a[3] ? static_cast<std::uint8_t>((a[c] + a[3] / 2) / a[3]) : 0;
      q[3] = static_cast<std::uint8_t>((a[3] + n / 2) / n);
      opaque = opaque && q[3] == 255;
    }
  }
  if (opaque) {  // drop the alpha channel: a quarter smaller
    for (std::uint64_t i = 0; i < dw * dh; ++i) std::memmove(dst.data() + i * 3, dst.data() + i * 4, 3);
    dst.resize(dw * dh * 3);
  }

  png_image out;
  std::memset(&out, 0, sizeof out);
  out.version = PNG_IMAGE_VERSION;
  out.width = static_cast<png_uint_32>(dw);
  out.height = static_cast<png_uint_32>(dh);
  out.format = opaque ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
  ImageGuard out_guard{&out};
  png_alloc_size_t bytes = 0;
  if (!png_image_write_to_memory(&out, nullptr, &bytes, 0, dst.data(), 0, nullptr)) return std::nullopt;
  std::string encoded(bytes, '\0');
  if (!png_image_write_to_memory(&out, encoded.data(), &bytes, 0, dst.data(), 0, nullptr)) return std::nullopt;
  encoded.resize(bytes);
  return encoded;
}

}  // namespace plotq::runs
