// The routes around turns: sessions, the paste route (table, code, formula, the parser's codes),
// dataset list / get / confirm, GET /v1/status, and the status page with its Content-Security-Policy.
#include "runs/libraries.hpp"
#include "tests/turns/turn_client.hpp"

using namespace turns_test;

namespace {

HttpResponse paste(Server& s, const std::string& user, const std::string& sid, const std::string& text) {
  return s.post("/v1/sessions/" + sid + "/datasets", json{{"text", text}}.dump(), Server::as(user));
}

}  // namespace

TEST_CASE("sessions: 201 {id} for the caller - the caller check applies") {
  Server s;
  auto r = s.post("/v1/sessions", "", Server::as("ann"));
  REQUIRE(r.status == 201);
  std::string id = r.json()["id"];
  CHECK(id.size() == 16);
  CHECK(s.scalar("SELECT count(*) FROM sessions WHERE id = '" + id + "' AND user_id = 'ann'") == 1);
  CHECK(s.post("/v1/sessions", "", Server::as("not a user!")).status == 400);

  Server prod({{"PLOTQ_TOKENS", "token-for-ann-0123456789=ann"}}, /*development=*/false);
  CHECK(prod.post("/v1/sessions", "", {}).status == 401);
  auto ok = prod.post("/v1/sessions", "", {{"Authorization", "Bearer token-for-ann-0123456789"}});
  CHECK(ok.status == 201);
}

TEST_CASE("paste: a table becomes the next version (source paste) - code and formulas are told apart first") {
  Server s;
  auto sid = s.session("ann");
  auto r = paste(s, "ann", sid, "day;value\n01.02.2024;1,5\n02.02.2024;2,5\n");
  REQUIRE(r.status == 201);
  CHECK(r.json() == json{{"version", 1},
                         {"rows", 2},
                         {"cols", 2},
                         {"columns", json::array({{{"name", "day"}, {"type", "date"}}, {{"name", "value"}, {"type", "number"}}})}});
  auto code = paste(s, "ann", sid, "import numpy as np\nx = np.linspace(0, 10, 100)\ny = np.sin(x)\n");
  CHECK(code.status == 422);
  CHECK(code.json()["detail"] == "code");
  auto formula = paste(s, "ann", sid, "y = sin(x) * 2");
  CHECK(formula.status == 422);
  CHECK(formula.json()["detail"] == "formula");
  // Nothing of the refused pastes was stored.
  CHECK(s.scalar("SELECT count(*) FROM dataset_versions WHERE session_id = '" + sid + "'") == 1);
  auto second = paste(s, "ann", sid, "a,b\n1,2\n");
  REQUIRE(second.status == 201);
  CHECK(second.json()["version"] == 2);
}

