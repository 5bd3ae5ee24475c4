// The sandbox's process metrics (docs/metrics.md): warm zygotes and the Chromium figure renderer,
// each started again on demand after it exits, so exits are its restarts.
#pragma once
#include <string_view>

namespace plotq::sandbox {

void count_zygote_ready(std::string_view mode);  // a zygote of this mode came up
void count_zygote_exit(std::string_view mode);   // it exited (the next job of its mode starts another)
void count_chromium_ready();                     // the figure renderer came up
void count_chromium_exit();                      // it exited or was killed (started again on demand)

}  // namespace plotq::sandbox
