// GET /v1/sessions/{id}/turns/{turn}/events: a client that lost its stream resumes after the last
// id it saw. The stored events after that id are replayed, paced so the stream's buffer never holds
// more than half its cap (a long history cannot overflow a resume), then the stream follows the
// live turn until done; a turn that already ended closes after its stored events.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "server/http.hpp"

namespace plotq::server {

class TurnService;

// The resume point: the Last-Event-ID header, else ?after=N, else 0. nullopt when malformed
// (not a decimal number of at most 18 digits).
std::optional<std::int64_t> resume_after(const Request& req);

// Replays and then follows the turn on res (whose stream the caller has started).
void follow_turn(TurnService& s, const std::string& turn_id, std::int64_t after, std::shared_ptr<Responder> res);

}  // namespace plotq::server
