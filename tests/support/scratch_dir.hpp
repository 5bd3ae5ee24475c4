// A fresh directory under the temp dir, removed with everything in it at destruction; for unit
// tests that need real files (SQLite databases, plot files). Header-only.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace plotq::test {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& prefix = "plotq-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Writes text at a relative path, creating its directories; returns the absolute path.
  std::string write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

}  // namespace plotq::test
