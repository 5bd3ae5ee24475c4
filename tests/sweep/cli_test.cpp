// The real plotq binary: diff exit codes and listings, report/list, argument refusals, Ctrl-C then
// --resume on a bare sweep, and the progress bar on a terminal.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/sweep/catalogue_expected.hpp"
#include "tests/support/cli_run.hpp"
#include "tests/sweep/helpers.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq;
using namespace plotq::sweep_test;

namespace {

using Run = test::CliRun;
using test::contains;
using test::slurp;

// The real plotq on files in t (PLOTQ_DB unset so --db rules); env as `env` takes it.
Run plotq_cli(const TempDir& t, const std::string& args, const std::string& env = "") {
  return test::run_cli(PLOTQ_CLI_PATH, t.path.string(), args, env);
}

// A file that takes `sleep_s` and then writes a 3200x1800 PNG header (the size check reads no more).
std::string slow_plot(double sleep_s) {
  return "import os, struct, time, zlib\n"
         "time.sleep(" + std::to_string(sleep_s) + ")\n"
         "def c(t, d):\n"
         "    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))\n"
         "open('plot-%s.png' % os.environ['ANYPLOT_THEME'], 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + "
         "c(b'IHDR', struct.pack('>IIBBBBB', 3200, 1800, 8, 0, 0, 0, 0)) + c(b'IEND', b''))\n";
}

std::string catalogue(const TempDir& t, int n, double sleep_s) {
  for (int i = 0; i < n; ++i)
    t.write("cat/plots/p" + std::to_string(i) + "/implementations/python/matplotlib.py", slow_plot(sleep_s));
  return t.file("cat");
}

// Two sweeps in one database, written through the store (the CLI only reads them).
std::string two_sweeps(const TempDir& t, bool same) {
  std::string path = t.file("p.db");
  auto db = migrated(path);
  for (const std::string label : {"bare", "sandbox"}) {
    std::int64_t id = store::sweeps::create(*db, make_sweep(label, label), kNow);
    store::sweeps::record_file(*db, id, {render_row("plots/a/implementations/python/matplotlib.py")}, kNow);
    if (same || label == "bare")
      store::sweeps::record_file(*db, id, {fail_row("plots/b/implementations/python/seaborn.py", "plot_error", "ValueError")}, kNow);
    else
      store::sweeps::record_file(*db, id, {fail_row("plots/b/implementations/python/seaborn.py", "guard_refused", std::nullopt, "light", 'f')}, kNow);
    if (!same && label == "sandbox")
      store::sweeps::record_file(*db, id, {render_row("plots/c/implementations/python/matplotlib.py")}, kNow);
    store::sweeps::end_session(*db, id, "done", 3.0, kNow + 5);
  }
  return path;
}

}  // namespace

TEST_CASE("cli: diff exits 0 when no file changed outcome") {
  TempDir t;
  std::string db = two_sweeps(t, true);
  Run d = plotq_cli(t, "--db " + db + " sweep diff bare sandbox");
  CHECK(d.rc == 0);
  CHECK(contains(d.out, "0 differences in 2 rows compared"));
  Run j = plotq_cli(t, "sweep diff bare sandbox --json --db " + db);
  CHECK(j.rc == 0);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["count"] == 0);
  CHECK(doc["compared"] == 2);
}

TEST_CASE("cli: diff lists changed and one-sided files with hashes and exits 1") {
  TempDir t;
  std::string db = two_sweeps(t, false);
  Run d = plotq_cli(t, "--db " + db + " sweep diff bare sandbox");
  CHECK(d.rc == 1);
  CHECK(contains(d.out, "plots/b/implementations/python/seaborn.py"));
  CHECK(contains(d.out, "fail ValueError"));
  CHECK(contains(d.out, "fail guard_refused"));
  CHECK(contains(d.out, std::string(12, 'a') + " -> " + std::string(12, 'f')));
  CHECK(contains(d.out, "plots/c/implementations/python/matplotlib.py"));
  CHECK(contains(d.out, "only_b"));
  CHECK(contains(d.out, "2 differences in 2 rows compared"));
  CHECK_FALSE(contains(d.out, "plots/a/"));
  Run j = plotq_cli(t, "--db " + db + " sweep diff bare sandbox --json");
  CHECK(j.rc == 1);
  CHECK(nlohmann::json::parse(j.out)["count"] == 2);
}

