#include "runs/scratch_dir.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "common/files.hpp"
#include "common/log.hpp"
#include "sandbox/output.hpp"

namespace plotq::runs {

ScratchDir::ScratchDir(const std::string& parent) : parent_(parent) {
  std::string tmpl = parent + "/plotq-render-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data())) {  // mode 0700: only this process's user reads the figures
    path_ = buf.data();
    name_ = path_.substr(path_.rfind('/') + 1);
    fd_ = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd_ < 0) log_event("render_tmp_unavailable", {{"dir", parent}});
}

ScratchDir::~ScratchDir() {
  if (fd_ < 0) return;
  int parent = ::open(parent_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent >= 0) {
    sandbox::remove_tree(parent, name_);
    ::close(parent);
  }
  ::close(fd_);
}

DrawFiles ScratchDir::next_draw(std::uint64_t render, const std::string& theme, std::string_view input_ext) {
  std::string base = std::to_string(render) + "-" + std::to_string(++draws_) + "-" + theme;
  return {base + std::string(input_ext), base + ".png"};
}

bool write_draw_input(int dirfd, const DrawFiles& files, std::string_view bytes) {
  int fd = write_new_file(dirfd, files.input, bytes);
  return fd >= 0 && ::close(fd) == 0;
}

void remove_draw_files(int dirfd, const DrawFiles& files) {
  if (!files.input.empty()) ::unlinkat(dirfd, files.input.c_str(), 0);
  if (!files.png.empty()) ::unlinkat(dirfd, files.png.c_str(), 0);
}

}  // namespace plotq::runs
