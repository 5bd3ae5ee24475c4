// The route body parsers (server/route_bodies.hpp), as the routes and fuzz/wire call them: a body
// in, the parsed fields or the route's code out.
#include <catch2/catch.hpp>
#include <string>

#include "server/route_bodies.hpp"

using namespace plotq::server;

namespace {
std::string render(const std::string& extra, const std::string& library = "matplotlib") {
  return R"({"job_id":"j-1","source":"x = 1","library":")" + library + R"(","themes":["light"],"timeout_s":10)" +
         extra + "}";
}
std::string error_of(const ParsedRender& p) { return p.body ? "ok" : p.error; }
}  // namespace

TEST_CASE("run-data body: the three fields read, anything else refused", "[route_bodies]") {
  ParsedRunData ok = parse_run_data_body(R"({"timeout_s":2.5,"job_id":"a_B-9","source":"x = 1"})");
  REQUIRE(ok.body);
  CHECK(ok.error.empty());
  CHECK(ok.body->job_id == "a_B-9");
  CHECK(ok.body->source == "x = 1");
  CHECK(ok.body->timeout_s == 2.5);
  CHECK(ok.body->parsed.dump() == R"({"job_id":"a_B-9","source":"x = 1","timeout_s":2.5})");

  for (const char* bad : {R"({"job_id":"j","source":"x","timeout_s":1,"extra":1})",  // closed model
                          R"({"job_id":"j/..","source":"x","timeout_s":1})",          // job id form
                          R"({"job_id":"j","source":"","timeout_s":1})",              // empty source
                          R"({"job_id":"j","source":"x","timeout_s":31})",            // over 30 s
                          R"({"job_id":"j","source":"x","timeout_s":0})",
                          R"({"job_id":"j","source":"x","timeout_s":true})",
                          R"({"job_id":"j","job_id":"k","source":"x","timeout_s":1})",  // a name twice
                          "[1]", "", "{"}) {
    INFO(bad);
    ParsedRunData p = parse_run_data_body(bad);
    CHECK_FALSE(p.body);
    CHECK(p.error == "invalid_job");
  }
  CHECK(parse_run_data_body(R"({"job_id":"j","source":")" + std::string(16 * 1024, 'x') + R"(","timeout_s":1})").body);
  CHECK_FALSE(parse_run_data_body(R"({"job_id":"j","source":")" + std::string(16 * 1024 + 1, 'x') +
                                  R"(","timeout_s":1})").body);
}

TEST_CASE("render body: fields, themes in order, optional data_csv and language", "[route_bodies]") {
  ParsedRender ok = parse_render_body(
      R"({"job_id":"r1","source":"draw","library":"seaborn","themes":["dark","light"],"timeout_s":60,"data_csv":"a\n1\n","language":"python"})");
  REQUIRE(ok.body);
  CHECK(ok.body->library == "seaborn");
  CHECK(ok.body->themes == std::vector<std::string>{"dark", "light"});
  CHECK(ok.body->data_csv == "a\n1\n");
  CHECK(ok.body->language == "python");
  CHECK(ok.body->timeout_s == 60);

  ParsedRender plain = parse_render_body(render(""));
  REQUIRE(plain.body);
  CHECK(plain.body->data_csv.empty());
  CHECK_FALSE(plain.body->language);

  for (const char* themes : {R"([])", R"(["light","light"])", R"(["sepia"])", R"(["light","dark","light"])", R"("light")", R"([1])"}) {
    INFO(themes);
    std::string body = R"({"job_id":"r","source":"s","library":"matplotlib","timeout_s":1,"themes":)" + std::string(themes) + "}";
    CHECK(error_of(parse_render_body(body)) == "invalid_job");
  }
}

TEST_CASE("render body: what the fuzz copy of it lacked (language, characters, library form)", "[route_bodies]") {
  // language: python or javascript only.
  CHECK(error_of(parse_render_body(render(R"(,"language":"python")"))) == "ok");
  CHECK(error_of(parse_render_body(render(R"(,"language":"ruby")"))) == "invalid_job");
  CHECK(error_of(parse_render_body(render(R"(,"language":"")"))) == "invalid_job");
  // The source cap counts characters: 131,072 two-byte characters pass, one more does not.
  std::string e_acute = "\xc3\xa9";
  std::string source;
  for (int i = 0; i < 131'072; ++i) source += e_acute;
  std::string head = R"({"job_id":"r","library":"matplotlib","themes":["light"],"timeout_s":1,"source":")";
  CHECK(error_of(parse_render_body(head + source + "\"}")) == "ok");
  CHECK(error_of(parse_render_body(head + source + e_acute + "\"}")) == "invalid_job");
  // A library name is lowercase letters, digits, '_' and '-'; one plotq does not draw is the route's 422.
  CHECK(error_of(parse_render_body(render("", "no-such_lib2"))) == "ok");
  CHECK(error_of(parse_render_body(render("", "Matplotlib"))) == "invalid_job");
  CHECK(error_of(parse_render_body(render("", "../x"))) == "invalid_job");
  CHECK(error_of(parse_render_body(render("", std::string(33, 'a')))) == "invalid_job");
  // A JavaScript snippet takes no data.csv: named by its library, or by `language` for one plotq lacks.
  CHECK(error_of(parse_render_body(render(R"(,"data_csv":"a\n1\n")", "chartjs"))) == "invalid_job");
  CHECK(error_of(parse_render_body(render(R"(,"data_csv":"")", "chartjs"))) == "ok");
  CHECK(error_of(parse_render_body(render(R"(,"data_csv":"a\n1\n","language":"javascript")", "nojs"))) == "invalid_job");
  CHECK(error_of(parse_render_body(render(R"(,"data_csv":"a\n1\n")", "nojs"))) == "ok");
}

TEST_CASE("paste body: the text, or invalid_job, too_long, code, formula", "[route_bodies]") {
  ParsedPaste ok = parse_paste_body(R"({"text":"a,b\n1,2\n"})");
  REQUIRE(ok.text);
  CHECK(*ok.text == "a,b\n1,2\n");
  CHECK(ok.error.empty());

  CHECK(parse_paste_body(R"({"text":1})").error == "invalid_job");
  CHECK(parse_paste_body(R"({"text":"a","more":1})").error == "invalid_job");
  CHECK(parse_paste_body(R"({})").error == "invalid_job");
  CHECK(parse_paste_body(R"~({"text":"import os\nos.system('x')\n"})~").error == "code");
  CHECK(parse_paste_body(R"({"text":"y = sin(x) * 2"})").error == "formula");
  plotq::table::Caps caps;
  CHECK(parse_paste_body(R"({"text":")" + std::string(caps.max_bytes, 'a') + "\"}", caps).error != "too_long");
  ParsedPaste over = parse_paste_body(R"({"text":")" + std::string(caps.max_bytes + 1, 'a') + "\"}", caps);
  CHECK_FALSE(over.text);
  CHECK(over.error == "too_long");
}
