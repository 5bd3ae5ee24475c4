#include "server/openapi.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "server/errors.hpp"

namespace plotq::server {

nlohmann::json served_openapi(nlohmann::json doc, const TurnConfig& turns) {
  std::map<int, nlohmann::json> by_status;  // status -> its codes, in table order
  nlohmann::json all = nlohmann::json::array(), table = nlohmann::json::array();
  for (const ErrorCode& e : kErrorCodes) {
    by_status[e.status].push_back(std::string(e.code));
    all.push_back(std::string(e.code));
    table.push_back({{"code", e.code}, {"status", e.status}, {"meaning", e.meaning}});
  }
  auto& components = doc["components"];
  components["schemas"]["Error"] = {
      {"type", "object"},
      {"additionalProperties", false},
      {"required", {"detail"}},
      {"properties", {{"detail", {{"enum", all}}}}},
      {"description", "every error answer: {\"detail\": code}, the code from the one vocabulary"}};
  for (const auto& [status, codes] : by_status) {
    components["responses"]["E" + std::to_string(status)] = {
        {"description", "error: one of " + codes.dump()},
        {"content",
         {{"application/json",
           {{"schema",
             {{"type", "object"},
              {"additionalProperties", false},
              {"required", {"detail"}},
              {"properties", {{"detail", {{"enum", codes}}}}}}}}}}}};
  }
  doc["x-plotq-error-codes"] = table;
  // The caps plotqd enforces are its settings (PLOTQ_TURN_*_MAX_CHARS), not the file's defaults.
  auto& schemas = components["schemas"];
  schemas["MessageRequest"]["properties"]["text"]["maxLength"] = turns.text_max_chars;
  schemas["DataAction"]["properties"]["code"]["maxLength"] = turns.data_code_max_chars;
  schemas["PlotAction"]["properties"]["code"]["maxLength"] = turns.plot_code_max_chars;
  return doc;
}

std::vector<std::string> openapi_operations(const nlohmann::json& doc) {
  static const std::set<std::string> kMethods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"};
  std::vector<std::string> out;
  if (!doc.contains("paths") || !doc["paths"].is_object()) return out;
  for (const auto& [path, item] : doc["paths"].items()) {
    if (!item.is_object()) continue;
    for (const auto& [method, op] : item.items()) {
      if (!kMethods.count(method)) continue;
      std::string m = method;
      std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      out.push_back(m + " " + path);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace plotq::server
