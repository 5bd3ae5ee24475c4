#include "server/health.hpp"

#include <stdexcept>
#include <typeinfo>

#include "common/log.hpp"

namespace plotq::server {

void Health::add(std::string name, std::function<HealthPart()> check) {
  if (name.empty() || name == "status" || name == "version" || name == "detail")
    throw std::logic_error("reserved health part name: " + name);
  for (const auto& [n, c] : parts_)
    if (n == name) throw std::logic_error("health part added twice: " + name);
  parts_.emplace_back(std::move(name), std::move(check));
}

nlohmann::json Health::report(bool* ok) const {
  nlohmann::json out = nlohmann::json::object();
  out["status"] = "ok";
  out["version"] = PLOTQ_VERSION;
  *ok = true;
  for (const auto& [name, check] : parts_) {
    HealthPart p;
    try {
      p = check();
    } catch (const std::exception& e) {
      log_event("health_check_exception", {{"part", name}, {"class", typeid(e).name()}});
      p = HealthPart{};
    }
    nlohmann::json part = p.fields.is_object() ? p.fields : nlohmann::json::object();
    part["ok"] = p.ok;
    out[name] = std::move(part);
    *ok = *ok && p.ok;
  }
  if (!*ok) {
    out["status"] = "unavailable";
    out["detail"] = "unavailable";
  }
  return out;
}

}  // namespace plotq::server
