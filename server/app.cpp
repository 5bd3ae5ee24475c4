#include "server/app.hpp"

#include "runs/render_interpret.hpp"
#include "runs/runtime.hpp"

namespace plotq::server {

const runs::Runtime& App::runtime_for(const std::string& library) const {
  if (runs::render_mode(library) == runs::RenderMode::snippet) {
    static const runs::Runtime unknown = [] {
      runs::Runtime r;
      r.error = "manifest_missing";
      return r;
    }();
    return js_runtime ? *js_runtime : unknown;
  }
  return *runtime;
}

}  // namespace plotq::server
