// The thumbnails a sweep keeps for its HTML report: one PNG per file and theme that rendered,
// scaled down (sweep/thumbnail.hpp), in the sweep's directory beside the store
// (store/sweep_images.hpp, which also removes it): <dir>/<first 16 hex of sha256(path)>-<theme>.png
// Files, not SQLite rows: the store stays small and its writes short, and a report copies them as
// they are. The directory is named by the sweep's id (a label such as ".." is valid), emptied when a
// new sweep takes the id, and lies beside the store, which the sandbox policy hides from jobs.
#pragma once
#include "common/limits.hpp"
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace plotq::runs {

// A name of our own, never the untrusted path: 16 hex digits of its sha256, the theme, ".png".
std::string sweep_image_name(const std::string& rel_path, const std::string& theme);
// Thumbnails are at most this big; a larger file in the directory is not one of ours.
using ::plotq::limits::kThumbMaxBytes;  // common/limits.hpp

// Scales and writes thumbnails on one worker thread, so that decoding a 3200x1800 PNG (0.13-0.18 s
// measured on a loaded 2-core machine, most of it libpng's decode)
// never holds up the sweep's event loop. keep() queues; finish() waits for the queue. A thumbnail
// that cannot be made or written is counted, never an error of the sweep (the report shows "no
// image").
class ImageKeeper {
 public:
  explicit ImageKeeper(std::string dir);
  ~ImageKeeper();  // finish()
  // pngs: theme -> the full PNG of a render.
  void keep(const std::string& rel_path, std::map<std::string, std::string> pngs);
  void finish();
  std::size_t written() const;
  std::size_t failed() const;
  std::string first_failure() const;  // "" when none
  const std::string& dir() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace plotq::runs
