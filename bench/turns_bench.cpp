// turns_bench: chat turns against a real plotqd over loopback (issue 5's numbers).
//
//   turns_bench PLOTQD latency [streams=1000] [turns=2000] [--engines sqlite,postgresql]
//               [--rounds N] [--pg CONNINFO]
//     (a) plain-turn latency, request to done, p50/p99, while another user's data run holds the
//         render slot and `streams` other turn streams are open (waiting in the queue). Baseline in
//         the same command: the same plain turns on the same server before the load (slot free, no
//         other stream); GET /healthz, alternated with the turns, is the HTTP floor of both.
//         --engines: the whole scenario once per engine and round (a fresh plotqd on a fresh SQLite
//         file, then on a fresh PostgreSQL database of the server --pg or PLOTQ_TEST_PG names),
//         engines alternating within each round; then the medians over the rounds and the ratios
//         of PostgreSQL to SQLite (SQLite is the baseline). On PostgreSQL it also counts the
//         transactions a plain turn commits (pg_stat_database, idle server, no /healthz between).
//   turns_bench PLOTQD streams [streams=10000] [broadcasts=20]
//     (b) `streams` idle open streams (turns waiting in the queue): plotqd's resident memory per
//         stream, and a status broadcast (one more turn joins the queue, so every waiting turn's
//         status{queued} changes) reaching all of them: p50/p99 of (arrival - trigger). Baseline in
//         the same command: this process writing one 80-byte frame to `streams` loopback sockets
//         of its own (the socket floor of one broadcast on this machine), once on an otherwise
//         idle machine and once beside a busy process like the slot holder. The merge interval of
//         queued statuses is 5 s here (default 0.5 s) so that opening the streams stays cheap.
//
// The slot holder is a data snippet that never ends (PLOTQ_TURN_DATA_TIMEOUT_S=3600), so one core
// is busy with it throughout, as it would be with a real render in the slot.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_store.hpp"
#include "bench/stats.hpp"
#include "tests/support/test_client.hpp"

using namespace plotq::test;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using plotq::bench::loadavg;
using plotq::bench::pct;

namespace {

const std::string kForever = "import pandas as pd\nwhile True:\n    pass\ndf = pd.DataFrame({'a': [1]})\n";
const std::string kQuick = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3, 4]})\n";

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }


long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

void raise_nofile() {
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  std::fprintf(stderr, "RLIMIT_NOFILE %llu\n", static_cast<unsigned long long>(rl.rlim_cur));
}

int connect_to(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool send_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// Blocking read until `marker` has been seen; false on EOF or error.
bool read_until(int fd, const std::string& marker, std::string& buf) {
  char chunk[8192];
  while (buf.find(marker) == std::string::npos) {
    ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<std::size_t>(n));
  }
  return true;
}

std::string message_request(const std::string& session, const std::string& user, const json& body, bool keep) {
  return format_request("POST", "/v1/sessions/" + session + "/messages", body.dump(), {{"X-Plotq-User", user}}, keep);
}

json data_turn(const std::string& code) {
  return {{"text", "bench"}, {"action", {{"kind", "data"}, {"code", code}, {"source_language", "python"}}}};
}

// Sessions for users u<prefix>0..n-1, created over one keep-alive connection.
std::vector<std::string> make_sessions(std::uint16_t port, const std::string& prefix, int n) {
  std::vector<std::string> out;
  Connection c(port);
  for (int i = 0; i < n; ++i) {
    c.send(format_request("POST", "/v1/sessions", "", {{"X-Plotq-User", prefix + std::to_string(i)}}, true));
    auto r = c.read_response(10s);
    if (!r || r->status != 201) throw std::runtime_error("session create failed");
    out.push_back(r->json()["id"].get<std::string>());
  }
  return out;
}

// ---- many open streams, read by one epoll thread ------------------------------------------------

// Written by the epoll thread; the counters are read by the main thread while it runs.
struct Stream {
  int fd = -1;
  std::string buf;
  std::atomic<int> statuses{0};
  std::atomic<int> last_waiting{-1};
  std::atomic<Clock::rep> last_status_at{0};
  bool closed = false;
  Clock::time_point status_time() const { return Clock::time_point(Clock::duration(last_status_at.load())); }
};