TEST_CASE("cli: report, list - unknown labels and bad arguments exit 2") {
  TempDir t;
  std::string db = two_sweeps(t, false);
  Run r = plotq_cli(t, "--db " + db + " sweep report sandbox --json");
  REQUIRE(r.rc == 0);
  auto doc = nlohmann::json::parse(r.out);
  CHECK(doc["rows"] == 3);
  CHECK(doc["outcomes"]["render"] == 2);
  CHECK(doc["outcomes"]["fail"] == 1);
  CHECK(doc["by_reason"][0]["reason_class"] == "guard_refused");
  Run text = plotq_cli(t, "--db " + db + " sweep report bare");
  CHECK(text.rc == 0);
  CHECK(contains(text.out, "ValueError"));
  CHECK(contains(text.out, "slowest:"));
  Run l = plotq_cli(t, "--db " + db + " sweep list");
  CHECK(l.rc == 0);
  CHECK(contains(l.out, "bare"));
  CHECK(contains(l.out, "sandbox"));
  CHECK(nlohmann::json::parse(plotq_cli(t, "--db " + db + " sweep list --json").out).size() == 2);

  CHECK(plotq_cli(t, "--db " + db + " sweep diff bare nope").rc == 2);
  CHECK(plotq_cli(t, "--db " + db + " sweep report nope").rc == 2);
  CHECK(plotq_cli(t, "--db " + db + " sweep diff bare").rc == 2);
  CHECK(plotq_cli(t, "--db " + t.file("missing.db") + " sweep diff a b").rc == 2);
  CHECK(plotq_cli(t, "--db " + db + " sweep frobnicate").rc == 2);
  // --html: a DIR is needed, and it is --json or --html; a DIR that cannot be made is report's 1,
  // diff's 2 (its 1 means differences).
  CHECK(plotq_cli(t, "--db " + db + " sweep report bare --html").rc == 2);
  CHECK(plotq_cli(t, "--db " + db + " sweep report bare --json --html " + t.file("h")).rc == 2);
  CHECK(plotq_cli(t, "--db " + db + " sweep diff bare sandbox --json --html " + t.file("h")).rc == 2);
  CHECK_FALSE(std::filesystem::exists(t.file("h")));
  CHECK(plotq_cli(t, "--db " + db + " sweep report bare --html " + db + "/x").rc == 1);
  CHECK(plotq_cli(t, "--db " + db + " sweep diff bare sandbox --html " + db + "/x").rc == 2);
  CHECK(plotq_cli(t, "--db " + db + " sweep run").rc == 2);
  std::string cat = catalogue(t, 1, 0);
  for (const std::string bad : {"--mode docker", "--themes light,light", "--themes sepia", "--timeout 0",
                                "--timeout 500", "--jobs 0", "--label a/b", "--mode bare --server http://x",
                                "--label bare", "--bogus 1"}) {
    INFO(bad);
    Run b = plotq_cli(t, "--db " + db + " sweep run " + cat + " " + bad);
    CHECK(b.rc == 2);
  }
  CHECK(plotq_cli(t, "--db " + db + " sweep run " + t.file("nowhere") + " --mode bare").rc == 2);
  CHECK(plotq_cli(t, "--db " + db + " sweep run --resume nope").rc == 2);
}

