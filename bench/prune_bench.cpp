// prune_bench: a plain chat turn's latency while plotqd's retention job prunes 1 M rows, against the
// same turns on the same store with nothing to prune (issue 17, retention).
//
//   prune_bench PLOTQD [rows=1000000] [turns=1500] [runs=3] [batch]
//
// One store file is made once: `rows` rows past their cutoffs, half ledger rows (runs, 100 days
// old) and half events of ended turns (100 per turn, ended 30 days ago). Each run copies it twice:
//   baseline  plotqd with every PLOTQ_RETAIN_* at its maximum: nothing is past a cutoff, no prune
//   prune     plotqd with the default settings: the job deletes the rows, PLOTQ_RETAIN_BATCH (100)
//             per transaction, while the turns are measured
// and measures `turns` plain turns (request to `done`, new connection each, 16 users in turn; 100
// warm-up turns first) on each. Printed: p50 / p99 of both, the ratio prune/baseline, and how many
// rows went while the turns ran (the prune must still be running at the end, or the window did not
// cover it: said so). The figure is the median over `runs` runs.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/stats.hpp"
#include "store/db.hpp"
#include "store/migrate.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq::test;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using plotq::bench::pct;

namespace {

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("connect");
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// One request on a new connection, timed until `marker` arrives.
double timed(std::uint16_t port, const std::string& req, const std::string& marker) {
  int fd = connect_to(port);
  auto t0 = Clock::now();
  std::size_t off = 0;
  while (off < req.size()) {
    ssize_t n = ::send(fd, req.data() + off, req.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += std::size_t(n);
  }
  std::string buf;
  char chunk[8192];
  while (buf.find(marker) == std::string::npos) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) break;
    buf.append(chunk, std::size_t(n));
  }
  double v = ms(Clock::now() - t0);
  ::close(fd);
  if (buf.find(marker) == std::string::npos) throw std::runtime_error("no " + marker);
  return v;
}

void make_store(const std::string& path, int rows) {
  auto db = plotq::store::Db::open(path);
  plotq::store::migrate(*db);
  auto& s = db->sql();
  const int runs = rows / 2, turns = (rows - runs) / 100;
  s.exec("BEGIN");
  s.exec("INSERT INTO users(id, created_at) VALUES ('old', strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-200 days'))");
  s.exec("INSERT INTO sessions(id, user_id, created_at) VALUES ('s-old', 'old', strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 day'))");
  s.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(runs) +
         ") INSERT INTO runs(job_id, kind, user_id, created_at, outcome, wall_s, cpu_s) "
         "SELECT 'job-' || i, 'data', 'old', strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-100 days', '+' || (i % 80000) || ' seconds'), "
         "'ok', 0.25, 0.2 FROM n");
  s.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(turns) +
         ") INSERT INTO turns(id, session_id, user_id, created_at, text_chars, status, outcome, ended_at) "
         "SELECT 'turn-' || i, 's-old', 'old', strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-30 days'), 20, 'done', 'ok', "
         "strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-30 days') FROM n");
  s.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) "
         "INSERT INTO turn_events(turn_id, seq, event, data, created_at) "
         "SELECT t.id, n.i, 'status', '{\"state\":\"queued\",\"position\":' || n.i || '}', t.created_at "
         "FROM turns t, n ORDER BY t.id, n.i");
  s.exec("COMMIT");
}

std::int64_t rows_left(const std::string& path) {
  plotq::store::Options o;
  o.read_only = true;
  auto db = plotq::store::Db::open(path, o);
  // The made rows only (the measured turns add events of their own).
  return db->sql()
      .execAndGet("SELECT (SELECT count(*) FROM runs WHERE user_id = 'old') + "
                  "(SELECT count(*) FROM turn_events WHERE turn_id GLOB 'turn-*')")
      .getInt64();
}

struct Result {
  double p50 = 0, p99 = 0;
  std::int64_t before = 0, after = 0;
};

