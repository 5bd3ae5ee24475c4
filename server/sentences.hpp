// What a user reads for each code the server sends (turn errors and refusals, HTTP errors, paste
// refusals): one sentence per code, declared once. The refusal events carry it as their `text`,
// and the status page shows it, read from GET /v1/sentences (it keeps no copy of its own).
// tests/server/sentences_test.cpp holds it to the vocabularies: every code of kErrorCodes, of
// the turn's error event (docs/openapi.json's Event_error) and of the refusals has its sentence.
#pragma once
#include <nlohmann/json.hpp>
#include <string_view>

namespace plotq::server {

struct Sentence {
  std::string_view code;
  std::string_view text;
};

extern const Sentence kSentences[];
extern const std::size_t kSentenceCount;

// The sentence of a code; a fixed fallback for a code without one (the test keeps that from
// happening for every code plotqd sends).
std::string_view sentence(std::string_view code);
// {code: sentence, ...}: GET /v1/sentences.
nlohmann::json sentences_json();

}  // namespace plotq::server
