// The Renderer's private scratch dir: the host-side files of a draw (the figure JSON or the
// JavaScript snippet handed to Chromium, and the PNG it draws). Made once per Renderer, mode 0700
// (plotq-render-XXXXXX under PLOTQ_RENDER_TMP_DIR), and removed with what is left in it when the
// Renderer goes. A draw's input is made new (never an existing path, never through a link) and
// both its files are removed once the draw is over. Writing and removing are plain file I/O: the
// render calls them on its worker thread, never on the loop.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace plotq::runs {

// One draw's two files, by name inside the dir.
struct DrawFiles {
  std::string input;  // what Chromium reads: <render>-<n>-<theme>.json, or the snippet's .js/.tsx
  std::string png;    // what it draws: <render>-<n>-<theme>.png
};

class ScratchDir {
 public:
  // Makes the dir under parent; ok() is false (and it is logged) when it cannot.
  explicit ScratchDir(const std::string& parent);
  ~ScratchDir();  // removes the dir and everything in it
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // A file's path, for the renderer that opens it by name.
  std::string path(const std::string& name) const { return path_ + "/" + name; }
  // Fresh names for the next draw of render `render`'s theme (loop thread).
  DrawFiles next_draw(std::uint64_t render, const std::string& theme, std::string_view input_ext);

 private:
  std::string parent_;
  std::string name_;  // plotq-render-XXXXXX
  std::string path_;
  int fd_ = -1;
  std::uint64_t draws_ = 0;
};

// Writes the draw's input as a new file in the dir (common/files.hpp: write_new_file).
bool write_draw_input(int dirfd, const DrawFiles& files, std::string_view bytes);
// Removes whichever of the draw's files exist.
void remove_draw_files(int dirfd, const DrawFiles& files);

}  // namespace plotq::runs
