// What cluster nodes tell each other between polls (issue 37, docs/scale-out.md "Hints"): a hint
// is one NOTIFY merging what a node did over PLOTQ_CLUSTER_NOTIFY_MS; it only says "look now".
// The payload: lines "q" (work waits that its sender will not claim itself), "e ID ..." (turns the
// sender runs whose new events are stored), or "*" (too much to name: look at everything).
#pragma once
#include <string>
#include <vector>

namespace plotq::server {

struct Hint {
  bool queue = false;
  bool everything = false;
  std::vector<std::string> turns;
};

// The payload of one hint (at most store::Hints::kMaxPayload bytes: "*" beyond it).
std::string hint_payload(const Hint& h);
// What the payloads heard together say (unknown lines are skipped: a newer node's words).
Hint read_hints(const std::vector<std::string>& payloads);

}  // namespace plotq::server
