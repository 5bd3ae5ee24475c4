// The cluster's hint payload (server/cluster_hints.hpp): what one node merges into a NOTIFY and
// what the others read back from it.
#include <catch2/catch.hpp>

#include "server/cluster_hints.hpp"
#include "store/hints.hpp"

using plotq::server::Hint;
using plotq::server::hint_payload;
using plotq::server::read_hints;

TEST_CASE("cluster hints: work waiting and turns with new events, in one payload", "[cluster]") {
  CHECK(hint_payload({true, false, {}}) == "q");
  CHECK(hint_payload({false, false, {"t1", "t2"}}) == "e t1 t2");
  CHECK(hint_payload({true, false, {"t1"}}) == "q\ne t1");
  Hint h = read_hints({"q\ne t1", "e t2 t3"});
  CHECK(h.queue);
  CHECK_FALSE(h.everything);
  CHECK(h.turns == std::vector<std::string>{"t1", "t2", "t3"});
}

TEST_CASE("cluster hints: too many turns to name become look-at-everything", "[cluster]") {
  std::vector<std::string> many(1000, "0123456789abcdef");
  std::string p = hint_payload({false, false, many});
  CHECK(p == "*");
  Hint h = read_hints({p});
  CHECK(h.everything);
  CHECK(h.turns.empty());
}

TEST_CASE("cluster hints: unknown lines and an empty payload say nothing", "[cluster]") {
  Hint h = read_hints({"", "z later-word", "e"});
  CHECK_FALSE(h.queue);
  CHECK_FALSE(h.everything);
  CHECK(h.turns.empty());
}
