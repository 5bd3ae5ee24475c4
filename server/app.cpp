#include "server/app.hpp"

#include "runs/render_interpret.hpp"
#include "runs/runtime.hpp"

namespace plotq::server {

const runs::Runtime& App::runtime_for(const std::string& library) const {
  static const runs::Runtime unknown = [] {
    runs::Runtime r;
    r.error = "manifest_missing";
    return r;
  }();
  if (runs::render_mode(library) == runs::RenderMode::r) return runs::r_runtime();  // runtime/r
  if (runs::render_mode(library) == runs::RenderMode::none) return unknown;  // Julia: no runtime at all
  if (runs::render_mode(library) == runs::RenderMode::snippet) return js_runtime ? *js_runtime : unknown;
  return *runtime;
}

}  // namespace plotq::server
