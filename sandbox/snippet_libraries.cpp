#include "sandbox/snippet_libraries.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/env.hpp"
#include "common/log.hpp"

namespace plotq::sandbox {

std::map<std::string, std::vector<std::string>> parse_snippet_libraries(const std::string& text) {
  std::map<std::string, std::vector<std::string>> table;
  const auto doc = nlohmann::json::parse(text);
  for (const auto& [name, lib] : doc.items()) {
    std::vector<std::string> files;
    // The same rule as lib/snippet.mjs's libraryFiles: the bundle, or the list it needs.
    if (lib.at("dist").is_string()) files.push_back(lib.at("dist").get<std::string>());
    else files = lib.at("needs").get<std::vector<std::string>>();
    if (files.empty()) throw std::runtime_error("snippet library " + name + " has no files");
    for (const auto& f : files)
      if (f.empty() || f.front() == '/' || f.find("..") != std::string::npos)
        throw std::runtime_error("snippet library " + name + ": not a relative path: " + f);
    table[name] = std::move(files);
  }
  return table;
}

const std::map<std::string, std::vector<std::string>>& snippet_library_files() {
  static const auto table = [] {
    const std::string path = project_home() + "/sandbox/figure/lib/snippet_libraries.json";
    try {
      std::ifstream f(path);
      if (!f) throw std::runtime_error("cannot open it");
      std::stringstream text;
      text << f.rdbuf();
      return parse_snippet_libraries(text.str());
    } catch (const std::exception& e) {
      log_event("snippet_libraries_unreadable", {{"path", path}, {"error", e.what()}});
      return std::map<std::string, std::vector<std::string>>{};
    }
  }();
  return table;
}

}  // namespace plotq::sandbox
