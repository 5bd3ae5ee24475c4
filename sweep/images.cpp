#include "sweep/images.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/sha256.hpp"
#include "sweep/thumbnail.hpp"

namespace plotq::runs {

std::string sweep_image_name(const std::string& rel_path, const std::string& theme) {
  return sha256_hex(rel_path).substr(0, 16) + "-" + theme + ".png";
}

namespace {

// Writes name under dir through a temporary name and a rename: a Ctrl-C never leaves half a PNG.
std::string write_file(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::string tmp = dir + "/." + name + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return "open " + tmp + ": " + std::strerror(errno);
  std::size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = "write " + tmp + ": " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return why;
    }
    off += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    std::string why = "rename " + tmp + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return why;
  }
  return "";
}

}  // namespace

struct ImageKeeper::State {
  std::string dir;
  boost::asio::thread_pool pool{1};
  mutable std::mutex mu;
  std::size_t written = 0, failed = 0;
  std::string first_failure;
  bool dir_made = false;
  bool finished = false;

  void fail(std::string why) {
    std::lock_guard<std::mutex> lock(mu);
    ++failed;
    if (first_failure.empty()) first_failure = std::move(why);
  }
};

ImageKeeper::ImageKeeper(std::string dir) : s_(std::make_unique<State>()) { s_->dir = std::move(dir); }

ImageKeeper::~ImageKeeper() { finish(); }

void ImageKeeper::keep(const std::string& rel_path, std::map<std::string, std::string> pngs) {
  if (pngs.empty() || s_->finished) return;
  State* s = s_.get();
  boost::asio::post(s->pool, [s, rel_path, pngs = std::move(pngs)] {
    if (!s->dir_made) {  // only this thread touches dir_made
      std::error_code ec;
      std::filesystem::create_directories(s->dir, ec);
      if (ec) return s->fail("create " + s->dir + ": " + ec.message());
      s->dir_made = true;
    }
    for (const auto& [theme, png] : pngs) {
      auto thumb = png_thumbnail(png);
      if (!thumb) {
        s->fail(rel_path + " (" + theme + "): not a PNG libpng decodes, or too many pixels");
        continue;
      }
      std::string why = write_file(s->dir, sweep_image_name(rel_path, theme), *thumb);
      if (!why.empty()) {
        s->fail(why);
        continue;
      }
      std::lock_guard<std::mutex> lock(s->mu);
      ++s->written;
    }
  });
}

void ImageKeeper::finish() {
  if (s_->finished) return;
  s_->finished = true;
  s_->pool.join();
}

std::size_t ImageKeeper::written() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->written;
}

std::size_t ImageKeeper::failed() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->failed;
}

std::string ImageKeeper::first_failure() const {
  std::lock_guard<std::mutex> lock(s_->mu);
  return s_->first_failure;
}

const std::string& ImageKeeper::dir() const { return s_->dir; }

}  // namespace plotq::runs
