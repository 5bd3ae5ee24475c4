#include "sweep/files.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "common/text.hpp"
#include "common/sha256.hpp"
#include "runs/libraries.hpp"
#include "runs/render_interpret.hpp"

namespace plotq::runs {
namespace fs = std::filesystem;

namespace {

// Reads a regular file without following a link, at most cap + 1 bytes (so "too large" shows).
std::optional<std::string> read_capped(const std::string& path, std::size_t cap, bool& missing) {
  missing = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    missing = errno == ENOENT;
    return std::nullopt;
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string out;
  char buf[65536];
  while (out.size() <= cap) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace

std::string library_of(const std::string& rel_path) {
  std::string name = rel_path.substr(rel_path.find_last_of('/') + 1);
  auto dot = name.find_last_of('.');
  std::string stem = dot == std::string::npos || dot == 0 ? name : name.substr(0, dot);
  const Library* l = library_for_stem(stem);
  return l ? std::string(l->name) : stem;  // a stem no library has stays: it answers invalid_library
}

SweepLanguages sweep_languages(const std::string& glob) {
  auto matches = [&](const char* path) { return ::fnmatch(glob.c_str(), path, FNM_PATHNAME) == 0; };
  SweepLanguages l;
  l.javascript = matches("plots/spec/implementations/javascript/chartjs.js") ||
                 matches("plots/spec/implementations/javascript/muix.tsx");
  l.r = matches("plots/spec/implementations/r/ggplot2.R");
  l.python = matches("plots/spec/implementations/python/matplotlib.py") || (!l.javascript && !l.r);
  return l;
}

std::vector<SweepFile> find_sweep_files(const std::string& root, const std::string& glob,
                                        const std::vector<std::string>& libraries) {
  std::error_code ec;
  fs::path base = fs::absolute(root, ec);
  if (ec || !fs::is_directory(fs::symlink_status(base, ec)))
    throw std::runtime_error(root + " is not a directory");
  base = base.lexically_normal();
  std::vector<SweepFile> out;
  fs::recursive_directory_iterator it(base, fs::directory_options::none, ec);
  if (ec) throw std::runtime_error("cannot read " + root + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) throw std::runtime_error("cannot read " + root + ": " + ec.message());
    const fs::directory_entry& e = *it;
    if (!e.is_regular_file(ec) || e.is_symlink(ec)) continue;
    std::string rel = e.path().lexically_relative(base).generic_string();
    if (::fnmatch(glob.c_str(), rel.c_str(), FNM_PATHNAME) != 0) continue;
    SweepFile f{rel, e.path().string(), library_of(rel)};
    if (!libraries.empty() && std::none_of(libraries.begin(), libraries.end(), [&](const std::string& want) {
          const Library* l = library_for_stem(want);  // --library letsplot or lets-plot
          return want == f.library || (l && l->name == f.library);
        }))
      continue;
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const SweepFile& a, const SweepFile& b) { return a.rel_path < b.rel_path; });
  return out;
}

bool valid_utf8(const std::string& s) {
  std::size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n) return false;
    std::uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8 (Python refuses them too).
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}


SweepTask load_sweep_task(const SweepFile& file, std::size_t index) {
  SweepTask t;
  t.index = index;
  t.file = file;
  bool missing = false;
  auto bytes = read_capped(file.abs_path, kMaxSweepFileBytes, missing);
  if (!bytes) {
    // Nothing to hash: the hash of nothing marks "unreadable" rows.
    t.sha256 = sha256_hex("");
    t.refused = "unreadable";
    return t;
  }
  t.sha256 = sha256_hex(*bytes);
  t.source = std::move(*bytes);
  if (t.source.size() > kMaxSweepFileBytes || utf8_chars(t.source) > kMaxRenderSourceChars) {
    t.refused = "source_too_large";
    t.source.clear();
    return t;
  }
  if (!valid_utf8(t.source)) {
    t.refused = "source_invalid";  // the harness's reason for a plot.py that is not UTF-8
    t.source.clear();
    return t;
  }
  std::string csv_path = fs::path(file.abs_path).parent_path().string() + "/data.csv";
  auto csv = read_capped(csv_path, kMaxSweepFileBytes, missing);
  if (csv) {
    if (csv->size() > kMaxSweepFileBytes || utf8_chars(*csv) > kMaxDataCsvChars) {
      t.refused = "data_too_large";
      return t;
    }
    t.data_csv = std::move(*csv);
  } else if (!missing) {
    t.refused = "unreadable";  // a data.csv that is a link, a directory, ...
  }
  return t;
}

}  // namespace plotq::runs