class StreamSet {
 public:
  explicit StreamSet(std::size_t n) : streams_(n) { ep_ = ::epoll_create1(EPOLL_CLOEXEC); }
  ~StreamSet() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (auto& s : streams_)
      if (s.fd >= 0) ::close(s.fd);
    ::close(ep_);
  }
  void start() { thread_ = std::thread([this] { loop(); }); }
  // Opens stream i (its request is sent; the epoll thread reads the answer).
  bool open(std::size_t i, std::uint16_t port, const std::string& request) {
    int fd = connect_to(port);
    if (fd < 0) return false;
    if (!send_all(fd, request)) return false;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    streams_[i].fd = fd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    ::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev);
    return true;
  }
  std::size_t with_status() const { return with_status_.load(); }
  std::size_t closed() const { return closed_.load(); }
  Clock::time_point last_event() const { return Clock::time_point(Clock::duration(last_event_.load())); }
  // The last status frame (pings come all the time from streams opened at different moments).
  Clock::time_point last_status() const { return Clock::time_point(Clock::duration(last_status_.load())); }
  const std::vector<Stream>& streams() const { return streams_; }  // read only when quiet

 private:
  void loop() {
    std::vector<epoll_event> evs(1024);
    char chunk[16384];
    while (!stop_) {
      int n = ::epoll_wait(ep_, evs.data(), static_cast<int>(evs.size()), 50);
      auto now = Clock::now();
      for (int k = 0; k < n; ++k) {
        Stream& s = streams_[evs[k].data.u64];
        for (;;) {
          ssize_t got = ::recv(s.fd, chunk, sizeof chunk, 0);
          if (got > 0) {
            s.buf.append(chunk, static_cast<std::size_t>(got));
            continue;
          }
          if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            if (!s.closed) ++closed_;
            s.closed = true;
            ::epoll_ctl(ep_, EPOLL_CTL_DEL, s.fd, nullptr);
          }
          break;
        }
        // Frames: only queued statuses matter here.
        std::size_t cut;
        while ((cut = s.buf.find("\n\n")) != std::string::npos) {
          std::string_view frame(s.buf.data(), cut);
          auto w = frame.find("\"waiting\":");
          if (frame.find("event: status") != std::string_view::npos && w != std::string_view::npos) {
            s.last_waiting = std::atoi(frame.data() + w + 10);
            s.last_status_at = now.time_since_epoch().count();
            if (s.statuses++ == 0) ++with_status_;
            last_status_ = now.time_since_epoch().count();
          }
          s.buf.erase(0, cut + 2);
        }
        last_event_ = now.time_since_epoch().count();
      }
    }
  }

  std::vector<Stream> streams_;
  int ep_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> with_status_{0}, closed_{0};
  std::atomic<Clock::rep> last_event_{0}, last_status_{0};
};

struct Daemon {
  TempDir dir;
  std::unique_ptr<Plotqd> d;
  std::string holder_session;
  int holder_fd = -1;

  // status_interval_s: PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S (how far apart a waiting turn's statuses are).
  Daemon(const std::string& binary, const std::string& db, const std::string& status_interval_s = "0.5") {
    Env env = {{"PLOTQ_DB", db.empty() ? dir.file("plotq.db") : db},
               {"PLOTQ_ENVIRONMENT", "development"},
               {"PLOTQ_LOG_REQUESTS", "0"},
               {"PLOTQ_USER_MESSAGES_PER_MINUTE", "1000000"},
               {"PLOTQ_USER_MESSAGES_PER_DAY", "100000000"},
               {"PLOTQ_DAILY_DATA_RUNS", "100000000"},
               {"PLOTQ_RUNS_PER_MINUTE", "100000"},
               {"PLOTQ_QUEUE_MAX_WAIT_S", "86400"},
               {"PLOTQ_HEARTBEAT_S", "3600"},
               {"PLOTQ_TURN_DEADLINE_S", "86400"},
               {"PLOTQ_TURN_DATA_TIMEOUT_S", "3600"},   // the slot holder outlives opening 10,000 streams
               {"PLOTQ_SANDBOX_MAX_TIMEOUT_S", "3600"},
               {"PLOTQ_RLIMIT_CPU_S", "3600"},
               {"PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S", status_interval_s}};
    d = std::make_unique<Plotqd>(binary, env);
    if (!d->wait_listening(60s)) throw std::runtime_error("plotqd did not start");
  }
  ~Daemon() {
    if (holder_fd >= 0) ::close(holder_fd);
  }
  std::uint16_t port() const { return d->port(); }

