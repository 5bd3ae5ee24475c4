// common/files: a whole file replaced through a hidden temporary name and a rename.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/files.hpp"
#include "tests/store/helpers.hpp"

using plotq::write_file_replacing;
using plotq::store::test::TempDir;
namespace fs = std::filesystem;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("files: a file is written whole and replaced whole - no temporary is left") {
  TempDir t;
  const std::string path = t.file("index.html");
  CHECK(write_file_replacing(path, "first").empty());
  CHECK(slurp(path) == "first");
  CHECK(write_file_replacing(path, std::string(1 << 20, 'x')).empty());
  CHECK(slurp(path).size() == 1u << 20);
  CHECK_FALSE(fs::exists(t.file(".index.html.tmp")));
}

TEST_CASE("files: a link at the temporary name is not followed - the file stays as it was") {
  TempDir t;
  const std::string path = t.file("thumb.png");
  REQUIRE(write_file_replacing(path, "old").empty());
  std::ofstream(t.file("target")) << "untouched";
  fs::create_symlink(t.file("target"), t.file(".thumb.png.tmp"));
  std::string why = write_file_replacing(path, "new");
  CHECK(why.rfind("open " + t.file(".thumb.png.tmp") + ":", 0) == 0);
  CHECK(slurp(t.file("target")) == "untouched");
  CHECK(slurp(path) == "old");
}

TEST_CASE("files: a directory that is not there is the open's failure") {
  TempDir t;
  CHECK(write_file_replacing(t.file("no/such/dir/f"), "x").rfind("open ", 0) == 0);
}
