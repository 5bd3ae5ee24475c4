#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "runs/outcome.hpp"
#include "server/errors.hpp"

using namespace plotq::server;

TEST_CASE("errors: every code is well formed / unique / with an error status", "[errors]") {
  std::regex code_re("^[a-z_]{1,32}$");
  std::set<std::string_view> seen;
  for (const ErrorCode& e : kErrorCodes) {
    INFO(e.code);
    CHECK(std::regex_match(std::string(e.code), code_re));
    CHECK(seen.insert(e.code).second);
    CHECK(e.status >= 400);
    CHECK(e.status <= 599);
    CHECK_FALSE(e.meaning.empty());
  }
}

TEST_CASE("errors: the codes later issues need are in the vocabulary with their status", "[errors]") {
  const std::pair<const char*, int> expected[] = {
      {"not_found", 404}, {"method_not_allowed", 405}, {"too_large", 413}, {"bad_request", 400},
      {"invalid_job", 422}, {"unauthenticated", 401}, {"forbidden", 403}, {"internal", 500},
      {"unavailable", 503}, {"job_conflict", 409}, {"run_active", 409}, {"too_long", 413},
      {"capacity", 503}, {"runtime_unavailable", 503}, {"headers_too_large", 431}, {"client_gone", 499}};
  for (auto [code, status] : expected) {
    INFO(code);
    const ErrorCode* e = find_error(code);
    REQUIRE(e);
    CHECK(e->status == status);
  }
  CHECK(find_error("no_such_code") == nullptr);
  CHECK(find_error("") == nullptr);
}

TEST_CASE("errors: error_body is {\"detail\":code}", "[errors]") {
  auto j = nlohmann::json::parse(error_body("not_found"));
  CHECK(j == nlohmann::json{{"detail", "not_found"}});
}

TEST_CASE("errors: server/README.md documents exactly the vocabulary", "[errors]") {
  std::ifstream in(std::string(PLOTQ_SOURCE_DIR) + "/server/README.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // Rows of the error table: | `code` | status | ...
  std::regex row(R"(\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|)");
  std::set<std::pair<std::string, int>> documented;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it)
    documented.insert({(*it)[1].str(), std::stoi((*it)[2].str())});
  std::set<std::pair<std::string, int>> table;
  for (const ErrorCode& e : kErrorCodes) table.insert({std::string(e.code), e.status});
  CHECK(documented == table);
}

// A host outcome of a run (runs/outcome.cpp) is answered by /run-data and /render with its job
// error: each is a code of this vocabulary, with a 499 or 503 status (retry later, or cancelled).
TEST_CASE("errors: every host outcome's job error is in the vocabulary", "[errors]") {
  int host = 0;
  for (std::size_t i = 0; i < plotq::runs::kOutcomeCount; ++i) {
    const auto& o = plotq::runs::kOutcomes[i];
    if (!o.host) continue;
    ++host;
    INFO(o.name);
    const ErrorCode* e = find_error(o.job_error);
    REQUIRE(e != nullptr);
    CHECK((e->status == 503 || e->status == 499));
  }
  CHECK(host > 5);
}
