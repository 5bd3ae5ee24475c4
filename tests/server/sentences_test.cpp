// The user sentences (server/sentences.hpp) against every vocabulary whose codes reach a person,
// and the page against keeping its own copy.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "server/errors.hpp"
#include "server/limits.hpp"
#include "server/sentences.hpp"

using namespace plotq::server;

namespace {

bool has(std::string_view code) {
  for (std::size_t i = 0; i < kSentenceCount; ++i)
    if (kSentences[i].code == code) return true;
  return false;
}

std::string read(const std::string& path) {
  std::ifstream in(std::string(PLOTQ_SOURCE_DIR) + "/" + path);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> event_codes(const char* schema) {
  auto doc = nlohmann::json::parse(read("docs/openapi.json"));
  return doc.at("components").at("schemas").at(schema).at("properties").at("code").at("enum").get<std::vector<std::string>>();
}

}  // namespace

TEST_CASE("sentences: one per code, each a sentence", "[sentences]") {
  std::regex code_re("^[a-z_]{1,32}$");
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < kSentenceCount; ++i) {
    const Sentence& s = kSentences[i];
    INFO(s.code);
    CHECK(std::regex_match(std::string(s.code), code_re));
    CHECK(seen.insert(s.code).second);
    REQUIRE(s.text.size() > 1);
    CHECK(s.text.back() == '.');
  }
}

TEST_CASE("sentences: every HTTP error code has one", "[sentences]") {
  for (const ErrorCode& e : kErrorCodes) {
    INFO(e.code);
    CHECK(has(e.code));
  }
}

TEST_CASE("sentences: every code of a turn's error and refusal events (docs/openapi.json) has one", "[sentences]") {
  for (const char* schema : {"Event_error", "Event_refusal"}) {
    auto codes = event_codes(schema);
    REQUIRE(codes.size() >= 10);
    for (const auto& code : codes) {
      INFO(schema << " " << code);
      CHECK(has(code));
    }
  }
}

TEST_CASE("sentences: a refusal's text is the table's sentence", "[sentences]") {
  CHECK(refusal_text("rate_limited") == std::string(sentence("rate_limited")));
  CHECK(refusal_text("needs_data") == std::string(sentence("needs_data")));
  CHECK(sentences_json().at("node_lost") == std::string(sentence("node_lost")));
  CHECK(sentences_json().size() == kSentenceCount);
}

TEST_CASE("sentences: the status page keeps no copy of them (it reads GET /v1/sentences)", "[sentences]") {
  std::string js = read("web/app.js");
  CHECK(js.find("/v1/sentences") != std::string::npos);
  for (std::size_t i = 0; i < kSentenceCount; ++i) {
    INFO(kSentences[i].code);
    CHECK(js.find(std::string(kSentences[i].text)) == std::string::npos);
  }
}