  // Another user's data run holds the slot: waits until its status{running}.
  void hold_slot() {
    holder_session = make_sessions(port(), "holder", 1)[0];
    holder_fd = connect_to(port());
    send_all(holder_fd, message_request(holder_session, "holder0", data_turn(kForever), false));
    std::string buf;
    if (!read_until(holder_fd, "\"step\":\"running\"", buf)) throw std::runtime_error("holder did not start");
  }
};

// Opens n waiting turns (users w0..); returns when every one has had its first status.
void open_waiting(Daemon& dm, StreamSet& set, int n) {
  auto sessions = make_sessions(dm.port(), "w", n);
  auto t0 = Clock::now();
  constexpr int kWave = 250;
  for (int i = 0; i < n; ++i) {
    if (!set.open(static_cast<std::size_t>(i), dm.port(),
                  message_request(sessions[i], "w" + std::to_string(i), data_turn(kQuick), false)))
      throw std::runtime_error("cannot open stream " + std::to_string(i));
    if ((i + 1) % kWave == 0)
      while (set.with_status() + set.closed() < static_cast<std::size_t>(i + 1) - kWave / 2) std::this_thread::sleep_for(5ms);
  }
  while (set.with_status() + set.closed() < static_cast<std::size_t>(n)) std::this_thread::sleep_for(10ms);
  if (set.closed() > 0) throw std::runtime_error(std::to_string(set.closed()) + " streams closed early");
  std::fprintf(stderr, "%d waiting streams open in %.1f s\n", n, ms(Clock::now() - t0) / 1000);
}

void wait_quiet(const StreamSet& set, Clock::duration quiet) {
  while (Clock::now() - set.last_status() < quiet) std::this_thread::sleep_for(50ms);
}

// ---- (a) plain-turn latency ----------------------------------------------------------------------

struct Latency {
  std::string engine;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;            // loaded
  double idle_p50 = 0, idle_p90 = 0, idle_p99 = 0, idle_max = 0;
  double health_p50 = 0, health_p99 = 0, idle_health_p50 = 0, idle_health_p99 = 0;
  double load = 0;
  double tx_per_turn = -1;  // PostgreSQL: transactions committed per plain turn
};

// Transactions a plain turn commits on PostgreSQL: pg_stat_database's count across `n` plain turns
// (no /healthz between) less the same count across as long a quiet window (the store probe).
// The server reports a backend's counts when it idles, up to 10 s late (PostgreSQL 15's
// PGSTAT_IDLE_INTERVAL), hence the waits.
double tx_per_turn(const plotq::bench::BenchStore& st, const std::function<void()>& turn, int n) {
  constexpr auto kSettle = 11s;
  std::this_thread::sleep_for(kSettle);
  long long c0 = st.pg_commits();
  auto t0 = Clock::now();
  std::this_thread::sleep_for(kSettle);
  long long c1 = st.pg_commits();
  double quiet_rate = (c1 - c0) / (ms(Clock::now() - t0) / 1000);
  auto t1 = Clock::now();
  for (int i = 0; i < n; ++i) turn();
  std::this_thread::sleep_for(kSettle);
  long long c2 = st.pg_commits();
  double window = ms(Clock::now() - t1) / 1000;
  return (static_cast<double>(c2 - c1) - quiet_rate * window) / n;
}