Result measure(const std::string& binary, const std::string& source, bool prune, int turns, const std::string& batch) {
  TempDir dir;
  const std::string path = dir.file("plotq.db");
  std::filesystem::copy_file(source, path);
  Env env = {{"PLOTQ_DB", path},
             {"PLOTQ_ENVIRONMENT", "development"},
             {"PLOTQ_LOG_REQUESTS", "0"},
             {"PLOTQ_USER_MESSAGES_PER_MINUTE", "1000000"},
             {"PLOTQ_USER_MESSAGES_PER_DAY", "100000000"}};
  if (!batch.empty()) env.emplace_back("PLOTQ_RETAIN_BATCH", batch);
  if (!prune)
    for (const char* n : {"PLOTQ_RETAIN_LEDGER_DAYS", "PLOTQ_RETAIN_TURN_EVENTS_DAYS", "PLOTQ_RETAIN_SESSION_IDLE_DAYS",
                          "PLOTQ_RETAIN_DATASETS_DAYS", "PLOTQ_RETAIN_SWEEPS_DAYS"})
      env.emplace_back(n, "36600");
  Plotqd d(binary, env);
  if (!d.wait_listening(120s)) throw std::runtime_error("plotqd did not start");
  constexpr int kUsers = 16;
  std::vector<std::string> sessions;
  for (int i = 0; i < kUsers; ++i) {
    auto r = http_request(d.port(), "POST", "/v1/sessions", "", {{"X-Plotq-User", "p" + std::to_string(i)}});
    sessions.push_back(r.json()["id"].get<std::string>());
  }
  auto turn = [&](int i) {
    int u = i % kUsers;
    return timed(d.port(),
                 format_request("POST", "/v1/sessions/" + sessions[u] + "/messages",
                                json{{"text", "what can you plot?"}}.dump(), {{"X-Plotq-User", "p" + std::to_string(u)}},
                                false),
                 "event: done");
  };
  for (int i = 0; i < 100; ++i) turn(i);        // warm-up
  std::this_thread::sleep_for(1500ms);          // the job's first step comes 1 s after start
  Result r;
  r.before = rows_left(path);
  std::vector<double> v;
  for (int i = 0; i < turns; ++i) v.push_back(turn(i));
  r.after = rows_left(path);
  r.p50 = pct(v, 0.5);
  r.p99 = pct(v, 0.99);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: prune_bench PLOTQD [rows=1000000] [turns=1500] [runs=3] [batch]\n");
    return 2;
  }
  const std::string binary = argv[1];
  const int rows = argc > 2 ? std::stoi(argv[2]) : 1'000'000;
  const int turns = argc > 3 ? std::stoi(argv[3]) : 1500;
  const int runs = argc > 4 ? std::stoi(argv[4]) : 3;
  const std::string batch = argc > 5 ? argv[5] : "";  // PLOTQ_RETAIN_BATCH; empty: plotqd's default
  TempDir dir;
  const std::string source = dir.file("source.db");
  auto t0 = Clock::now();
  make_store(source, rows);
  std::printf("store: %d rows past their cutoffs (%.1f MiB), made in %.1f s\n", rows,
              double(std::filesystem::file_size(source)) / (1 << 20), ms(Clock::now() - t0) / 1000);
  std::vector<double> base_p99, prune_p99, base_p50, prune_p50, ratio99;
  for (int k = 0; k < runs; ++k) {
    Result b = measure(binary, source, false, turns, batch);
    Result p = measure(binary, source, true, turns, batch);
    std::printf("run %d: baseline p50 %.3f p99 %.3f ms | pruning p50 %.3f p99 %.3f ms | p99 ratio %.2fx | "
                "rows pruned during the turns %lld (left %lld%s)\n",
                k + 1, b.p50, b.p99, p.p50, p.p99, p.p99 / b.p99, static_cast<long long>(p.before - p.after),
                static_cast<long long>(p.after), p.after == 0 ? ": the prune ended inside the window" : "");
    if (b.before != b.after) std::printf("  (baseline lost rows: %lld; it should prune nothing)\n",
                                         static_cast<long long>(b.before - b.after));
    base_p99.push_back(b.p99);
    prune_p99.push_back(p.p99);
    base_p50.push_back(b.p50);
    prune_p50.push_back(p.p50);
    ratio99.push_back(p.p99 / b.p99);
  }
  std::printf("median of %d runs: baseline p50 %.3f p99 %.3f ms; pruning p50 %.3f p99 %.3f ms; p99 ratio %.2fx, "
              "p50 ratio %.2fx\n",
              runs, pct(base_p50, 0.5), pct(base_p99, 0.5), pct(prune_p50, 0.5), pct(prune_p99, 0.5), pct(ratio99, 0.5),
              pct(prune_p50, 0.5) / pct(base_p50, 0.5));
  return 0;
}
