#include "runs/libraries.hpp"

namespace plotq::runs {

const Library* find_library(std::string_view name) {
  for (const Library& l : kLibraries)
    if (l.name == name) return &l;
  return nullptr;
}

const Library* library_for_stem(std::string_view stem) {
  for (const Library& l : kLibraries)
    if (l.stem == stem) return &l;
  return find_library(stem);
}

Outcome library_support(std::string_view library, const std::map<std::string, std::string>& packages,
                        bool figures_available) {
  const Library* l = find_library(library);
  if (!l) return Outcome::invalid_library;
  if (l->mode == RenderMode::none) return Outcome::runtime_unavailable;
  for (std::string_view p : l->packages)
    if (!p.empty() && packages.find(std::string(p)) == packages.end()) return Outcome::runtime_unavailable;
  bool drawn_by_chromium = l->mode == RenderMode::figure || l->mode == RenderMode::snippet;
  if (drawn_by_chromium && !figures_available) return Outcome::runtime_unavailable;
  return Outcome::ok;
}

}  // namespace plotq::runs
