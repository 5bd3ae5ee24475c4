// The real plotqd binary on an ephemeral loopback port, with a temp SQLite file.
#include <signal.h>

#include <SQLiteCpp/Database.h>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "server/plotqd_config.hpp"
#include "store/migrate.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq::test;

namespace {

const char* kBinary = PLOTQD_BINARY;

bool contains(const std::vector<std::string>& lines, std::string_view needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

// Runs plotqd to completion (for --help and refusals); returns exit code.
int run_to_exit(Env env, std::vector<std::string> args, std::vector<std::string>* out, std::vector<std::string>* err) {
  Plotqd d(kBinary, std::move(env), std::move(args), false);
  auto code = d.wait_exit(15s);
  REQUIRE(code);  // wait_exit also waited for the pipes' end: every line is read
  if (out) *out = d.stdout_lines();
  if (err) *err = d.stderr_lines();
  return *code;
}

}  // namespace

TEST_CASE("plotqd: starts on a free port / serves /healthz with the schema version", "[plotqd]") {
  TempDir dir;
  std::string db = dir.file("nested/dir/plotq.db");  // the directory is created
  Plotqd d(kBinary, {{"PLOTQ_DB", db}});
  CHECK(d.port() != 0);
  CHECK(d.address() == "127.0.0.1:" + std::to_string(d.port()));
  CHECK(std::filesystem::exists(db));

  auto r = http_request(d.port(), "GET", "/healthz");
  CHECK(r.status == 200);
  CHECK(r.header("Cache-Control") == "no-store");
  CHECK(r.header("Content-Type") == "application/json");
  auto j = r.json();
  CHECK(j["status"] == "ok");
  CHECK(j["store"]["ok"] == true);
  CHECK(j["store"]["schema_version"] == plotq::store::known_schema_version());
  CHECK(j["version"] == PLOTQ_VERSION);

  // Request log: method, route pattern, status, duration.
  auto line = d.wait_log("request", 5s, [](const nlohmann::json& e) { return e.value("route", "") == "/healthz"; });
  REQUIRE(line);
  CHECK((*line)["method"] == "GET");
  CHECK((*line)["status"] == 200);
  CHECK((*line)["ms"].is_number());
}

// The protocol errors, one case each (a plotqd starts in a fraction of a second).
TEST_CASE("plotqd: an unknown route is 404 not_found with no-store", "[plotqd]") {
  TempDir dir;
  Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}});
  auto r = http_request(d.port(), "GET", "/no/such/route");
  CHECK(r.status == 404);
  CHECK(r.json() == nlohmann::json{{"detail", "not_found"}});
  CHECK(r.header("Cache-Control") == "no-store");
}

TEST_CASE("plotqd: a wrong method is 405 method_not_allowed", "[plotqd]") {
  TempDir dir;
  Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}});
  auto r = http_request(d.port(), "POST", "/healthz", "{}");
  CHECK(r.status == 405);
  CHECK(r.json() == nlohmann::json{{"detail", "method_not_allowed"}});
}

TEST_CASE("plotqd: a malformed request is 400 bad_request and its connection closes", "[plotqd]") {
  TempDir dir;
  Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}});
  Connection c(d.port());
  c.send("THIS IS NOT HTTP\r\n\r\n");
  auto bad = c.read_response(5s);
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(bad->json() == nlohmann::json{{"detail", "bad_request"}});
  CHECK(c.wait_closed(5s));
}

TEST_CASE("plotqd: a body over the limit is 413 too_large - announced or sent, and never logged", "[plotqd]") {
  TempDir dir;
  Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}, {"PLOTQ_HTTP_BODY_LIMIT", "4096"}});
  {
    // Announced size over the limit: the answer comes before any body byte is sent.
    Connection c(d.port());
    c.send("POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n");
    auto big = c.read_response(5s);
    REQUIRE(big);
    CHECK(big->status == 413);
    CHECK(big->json() == nlohmann::json{{"detail", "too_large"}});
  }
  // A body sent in full, on a route that does not exist: still 413, and nothing of it is logged.
  std::string body = "MARKER-" + std::string(8000, 'q');
  auto big = http_request(d.port(), "POST", "/v1/whatever", body);
  CHECK(big.status == 413);
  auto r = http_request(d.port(), "POST", "/v1/other", "{\"secret\":\"MARKER-2\"}");
  CHECK(r.status == 404);
  REQUIRE(d.wait_log("request", 5s, [](const nlohmann::json& e) { return e.value("status", 0) == 404 && e.value("method", "") == "POST"; }));
  CHECK_FALSE(contains(d.stderr_lines(), "MARKER"));
}