TEST_CASE("paste: the parser's codes, with their statuses") {
  Server s;
  auto sid = s.session("ann");
  std::string wide;
  for (int i = 0; i < 51; ++i) wide += (i ? "," : "") + std::string("c") + std::to_string(i);
  wide += "\n";
  for (int i = 0; i < 51; ++i) wide += (i ? ",1" : "1");
  std::string tall = "n\n";
  for (int i = 0; i < 20001; ++i) tall += "1\n";
  std::string long_cell = "a,b\n1," + std::string(201, 'x') + "\n";
  struct Case {
    std::string text;
    int status;
    std::string code;
  };
  std::vector<Case> cases = {
      {wide, 422, "too_many_columns"},
      {tall, 422, "too_many_rows"},
      {long_cell, 422, "cell_too_long"},
      {"a,b\n1,\x01\n", 422, "control_chars"},
      {"   \n\n", 422, "empty"},
      {std::string(204'801, '1'), 413, "too_long"},
  };
  for (const auto& c : cases) {
    INFO(c.code);
    auto r = paste(s, "ann", sid, c.text);
    CHECK(r.status == c.status);
    CHECK(r.json()["detail"] == c.code);
  }
  CHECK(s.post("/v1/sessions/" + sid + "/datasets", R"({"text":"a,b\n1,2\n","x":1})", Server::as("ann")).status == 422);
  CHECK(s.post("/v1/sessions/" + sid + "/datasets", R"({"txt":"a"})", Server::as("ann")).status == 422);
  CHECK(paste(s, "bob", sid, "a,b\n1,2\n").status == 404);
  CHECK(s.scalar("SELECT count(*) FROM dataset_versions") == 0);
}

TEST_CASE("datasets: list, get one, confirm - another user's session is not found") {
  Server s;
  auto sid = s.session("ann");
  CHECK(s.get("/v1/sessions/" + sid + "/datasets", Server::as("ann")).json() == json{{"versions", json::array()}});
  REQUIRE(paste(s, "ann", sid, "x,y\n1,2\n3,4\n").status == 201);
  auto list = s.get("/v1/sessions/" + sid + "/datasets", Server::as("ann")).json()["versions"];
  REQUIRE(list.size() == 1);
  CHECK(list[0]["version"] == 1);
  CHECK(list[0]["rows"] == 2);
  CHECK(list[0]["source"] == "paste");
  CHECK(list[0]["confirmed"] == false);
  CHECK(list[0]["has_code"] == false);
  CHECK(list[0]["created_at"].get<std::string>().size() == 20);

  auto one = s.get("/v1/sessions/" + sid + "/datasets/1", Server::as("ann"));
  REQUIRE(one.status == 200);
  CHECK(one.json()["csv"] == "x,y\n1,2\n3,4\n");
  CHECK(one.json()["code"].is_null());
  CHECK(one.json()["parent"].is_null());
  CHECK(one.json()["columns"] == json::array({{{"name", "x"}, {"type", "integer"}}, {{"name", "y"}, {"type", "integer"}}}));

  auto c = s.post("/v1/sessions/" + sid + "/datasets/1/confirm", "", Server::as("ann"));
  REQUIRE(c.status == 200);
  CHECK(c.json() == json{{"version", 1}, {"confirmed", true}});
  CHECK(s.get("/v1/sessions/" + sid + "/datasets", Server::as("ann")).json()["versions"][0]["confirmed"] == true);

  CHECK(s.get("/v1/sessions/" + sid + "/datasets/2", Server::as("ann")).status == 404);
  CHECK(s.get("/v1/sessions/" + sid + "/datasets/0", Server::as("ann")).status == 404);
  CHECK(s.get("/v1/sessions/" + sid + "/datasets/x", Server::as("ann")).status == 404);
  CHECK(s.post("/v1/sessions/" + sid + "/datasets/9/confirm", "", Server::as("ann")).status == 404);
  auto other = s.get("/v1/sessions/" + sid + "/datasets/1", Server::as("bob"));
  CHECK(other.status == 404);
  CHECK(other.json()["detail"] == "session_not_found");
  CHECK(s.post("/v1/sessions/" + sid + "/datasets/1/confirm", "", Server::as("bob")).status == 404);
}

TEST_CASE("GET /v1/status: waiting, in_flight, holder_age_s, capacity, slots, the sandbox modes and spares") {
  Server s(Env{{"PLOTQ_SLOTS", "2"}});
  json st = s.status();
  // Which sandbox modes are warm and how many armed spares wait: nothing started yet here.
  REQUIRE(st.contains("modes"));
  REQUIRE(st.contains("spares"));
  for (const char* m : {"raw", "data", "plot", "figure", "r", "snippet"}) {
    INFO(m);
    REQUIRE(st["modes"].contains(m));
    const std::string state = st["modes"][m];
    CHECK((state == "off" || state == "cold" || state == "disabled" || state == "warming" || state == "warm"));
  }
  CHECK(st["spares"].is_object());
  st.erase("modes");
  st.erase("spares");
  CHECK(st == json{{"waiting", 0}, {"in_flight", 0}, {"holder_age_s", nullptr}, {"capacity", 100000}, {"slots", 2}});
  Server prod({{"PLOTQ_TOKENS", "token-for-ann-0123456789=ann"}}, false);
  CHECK(prod.get("/v1/status", {}).status == 401);
}

TEST_CASE("the status page and its files are served with a strict Content-Security-Policy") {
  Server s;
  auto page = s.get("/", {});
  REQUIRE(page.status == 200);
  CHECK(page.header("content-type") == std::optional<std::string>("text/html; charset=utf-8"));
  auto csp = page.header("content-security-policy");
  REQUIRE(csp);
  CHECK(csp->find("default-src 'none'") != std::string::npos);
  CHECK(csp->find("script-src 'self'") != std::string::npos);
  CHECK(csp->find("frame-ancestors 'none'") != std::string::npos);
  CHECK(csp->find("unsafe-inline") == std::string::npos);
  CHECK(page.header("x-content-type-options") == std::optional<std::string>("nosniff"));
  CHECK(page.body.find("<title>plotq</title>") != std::string::npos);
  auto js = s.get("/static/app.js", {});
  CHECK(js.status == 200);
  CHECK(js.header("content-type") == std::optional<std::string>("text/javascript; charset=utf-8"));
  CHECK(js.header("content-security-policy") == csp);
  CHECK(js.body.find("textContent") != std::string::npos);
  CHECK(s.get("/static/style.css", {}).status == 200);
  // The page's sentences come from the server's one table.
  auto words = s.get("/v1/sentences", {});
  REQUIRE(words.status == 200);
  auto table = nlohmann::json::parse(words.body);
  REQUIRE(table.is_object());
  CHECK(table.size() > 40);
  for (const char* code : {"capacity", "node_lost", "rate_limited", "too_many_rows", "session_not_found"})
    CHECK(table.at(code).get<std::string>().size() > 10);
  // So does its library list: every library of runs/libraries.hpp, in its order, none of the page's own.
  auto libs = s.get("/v1/libraries", {});
  REQUIRE(libs.status == 200);
  auto list = nlohmann::json::parse(libs.body).at("libraries");
  REQUIRE(list.size() == std::size(plotq::runs::kLibraries));
  for (std::size_t i = 0; i < list.size(); ++i) {
    CHECK(list[i].at("name") == std::string(plotq::runs::kLibraries[i].name));
    CHECK(list[i].at("language") == std::string(plotq::runs::kLibraries[i].language));
    CHECK(list[i].at("available").is_boolean());
  }
  CHECK(page.body.find("<option") == std::string::npos);
  // Only the fixed names: nothing else under web/ or beyond it.
  CHECK(s.get("/static/README.md", {}).status == 404);
  CHECK(s.get("/static/../server/main.cpp", {}).status == 404);
  CHECK(s.get("/index.html", {}).status == 404);
}

TEST_CASE("plot images: only the turn's own session and theme, never a path") {
  Server s;
  auto sid = s.session("ann");
  auto st = s.turn("ann", sid, plain("hi"));
  auto evs = until_done(*st, 10s);
  std::string turn = evs.at(0).data["turn"];
  CHECK(s.get("/v1/sessions/" + sid + "/turns/" + turn + "/plots/light.png", {}).status == 404);  // no plot
  CHECK(s.get("/v1/sessions/" + sid + "/turns/" + turn + "/plots/sepia.png", {}).status == 404);
  CHECK(s.get("/v1/sessions/" + sid + "/turns/" + turn + "/plots/..%2F..%2Fplotq.db", {}).status == 404);
}
