#include "sweep/images.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <mutex>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/files.hpp"
#include "common/sha256.hpp"
#include "sweep/thumbnail.hpp"

namespace plotq::runs {

std::string sweep_image_name(const std::string& rel_path, const std::string& theme) {
  return sha256_hex(rel_path).substr(0, 16) + "-" + theme + ".png";
}

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
      std::string why = write_file_replacing(s->dir + "/" + sweep_image_name(rel_path, theme), *thumb);
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
