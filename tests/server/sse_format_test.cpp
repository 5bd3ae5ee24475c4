#include <catch2/catch.hpp>

#include "server/http.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq::server;

TEST_CASE("sse: events are formatted per the SSE wire format", "[sse]") {
  CHECK(format_sse_event("ready", R"({"v":1})", "7") == "id: 7\nevent: ready\ndata: {\"v\":1}\n\n");
  CHECK(format_sse_event("", "x") == "data: x\n\n");
  CHECK(format_sse_event("m", "") == "event: m\ndata: \n\n");
  // Line breaks in data become several data lines (CR, LF and CRLF all end a line).
  CHECK(format_sse_event("m", "a\nb\r\nc\rd") == "event: m\ndata: a\ndata: b\ndata: c\ndata: d\n\n");
  CHECK(format_sse_event("m", "a\n") == "event: m\ndata: a\ndata: \n\n");
  // Event names and ids must not break the framing.
  CHECK_FALSE(format_sse_event("a\nb", "x"));
  CHECK_FALSE(format_sse_event("a", "x", "1\r"));
  CHECK_FALSE(format_sse_event(std::string_view("a\0b", 3), "x"));
}

TEST_CASE("sse: the test reader parses what the server writes", "[sse]") {
  std::string text = *format_sse_event("status", "line1\nline2", "42") + ": ping\n\n" + "retry: 3000\n\n" +
                     *format_sse_event("done", "{}");
  text += "event: partial\n";  // an unfinished frame stays in the buffer
  auto frames = plotq::test::parse_sse(text);
  REQUIRE(frames.size() == 4);
  CHECK(frames[0].id == "42");
  CHECK(frames[0].event == "status");
  CHECK(frames[0].data == "line1\nline2");
  CHECK(frames[1].comments == std::vector<std::string>{"ping"});
  CHECK(frames[2].retry == 3000);
  CHECK(frames[3].event == "done");
  CHECK(text == "event: partial\n");
}