Latency bench_latency(const std::string& binary, int streams, int turns, const plotq::bench::BenchStore* st) {
  Daemon dm(binary, st ? st->target() : "");
  constexpr int kUsers = 16;
  auto sessions = make_sessions(dm.port(), "p", kUsers);
  auto one = [&](const std::string& req, const std::string& marker) {
    int fd = connect_to(dm.port());
    auto t0 = Clock::now();
    send_all(fd, req);
    std::string buf;
    bool ok = read_until(fd, marker, buf);
    double v = ms(Clock::now() - t0);
    ::close(fd);
    if (!ok) throw std::runtime_error("no " + marker);
    return v;
  };
  std::string health = format_request("GET", "/healthz", "", {}, false);
  auto plain = [&](int i) {
    int u = i % kUsers;
    return one(message_request(sessions[u], "p" + std::to_string(u), json{{"text", "what can you plot?"}}, false),
               "event: done");
  };
  // Alternates plain turns and GET /healthz (the HTTP floor); the first 100 of each are warm-up.
  auto measure = [&](std::vector<double>& turn_ms, std::vector<double>& floor_ms) {
    for (int i = 0; i < turns + 100; ++i) {
      double t = plain(i);
      double f = one(health, "\"status\":\"ok\"");
      if (i >= 100) {
        turn_ms.push_back(t);
        floor_ms.push_back(f);
      }
    }
  };
  // Baseline: the same turns on the idle server (slot free, no other stream).
  std::vector<double> idle_ms, idle_floor_ms;
  measure(idle_ms, idle_floor_ms);

  Latency r;
  r.engine = st ? st->engine() : "sqlite";
  if (st && st->postgres()) {
    int k = 0;
    r.tx_per_turn = tx_per_turn(*st, [&] { plain(k++); }, 200);
  }

  dm.hold_slot();
  StreamSet set(static_cast<std::size_t>(streams));
  set.start();
  open_waiting(dm, set, streams);
  wait_quiet(set, 1s);
  std::vector<double> turn_ms, floor_ms;
  measure(turn_ms, floor_ms);
  json status = json::parse(http_request(dm.port(), "GET", "/v1/status", {}, {}).body);
  r.load = loadavg();
  std::printf("(a) %s: plain turn, request to done, %d turns; slot held by a running data job; %d other streams open "
              "(queue: waiting %d, in_flight %d); load avg %.1f\n",
              r.engine.c_str(), turns, streams, status["waiting"].get<int>(), status["in_flight"].get<int>(), r.load);
  r.p50 = pct(turn_ms, 0.5), r.p90 = pct(turn_ms, 0.9), r.p99 = pct(turn_ms, 0.99), r.max = pct(turn_ms, 1.0);
  r.idle_p50 = pct(idle_ms, 0.5), r.idle_p90 = pct(idle_ms, 0.9), r.idle_p99 = pct(idle_ms, 0.99), r.idle_max = pct(idle_ms, 1.0);
  r.health_p50 = pct(floor_ms, 0.5), r.health_p99 = pct(floor_ms, 0.99);
  r.idle_health_p50 = pct(idle_floor_ms, 0.5), r.idle_health_p99 = pct(idle_floor_ms, 0.99);
  std::printf("    plain turn, loaded   p50 %.3f ms   p90 %.3f ms   p99 %.3f ms   max %.3f ms\n", r.p50, r.p90, r.p99, r.max);
  std::printf("    plain turn, idle     p50 %.3f ms   p90 %.3f ms   p99 %.3f ms   max %.3f ms   (baseline: same server before the load)\n",
              r.idle_p50, r.idle_p90, r.idle_p99, r.idle_max);
  std::printf("    GET /healthz loaded  p50 %.3f ms   p99 %.3f ms   idle p50 %.3f ms   p99 %.3f ms   (the HTTP floor)\n",
              r.health_p50, r.health_p99, r.idle_health_p50, r.idle_health_p99);
  std::printf("    loaded / idle: p50 %.2fx  p99 %.2fx\n", r.p50 / r.idle_p50, r.p99 / r.idle_p99);
  if (r.tx_per_turn >= 0) std::printf("    transactions committed per plain turn (idle server): %.2f\n", r.tx_per_turn);
  std::fflush(stdout);
  return r;
}