TEST_CASE("plotqd: keep-alive serves two requests on one connection", "[plotqd]") {
  TempDir dir;
  Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}});
  Connection c(d.port());
  c.send(format_request("GET", "/healthz"));
  auto a = c.read_response();
  REQUIRE(a);
  CHECK(a->status == 200);
  CHECK(a->header("Connection") != "close");
  c.send(format_request("GET", "/nope"));
  auto b = c.read_response();
  REQUIRE(b);
  CHECK(b->status == 404);
  CHECK_FALSE(c.closed());
}

TEST_CASE("plotqd: a slow client is dropped after the read timeout", "[plotqd]") {
  TempDir dir;
  Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}, {"PLOTQ_HTTP_READ_TIMEOUT_S", "0.3"}});
  Connection slow(d.port());
  slow.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Half: ");  // half a request, then silence
  auto start = std::chrono::steady_clock::now();
  CHECK(slow.wait_closed(5s));
  CHECK(std::chrono::steady_clock::now() - start >= Ms(250));
  CHECK(d.wait_log("http_read_timeout", 5s));
  CHECK(http_request(d.port(), "GET", "/healthz").status == 200);  // others are still served
}

TEST_CASE("plotqd: SIGTERM and SIGINT shut down cleanly with exit 0", "[plotqd]") {
  TempDir dir;
  for (int sig : {SIGTERM, SIGINT}) {
    INFO("signal " << sig);
    Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}});
    Connection idle(d.port());  // an idle keep-alive connection must not hold the shutdown
    idle.send(format_request("GET", "/healthz"));
    REQUIRE(idle.read_response());
    d.signal(sig);
    auto code = d.wait_exit(10s);
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(d.wait_log("shutdown", 1s));
    CHECK(d.wait_log("stopped", 1s));
    CHECK(idle.wait_closed(2s));
  }
}

TEST_CASE("plotqd: settings are printed once at start / secrets masked", "[plotqd]") {
  TempDir dir;
  const std::string token = "tok-SECRET-0123456789abcdef";
  Plotqd d(kBinary, {{"PLOTQ_DB", dir.file("plotq.db")}, {"PLOTQ_TOKENS", token + "=alice"},
                     {"PLOTQ_SSE_PING_S", "2.5"}, {"PLOTQ_NOT_A_SETTING", "1"}});
  auto configs = d.log_events("config");
  REQUIRE(configs.size() == 1);
  auto s = configs[0]["settings"];
  CHECK(s["PLOTQ_TOKENS"] == "***");
  CHECK(s["PLOTQ_SSE_PING_S"] == 2.5);
  CHECK(s["PLOTQ_DB"] == dir.file("plotq.db"));
  // Every registered setting is in the line.
  plotq::server::PlotqdConfig cfg;
  plotq::server::Settings reg;
  plotq::server::register_settings(reg, cfg);
  for (const auto& st : reg.all()) {
    INFO(st.name());
    CHECK(s.contains(st.name()));
  }
  CHECK_FALSE(contains(d.stderr_lines(), "SECRET"));
  auto unknown = d.wait_log("config_unknown_names", 1s);
  REQUIRE(unknown);
  CHECK((*unknown)["names"] == nlohmann::json{"PLOTQ_NOT_A_SETTING"});
  auto listening = d.log_events("listening");
  REQUIRE(listening.size() == 1);
  CHECK(listening[0]["tokens"] == 1);
}

TEST_CASE("plotqd: --help lists every setting with its default", "[plotqd]") {
  std::vector<std::string> out;
  CHECK(run_to_exit({}, {"--help"}, &out, nullptr) == 0);
  std::string text;
  for (auto& l : out) text += l + "\n";
  plotq::server::PlotqdConfig cfg;
  plotq::server::Settings reg;
  plotq::server::register_settings(reg, cfg);
  REQUIRE(reg.all().size() >= 20);
  for (const auto& st : reg.all()) {
    INFO(st.name());
    CHECK(text.find(st.name()) != std::string::npos);
  }
  CHECK(text.find("default 127.0.0.1:8080") != std::string::npos);
  CHECK(text.find("default ./var/plotq.db") != std::string::npos);
  CHECK(run_to_exit({}, {"--bogus"}, nullptr, nullptr) == 2);
}

