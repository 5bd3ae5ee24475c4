// The two canvases a plot is drawn on, declared once: the figure renderer draws exactly these (its
// pages are the CSS size times the device scale, sandbox/figure/lib/snippet.mjs), and the render
// answer calls a PNG of another size `canvas: "off"` (runs/render_interpret.cpp).
#pragma once
#include <array>
#include <string>

namespace plotq::sandbox {

struct Canvas {
  int width;
  int height;
};
inline constexpr std::array<Canvas, 2> kCanvases = {{{3200, 1800}, {2400, 2400}}};  // landscape, square

// One of the canvases, each side within tolerance_px. (No std::abs: it is not constexpr in C++20.)
constexpr bool on_canvas(int width, int height, int tolerance_px = 0) {
  auto near = [tolerance_px](int v, int target) { return (v < target ? target - v : v - target) <= tolerance_px; };
  for (const Canvas& c : kCanvases)
    if (near(width, c.width) && near(height, c.height)) return true;
  return false;
}

// "3200x1800 or 2400x2400", for plotq's sentences.
inline std::string canvases_text() {
  std::string out;
  for (const Canvas& c : kCanvases)
    out += (out.empty() ? "" : " or ") + std::to_string(c.width) + "x" + std::to_string(c.height);
  return out;
}

// The width of the canvas a wrong-sized image was meant for: landscape when wider than 4:3.
constexpr int meant_width(int width, int height) {
  return width * 3 >= height * 4 ? kCanvases[0].width : kCanvases[1].width;
}

}  // namespace plotq::sandbox