// The scenario once per engine and round, engines alternating; medians over the rounds and the
// ratios PostgreSQL / SQLite.
int bench_engines(const std::string& binary, int streams, int turns, const std::vector<std::string>& engines, int rounds,
                  const std::string& pg) {
  std::map<std::string, std::vector<Latency>> by;
  for (int round = 0; round < rounds; ++round)
    for (const auto& e : engines) {
      TempDir dir;
      plotq::bench::BenchStore st(e, dir, pg);
      std::printf("round %d of %d, %s\n", round + 1, rounds, e.c_str());
      by[e].push_back(bench_latency(binary, streams, turns, &st));
    }
  auto med = [&](const std::string& e, double Latency::*f) {
    std::vector<double> v;
    for (const auto& r : by[e]) v.push_back(r.*f);
    return pct(v, 0.5);
  };
  std::printf("medians over %d round(s), %d turns each, %d streams waiting, slot busy:\n", rounds, turns, streams);
  for (const auto& e : engines)
    std::printf("    %-10s loaded p50 %.3f  p90 %.3f  p99 %.3f ms;  idle p50 %.3f  p99 %.3f ms;  /healthz loaded p50 %.3f  p99 %.3f ms\n",
                e.c_str(), med(e, &Latency::p50), med(e, &Latency::p90), med(e, &Latency::p99), med(e, &Latency::idle_p50),
                med(e, &Latency::idle_p99), med(e, &Latency::health_p50), med(e, &Latency::health_p99));
  if (by.count("sqlite") && by.count("postgresql")) {
    std::printf("    postgresql / sqlite: loaded p50 %.2fx  p99 %.2fx;  idle p50 %.2fx  p99 %.2fx   (target: loaded p99 <= 2x)\n",
                med("postgresql", &Latency::p50) / med("sqlite", &Latency::p50),
                med("postgresql", &Latency::p99) / med("sqlite", &Latency::p99),
                med("postgresql", &Latency::idle_p50) / med("sqlite", &Latency::idle_p50),
                med("postgresql", &Latency::idle_p99) / med("sqlite", &Latency::idle_p99));
    std::printf("    per round p99 ratio:");
    for (int i = 0; i < rounds; ++i) std::printf(" %.2fx", by["postgresql"][i].p99 / by["sqlite"][i].p99);
    std::printf("\n    postgresql transactions per plain turn (median of rounds): %.2f\n", med("postgresql", &Latency::tx_per_turn));
  }
  return 0;
}

// ---- (b) 10,000 streams: memory and a broadcast ----------------------------------------------------

