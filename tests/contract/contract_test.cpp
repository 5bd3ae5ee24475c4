// The API contract (docs/openapi.json) and the real plotqd in step: every route the router knows is
// an operation of the served document and the reverse; the error responses are the vocabulary
// (kErrorCodes), written in by plotqd, not copied into the file; every $ref resolves; the caps
// served are the configured ones.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "server/errors.hpp"
#include "server/openapi.hpp"
#include "tests/support/test_client.hpp"
#include "tests/support/test_store.hpp"

using namespace plotq::test;
using nlohmann::json;

namespace {

const std::string kBinary = PLOTQD_BINARY;

json file_doc() {
  std::ifstream f(std::string(PLOTQ_SOURCE_DIR) + "/docs/openapi.json");
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str());
}

// "#/components/responses/E404" -> the object it names, or nullptr.
const json* resolve(const json& doc, const std::string& ref) {
  if (ref.rfind("#/", 0) != 0) return nullptr;
  try {
    return &doc.at(json::json_pointer(ref.substr(1)));
  } catch (const std::exception&) {
    return nullptr;
  }
}

void collect_refs(const json& j, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if (k == "$ref" && v.is_string()) out.push_back(v.get<std::string>());
      else collect_refs(v, out);
    }
  } else if (j.is_array()) {
    for (const auto& v : j) collect_refs(v, out);
  }
}

}  // namespace

TEST_CASE("contract: every route of the router is in the served document and the reverse", "[contract]") {
  TempDir dir;
  std::vector<std::string> routes;
  {
    Plotqd p(kBinary, {{"PLOTQ_DB", dir.file("routes.db")}}, {"--routes"}, false);
    REQUIRE(p.wait_exit(30s) == 0);
    auto out = p.stdout_lines();
    REQUIRE_FALSE(out.empty());
    for (const auto& r : json::parse(out.back())) routes.push_back(r["method"].get<std::string>() + " " + r["pattern"].get<std::string>());
  }
  std::sort(routes.begin(), routes.end());
  REQUIRE(routes.size() >= 20);

  TestStore store(dir);
  Plotqd d(kBinary, {{"PLOTQ_DB", store.target()}, {"PLOTQ_ENVIRONMENT", "development"},
                     {"PLOTQ_TURN_TEXT_MAX_CHARS", "123"}});
  REQUIRE(d.wait_listening(30s));
  HttpResponse r = http_request(d.port(), "GET", "/openapi.json");
  REQUIRE(r.status == 200);
  CHECK(r.header("Content-Type").value_or("") == "application/json");
  json doc = r.json();
  CHECK(doc["openapi"] == "3.1.0");
  std::vector<std::string> ops = plotq::server::openapi_operations(doc);

  std::vector<std::string> undocumented, not_routed;
  std::set_difference(routes.begin(), routes.end(), ops.begin(), ops.end(), std::back_inserter(undocumented));
  std::set_difference(ops.begin(), ops.end(), routes.begin(), routes.end(), std::back_inserter(not_routed));
  INFO("routes the document lacks (add them to docs/openapi.json): " << json(undocumented).dump());
  INFO("operations no route serves: " << json(not_routed).dump());
  CHECK(undocumented.empty());
  CHECK(not_routed.empty());

  // The served caps are this plotqd's settings, not the file's defaults.
  CHECK(doc["components"]["schemas"]["MessageRequest"]["properties"]["text"]["maxLength"] == 123);
  CHECK(file_doc()["components"]["schemas"]["MessageRequest"]["properties"]["text"]["maxLength"] == 2000);
}

TEST_CASE("contract: the error responses are the vocabulary, written in when served", "[contract]") {
  json file = file_doc();
  // No second copy: the file names E<status> responses and the Error schema but does not define them.
  CHECK_FALSE(file["components"].contains("responses"));
  CHECK_FALSE(file["components"]["schemas"].contains("Error"));
  CHECK_FALSE(file.contains("x-plotq-error-codes"));

  json doc = plotq::server::served_openapi(file, plotq::server::TurnConfig{});
  std::map<int, std::set<std::string>> want;
  std::set<std::string> all;
  for (const auto& e : plotq::server::kErrorCodes) {
    want[e.status].insert(std::string(e.code));
    all.insert(std::string(e.code));
  }
  for (const auto& [status, codes] : want) {
    INFO("status " << status);
    const json& resp = doc["components"]["responses"]["E" + std::to_string(status)];
    auto got = resp["content"]["application/json"]["schema"]["properties"]["detail"]["enum"].get<std::set<std::string>>();
    CHECK(got == codes);
  }
  CHECK(doc["components"]["responses"].size() == want.size());
  CHECK(doc["components"]["schemas"]["Error"]["properties"]["detail"]["enum"].get<std::set<std::string>>() == all);
  CHECK(doc["x-plotq-error-codes"].size() == std::size(plotq::server::kErrorCodes));

  // Every $ref resolves, and an operation's error status names the response of that status.
  std::vector<std::string> refs;
  collect_refs(doc, refs);
  REQUIRE(refs.size() > 100);
  for (const auto& ref : refs) {
    INFO(ref);
    CHECK(resolve(doc, ref) != nullptr);
  }
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items())
      for (const auto& [status, resp] : op["responses"].items()) {
        INFO(method << " " << path << " " << status);
        int s = std::stoi(status);
        if (s < 400) continue;
        if (resp.contains("$ref")) CHECK(resp["$ref"] == "#/components/responses/E" + status);
        CHECK(want.count(s) == 1);  // a status no code of the vocabulary has is never answered
      }
}