TEST_CASE("cli: Ctrl-C stops a sweep cleanly - --resume draws only the rest") {
  // Bare mode kills its Python children; sandbox mode cancels the running render.
  std::string mode = GENERATE(std::string("bare"), std::string("sandbox"));
  INFO("mode " << mode);
  TempDir t;
  std::string cat = catalogue(t, 6, 0.6);
  std::string db = t.file("p.db");
  std::string err = t.file("run1.err"), out = t.file("run1.out");
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(e, 2);
    ::dup2(o, 1);
    ::unsetenv("PLOTQ_DB");
    ::execl(PLOTQ_CLI_PATH, "plotq", "--db", db.c_str(), "sweep", "run", cat.c_str(), "--mode", mode.c_str(),
            "--themes", "light", "--label", "r", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Ctrl-C once two files are recorded (the plain progress lines say so).
  bool seen = false;
  for (int i = 0; i < 1200 && !seen; ++i) {
    seen = contains(slurp(err), "[2/6]");
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(seen);
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  std::string first = slurp(err);
  CHECK(contains(slurp(out), "interrupted"));
  CHECK(contains(slurp(out), "plotq sweep run --resume r"));

  std::vector<std::string> done_first;
  {
    auto d = store::Db::open(db);
    auto s = store::sweeps::find(*d, "r");
    REQUIRE(s);
    CHECK(s->state == "interrupted");
    done_first = store::sweeps::finished_paths(*d, s->id);
  }
  CHECK(done_first.size() >= 2);
  CHECK(done_first.size() < 6);
  for (const auto& p : done_first) CHECK(contains(first, p));
  {
    // Nothing half-done was recorded: every recorded row is a finished render.
    auto d = store::Db::open(db);
    for (const auto& r : store::sweeps::results(*d, store::sweeps::find(*d, "r")->id)) CHECK(r.reason == "ok");
  }

  // The sweep recorded the runtime it ran on; a resume on another runtime is refused (its rows
  // could not be told apart), and on the same one goes on.
  std::string runtime_id;
  {
    auto d = store::Db::open(db);
    auto s = store::sweeps::find(*d, "r");
    REQUIRE(s->runtime_id);
    runtime_id = *s->runtime_id;
    d->sql().exec("UPDATE sweeps SET runtime_id = '0123456789ab' WHERE label = 'r'");
  }
  Run other = plotq_cli(t, "--db " + db + " sweep run --resume r");
  CHECK(other.rc == 2);
  CHECK(contains(other.err, "the runtime changed"));
  {
    auto d = store::Db::open(db);
    d->sql().exec("UPDATE sweeps SET runtime_id = '" + runtime_id + "' WHERE label = 'r'");
  }
  // A resume with another outcome-deciding setting is refused.
  CHECK(plotq_cli(t, "--db " + db + " sweep run --resume r --themes light,dark").rc == 2);
  Run again = plotq_cli(t, "--db " + db + " sweep run --resume r");
  CHECK(again.rc == 0);
  CHECK(contains(again.err, "resuming r: " + std::to_string(done_first.size()) + " of 6 files already recorded"));
  for (const auto& p : done_first) CHECK_FALSE(contains(again.err, p));  // not drawn again
  CHECK(contains(again.out, "done, 6 of 6 files recorded (" + std::to_string(6 - done_first.size()) + " this run)"));
  auto d = store::Db::open(db);
  auto s = store::sweeps::find(*d, "r");
  CHECK(s->state == "done");
  auto rows = store::sweeps::results(*d, s->id);
  CHECK(rows.size() == 6);
  for (const auto& r : rows) CHECK(r.outcome == store::SweepOutcome::render);
  // A resume of a finished sweep has nothing left to do.
  Run idle = plotq_cli(t, "--db " + db + " sweep run --resume r");
  CHECK(idle.rc == 0);
  CHECK(contains(idle.out, "(0 this run)"));
}

TEST_CASE("cli: on a terminal the progress is a bar with counts, rate and ETA") {
  TempDir t;
  std::string cat = catalogue(t, 2, 0);
  std::string db = t.file("p.db");
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::unsetenv("PLOTQ_DB");
    ::execl(PLOTQ_CLI_PATH, "plotq", "--db", db.c_str(), "sweep", "run", cat.c_str(), "--mode", "bare", "--themes",
            "light", "--label", "tty", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string text;
  char buf[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 120000) <= 0) break;
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child closed the terminal
    text.append(buf, static_cast<std::size_t>(n));
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(contains(text, "\r\033[K["));
  CHECK(contains(text, "2/2 files"));
  CHECK(contains(text, "render 2"));
  CHECK(contains(text, "files/s"));
  CHECK(contains(text, "ETA"));
  CHECK_FALSE(contains(text, "[1/2] "));  // no plain lines on a terminal
}

// --server: each file is POSTed to a running plotqd's /render; the outcomes are the catalogue's
// documented ones, exactly as in process and bare.
TEST_CASE("cli: a sweep against a running plotqd (--server) records the catalogue's outcomes") {
  TempDir t;
  // The sweep calls the assistant's route with a bearer token (PLOTQ_TOKEN), as in production.
  const std::string token = "sweep-test-token-0123456789";
  // The default rate window (1 slot start per 60 s) would hold the catalogue's files for half an hour.
  test::Plotqd d(PLOTQD_BINARY, {{"PLOTQ_DB", t.file("server/plotqd.db")},
                                 {"PLOTQ_TOKENS", token + "=sweeper:assistant"},
                                 {"PLOTQ_RUNS_PER_MINUTE", "100000"}});
  REQUIRE(d.wait_listening());
  std::string url = "http://127.0.0.1:" + std::to_string(d.port());
  std::string db = t.file("sweep.db");
  // Without the token the server refuses: the sweep stops (exit 1), records nothing, and says why.
  Run refused = plotq_cli(t, "--db " + db + " sweep run " + std::string(PLOTQ_SOURCE_DIR) +
                                 "/tests/catalogue --server " + url + " --themes light --label anonymous",
                          "-u PLOTQ_TOKEN");
  CHECK(refused.rc == 1);
  CHECK(contains(refused.err, "401 unauthenticated"));
  const std::size_t files =
      runs::find_sweep_files(PLOTQ_SOURCE_DIR "/tests/catalogue", runs::kDefaultSweepGlob, {}).size();
  CHECK(contains(refused.out, "interrupted, 0 of " + std::to_string(files) + " files recorded"));
  Run r = plotq_cli(t, "--db " + db + " sweep run " + std::string(PLOTQ_SOURCE_DIR) +
                           "/tests/catalogue --server " + url + " --themes light --label server",
                    "PLOTQ_TOKEN=" + token);
  INFO(r.err);
  REQUIRE(r.rc == 0);
  CHECK(contains(r.out, "via " + url));
  check_catalogue_sweep(db, "server");
  // The server kept its own ledger of those renders.
  auto ledger = store::Db::open(t.file("server/plotqd.db"));
  CHECK(ledger->sql().execAndGet("SELECT count(*) FROM runs WHERE kind = 'render'").getInt() >= 13);
}