// The socket floor: one 80-byte frame written to each of n loopback sockets by a writer thread,
// read by an epoll thread like the streams above. Latency = arrival - start of the writes;
// `writes` gets the writer's own loop time per round (n send() calls and nothing else). With
// `busy_beside`, a busy loop runs all along in a process of its own session at niceness 10 (the
// process and its scheduler autogroup): what the slot holder is while plotqd broadcasts (a sandbox
// job: setsid, sandbox_nice), so that floor and plotqd share the machine the same way.
// The writing ends live in this process and the reading ends in a forked child, so that each holds
// n descriptors (2n in one process would pass the hard RLIMIT_NOFILE). Both use steady_clock
// (CLOCK_MONOTONIC, shared across processes); the child sends its arrival times back over a pipe.
std::vector<double> socket_floor(int n, int rounds, std::vector<double>& writes, bool busy_beside) {
  pid_t busy = -1;
  if (busy_beside) {
    busy = ::fork();
    if (busy < 0) throw std::runtime_error("fork");
    if (busy == 0) {
      ::setsid();
      ::setpriority(PRIO_PROCESS, 0, 10);
      if (FILE* ag = std::fopen("/proc/self/autogroup", "w")) {  // its session's group too, as a job's
        std::fputs("10", ag);
        std::fclose(ag);
      }
      for (volatile std::uint64_t spin = 0;; spin = spin + 1) {
      }
    }
  }
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(lfd, 4096);
  socklen_t len = sizeof a;
  ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  std::uint16_t port = ntohs(a.sin_port);
  int go[2], back[2];
  if (::pipe(go) != 0 || ::pipe(back) != 0) throw std::runtime_error("pipe");
  pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork");
  if (child == 0) {  // readers: connect n sockets, then per round wait for "go" and time the arrivals
    ::close(go[1]);
    ::close(back[0]);
    ::close(lfd);
    std::vector<int> fds;
    int ep = ::epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < n; ++i) {
      int c = connect_to(port);
      if (c < 0) ::_exit(1);
      ::fcntl(c, F_SETFL, ::fcntl(c, F_GETFL) | O_NONBLOCK);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = static_cast<std::uint32_t>(i);
      ::epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
      fds.push_back(c);
    }
    std::vector<epoll_event> evs(1024);
    char buf[4096];
    for (int r = 0; r < rounds; ++r) {
      Clock::rep t0 = 0;
      if (::read(go[0], &t0, sizeof t0) != sizeof t0) ::_exit(1);
      std::vector<double> lat;
      while (static_cast<int>(lat.size()) < n) {
        int k = ::epoll_wait(ep, evs.data(), static_cast<int>(evs.size()), 2000);
        if (k <= 0) break;
        auto now = Clock::now();
        for (int j = 0; j < k; ++j)
          if (::recv(fds[evs[j].data.u32], buf, sizeof buf, 0) > 0) lat.push_back(ms(now - Clock::time_point(Clock::duration(t0))));
      }
      std::uint32_t cnt = static_cast<std::uint32_t>(lat.size());
      if (::write(back[1], &cnt, sizeof cnt) != sizeof cnt) ::_exit(1);
      for (double v : lat)
        if (::write(back[1], &v, sizeof v) != sizeof v) ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(go[0]);
  ::close(back[1]);
  std::vector<int> server_side;
  for (int i = 0; i < n; ++i) {
    int s = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (s < 0) throw std::runtime_error("accept");
    int one = 1;
    ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    server_side.push_back(s);
  }
  const std::string frame = "id: 7\nevent: status\ndata: {\"position\":17,\"step\":\"queued\",\"waiting\":10001}\n\n";
  std::vector<double> lat;
  for (int r = 0; r < rounds; ++r) {
    std::this_thread::sleep_for(200ms);
    Clock::rep t0 = Clock::now().time_since_epoch().count();
    if (::write(go[1], &t0, sizeof t0) != sizeof t0) throw std::runtime_error("pipe write");
    auto w0 = Clock::now();
    for (int s : server_side) ::send(s, frame.data(), frame.size(), MSG_NOSIGNAL);
    writes.push_back(ms(Clock::now() - w0));
    std::uint32_t cnt = 0;
    if (::read(back[0], &cnt, sizeof cnt) != sizeof cnt) throw std::runtime_error("child failed");
    for (std::uint32_t i = 0; i < cnt; ++i) {
      double v = 0;
      if (::read(back[0], &v, sizeof v) != sizeof v) throw std::runtime_error("child failed");
      lat.push_back(v);
    }
  }
  for (int fd : server_side) ::close(fd);
  ::close(go[1]);
  ::close(back[0]);
  ::close(lfd);
  int st = 0;
  ::waitpid(child, &st, 0);
  if (busy > 0) {
    ::kill(busy, SIGKILL);
    ::waitpid(busy, &st, 0);
  }
  return lat;
}

constexpr auto kStatusInterval = 5000ms;

int bench_streams(const std::string& binary, int streams, int broadcasts) {
  std::vector<double> lat, last, send_ms, store_ms;
  int complete = 0;
  long rss0 = 0, rss1 = 0;
  {  // plotqd and the streams are gone before the socket floor (descriptors)
    // Opening 10,000 waiting turns changes every turn's position 10,000 times: with a 5 s merge
    // interval each waiting turn stores and sends a status at most every 5 s while they pile up.
    Daemon dm(binary, "", std::to_string(kStatusInterval.count() / 1000.0));
    dm.hold_slot();
    auto trigger_sessions = make_sessions(dm.port(), "t", broadcasts);
    std::this_thread::sleep_for(1s);
    rss0 = rss_kib(dm.d->pid());
    StreamSet set(static_cast<std::size_t>(streams + broadcasts));
    set.start();
    open_waiting(dm, set, streams);
    wait_quiet(set, kStatusInterval + 1s);  // merged statuses delivered; nothing in flight
    rss1 = rss_kib(dm.d->pid());

    for (int b = 0; b < broadcasts; ++b) {
      std::vector<int> before(static_cast<std::size_t>(streams));
      for (int i = 0; i < streams; ++i) before[i] = set.streams()[i].statuses;
      int expect = set.streams()[0].last_waiting + 1;
      auto t0 = Clock::now();
      // One more turn joins the queue: every waiting turn's `waiting` grows by one.
      set.open(static_cast<std::size_t>(streams + b), dm.port(),
               message_request(trigger_sessions[b], "t" + std::to_string(b), data_turn(kQuick), false));
      auto deadline = t0 + 10s;
      int arrived = 0;
      while (Clock::now() < deadline) {
        arrived = 0;
        for (int i = 0; i < streams; ++i) arrived += set.streams()[i].statuses > before[i];
        if (arrived == streams) break;
        std::this_thread::sleep_for(2ms);
      }
      wait_quiet(set, 300ms);
      double worst = 0;
      bool all_expected = true;
      for (int i = 0; i < streams; ++i) {
        const Stream& s = set.streams()[i];
        if (s.statuses <= before[i]) continue;
        all_expected = all_expected && s.last_waiting == expect;
        double v = ms(s.status_time() - t0);
        lat.push_back(v);
        worst = std::max(worst, v);
      }
      if (arrived == streams) ++complete;
      last.push_back(worst);
      std::fprintf(stderr, "broadcast %d: %d/%d streams, last after %.1f ms%s\n", b + 1, arrived, streams, worst,
                   all_expected ? "" : " (some saw another waiting count)");
      if (arrived < streams) {
        auto lines = dm.d->stderr_lines();
        for (std::size_t k = lines.size() > 8 ? lines.size() - 8 : 0; k < lines.size(); ++k)
          std::fprintf(stderr, "  plotqd: %s\n", lines[k].substr(0, 300).c_str());
      }
      std::this_thread::sleep_for(kStatusInterval + 200ms);  // past the merge interval: the next change goes out at once
  }
    // plotqd's own account of each broadcast's loop turn (event_flush_slow): frames, then store.
    for (const auto& line : dm.d->stderr_lines()) {
      if (line.find("\"event_flush_slow\"") == std::string::npos) continue;
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || j.value("events", 0) < streams) continue;
      send_ms.push_back(j.value("send_ms", 0.0));
      store_ms.push_back(j.value("store_ms", 0.0));
    }
  }
  std::vector<double> writes, busy_writes;
  std::vector<double> floor = socket_floor(streams, 5, writes, false);
  std::vector<double> busy_floor = socket_floor(streams, 5, busy_writes, true);
  std::printf("(b) %d idle open streams (turns waiting for the slot, held by a running data job; "
              "PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S=%.0f); load avg %.1f\n",
              streams, kStatusInterval.count() / 1000.0, loadavg());
  std::printf("    plotqd RSS %ld KiB -> %ld KiB: %.2f KiB per stream\n", rss0, rss1,
              static_cast<double>(rss1 - rss0) / streams);
  std::printf("    status broadcast to all of them, %d broadcasts (%d complete): arrival - trigger p50 %.1f ms  p99 %.1f ms  "
              "max %.1f ms; last arrival per broadcast median %.1f ms\n",
              broadcasts, complete, pct(lat, 0.5), pct(lat, 0.99), pct(lat, 1.0), pct(last, 0.5));
  std::printf("    plotqd's loop turn per broadcast (event_flush_slow, %zu of them): frames written in %.1f ms, then "
              "stored in %.1f ms (medians)\n",
              send_ms.size(), pct(send_ms, 0.5), pct(store_ms, 0.5));
  std::printf("    socket floor (this process writing one frame to %d loopback sockets, 5 rounds), machine otherwise idle: "
              "p50 %.1f ms  p99 %.1f ms; the writer's %d send() calls alone took %.1f ms (median)\n",
              streams, pct(floor, 0.5), pct(floor, 0.99), streams, pct(writes, 0.5));
  std::printf("    socket floor beside a busy process (own session, nice 10, as the slot holder): p50 %.1f ms  p99 %.1f ms; "
              "send() calls %.1f ms (median)\n",
              pct(busy_floor, 0.5), pct(busy_floor, 0.99), pct(busy_writes, 0.5));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: turns_bench PLOTQD latency [streams] [turns] [--engines sqlite,postgresql] [--rounds N] [--pg CONNINFO]"
                 " | streams [streams] [broadcasts]\n");
    return 2;
  }
  raise_nofile();
  std::string binary = argv[1], mode = argv[2];
  std::vector<int> nums;
  std::string engines, pg;
  int rounds = 1;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--engines" && i + 1 < argc) engines = argv[++i];
    else if (a == "--rounds" && i + 1 < argc) rounds = std::max(1, std::atoi(argv[++i]));
    else if (a == "--pg" && i + 1 < argc) pg = argv[++i];
    else nums.push_back(std::atoi(argv[i]));
  }
  auto num = [&](std::size_t k, int def) { return nums.size() > k ? nums[k] : def; };
  try {
    if (mode == "latency" && !engines.empty())
      return bench_engines(binary, num(0, 1000), num(1, 2000), plotq::bench::parse_engines(engines), rounds, pg);
    if (mode == "latency") {
      bench_latency(binary, num(0, 1000), num(1, 2000), nullptr);
      return 0;
    }
    if (mode == "streams") return bench_streams(binary, num(0, 10000), num(1, 20));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "turns_bench: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