TEST_CASE("plotqd: invalid settings refuse to start with exit 2 and a clear message", "[plotqd]") {
  TempDir dir;
  const std::pair<std::string, std::string> bad[] = {
      {"PLOTQ_HTTP_BODY_LIMIT", "lots"},
      {"PLOTQ_LISTEN", "localhost:80"},
      {"PLOTQ_ENVIRONMENT", "staging"},
      {"PLOTQ_DB_BUSY_TIMEOUT_MS", "-5"},
  };
  for (const auto& [name, value] : bad) {
    INFO(name << "=" << value);
    std::vector<std::string> err;
    CHECK(run_to_exit({{"PLOTQ_DB", dir.file("x.db")}, {name, value}}, {}, nullptr, &err) == 2);
    CHECK(contains(err, "plotqd: configuration error: " + name));
  }
  std::vector<std::string> err;
  CHECK(run_to_exit({{"PLOTQ_DB", dir.file("x.db")}, {"PLOTQ_ENVIRONMENT", "development"}, {"PLOTQ_LISTEN", "0.0.0.0:0"}},
                    {}, nullptr, &err) == 2);
  CHECK(contains(err, "loopback"));
  CHECK_FALSE(std::filesystem::exists(dir.file("x.db")));  // refused before touching the store
}

TEST_CASE("plotqd: a database newer than the binary is refused at start", "[plotqd]") {
  TempDir dir;
  std::string db = dir.file("plotq.db");
  {
    Plotqd d(kBinary, {{"PLOTQ_DB", db}});
    d.signal(SIGTERM);
    REQUIRE(d.wait_exit() == 0);
  }
  {
    SQLite::Database s(db, SQLite::OPEN_READWRITE);
    s.exec("INSERT INTO schema_migrations(version, name, checksum, applied_at) VALUES (999, '0999_future', '" +
           std::string(64, 'a') + "', '2030-01-01T00:00:00Z')");
  }
  std::vector<std::string> err;
  int code = run_to_exit({{"PLOTQ_DB", db}}, {}, nullptr, &err);
  CHECK(code == 3);
  CHECK(contains(err, "plotqd: store:"));
  CHECK_FALSE(contains(err, "\"event\":\"listening\""));
}

TEST_CASE("plotqd: /healthz answers 503 when the store becomes unusable", "[plotqd]") {
  TempDir dir;
  std::string db = dir.file("plotq.db");
  Plotqd d(kBinary, {{"PLOTQ_DB", db}});
  REQUIRE(http_request(d.port(), "GET", "/healthz").status == 200);
  {
    // Another binary (newer) migrated the file under the running server.
    SQLite::Database s(db, SQLite::OPEN_READWRITE);
    s.exec("INSERT INTO schema_migrations(version, name, checksum, applied_at) VALUES (999, '0999_future', '" +
           std::string(64, 'b') + "', '2030-01-01T00:00:00Z')");
  }
  auto r = http_request(d.port(), "GET", "/healthz");
  CHECK(r.status == 503);
  auto j = r.json();
  CHECK(j["detail"] == "unavailable");
  CHECK(j["status"] == "unavailable");
  CHECK(j["store"]["ok"] == false);
  CHECK(j["store"]["error"] == "schema_newer");
  CHECK(r.header("Cache-Control") == "no-store");
  CHECK(d.wait_log("health_failed", 2s));
  {
    SQLite::Database s(db, SQLite::OPEN_READWRITE);
    s.exec("DROP TABLE schema_migrations");  // now the schema looks like nothing this binary knows
  }
  r = http_request(d.port(), "GET", "/healthz");
  CHECK(r.status == 503);
  CHECK(r.json()["store"]["ok"] == false);
}

TEST_CASE("plotqd: a store that cannot be opened is refused with exit 3", "[plotqd]") {
  TempDir dir;
  {
    std::ofstream junk(dir.file("junk.db"));
    junk << std::string(8192, 'J');  // not a SQLite file
  }
  std::vector<std::string> err;
  CHECK(run_to_exit({{"PLOTQ_DB", dir.file("junk.db")}}, {}, nullptr, &err) == 3);
  CHECK(contains(err, dir.file("junk.db") + ": not_sqlite: "));
  std::filesystem::create_directory(dir.file("adir"));
  CHECK(run_to_exit({{"PLOTQ_DB", dir.file("adir")}}, {}, nullptr, &err) == 3);
  CHECK(contains(err, dir.file("adir") + ": unreadable: "));
  CHECK(contains(err, "\"event\":\"store_damaged\""));
  // A parent that cannot be made is the open's own refusal.
  std::ofstream(dir.file("afile")) << "x";
  CHECK(run_to_exit({{"PLOTQ_DB", dir.file("afile") + "/plotq.db"}}, {}, nullptr, &err) == 3);
  CHECK(contains(err, "\"event\":\"store_failed\""));
}

TEST_CASE("plotqd: --version", "[plotqd]") {
  std::vector<std::string> out;
  CHECK(run_to_exit({}, {"--version"}, &out, nullptr) == 0);
  REQUIRE(out.size() == 1);
  CHECK(out[0] == std::string("plotqd ") + PLOTQ_VERSION);
}
