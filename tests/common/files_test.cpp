#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/files.hpp"

namespace {
struct TempDir {
  std::string path;
  int fd = -1;
  TempDir() {
    char tmpl[] = "/tmp/plotq-files-XXXXXX";
    path = ::mkdtemp(tmpl);
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  ~TempDir() {
    ::close(fd);
    std::system(("rm -rf '" + path + "'").c_str());
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};
}  // namespace

TEST_CASE("write_new_file: a new file with all the bytes, 0600, its descriptor handed back") {
  TempDir d;
  std::string bytes(300'000, 'x');
  int fd = plotq::write_new_file(d.fd, "a.txt", bytes);
  REQUIRE(fd >= 0);
  struct stat st{};
  REQUIRE(::fstat(fd, &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK(::close(fd) == 0);
  CHECK(d.read("a.txt") == bytes);
}

TEST_CASE("write_new_file: never an existing path, and never through a link") {
  TempDir d;
  int fd = plotq::write_new_file(d.fd, "kept.txt", "first");
  REQUIRE(fd >= 0);
  ::close(fd);
  errno = 0;
  CHECK(plotq::write_new_file(d.fd, "kept.txt", "second") == -1);
  CHECK(errno == EEXIST);
  CHECK(d.read("kept.txt") == "first");
  // A link planted where the file would go (as a child could): refused, its target untouched.
  REQUIRE(::symlinkat((d.path + "/kept.txt").c_str(), d.fd, "link.txt") == 0);
  CHECK(plotq::write_new_file(d.fd, "link.txt", "through") == -1);
  CHECK(d.read("kept.txt") == "first");
  // AT_FDCWD takes a path.
  fd = plotq::write_new_file(AT_FDCWD, d.path + "/b.txt", "by path");
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK(d.read("b.txt") == "by path");
}
