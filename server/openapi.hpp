// GET /openapi.json: the API contract (docs/openapi.json, OpenAPI 3.1) as plotqd serves it. The file
// holds the routes, their bodies and answers; what plotqd knows better is written in when it is
// served, never copied into the file: every error response (E400..E503) and the Error schema from
// the one vocabulary (errors.hpp kErrorCodes), and the configured per-turn caps.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/limits.hpp"

namespace plotq::server {

// The document as served: `doc` (docs/openapi.json) with components.responses.E<status> (one per
// status of kErrorCodes, its codes as the enum), components.schemas.Error (every code),
// x-plotq-error-codes ([{code, status, meaning}]) and MessageRequest's caps from `turns`.
nlohmann::json served_openapi(nlohmann::json doc, const TurnConfig& turns);

// "GET /v1/sessions/{id}/messages"-style keys of every operation in the document, sorted.
std::vector<std::string> openapi_operations(const nlohmann::json& doc);

}  // namespace plotq::server
