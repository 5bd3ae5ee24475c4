// Queue benchmark (an executable, not a test): a position broadcast to N waiting entries (default
// 10,000) through the RenderQueue adapter on a real io_context, and the memory one waiting entry
// costs. Baseline in the same run: calling the same N callbacks straight from a vector, i.e. the
// irreducible cost of N std::function calls, so the ratio shows what the queue adds.
//
//   queue_bench [waiters=10000] [changes=300]
#include <malloc.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/stats.hpp"
#include "queue/render_queue.hpp"

using namespace plotq::queue;
using Clock = std::chrono::steady_clock;
using plotq::bench::pct;

namespace {

struct Counter {
  long expected = 0;
  long seen = 0;
  Clock::time_point last;
  SlotLease* holder = nullptr;  // where a granted head keeps its lease (it becomes the holder)
};

// Stands in for one SSE stream: the callbacks capture one pointer to it (as a server would capture
// a weak_ptr/pointer to its stream), which fits std::function's small buffer.
struct Sink {
  Counter* counter;
  Position last;
};

void on_pos(Sink* s, Position p) {
  s->last = p;
  if (++s->counter->seen == s->counter->expected) s->counter->last = Clock::now();
}

Callbacks callbacks_for(Sink* s) {
  Callbacks c;
  c.on_position = [s](Position p) { on_pos(s, p); };
  c.on_granted = [s](SlotLease l) { *s->counter->holder = std::move(l); };
  c.on_refused = [s](std::string_view) { s->last = {}; };
  c.on_expired = [s] { s->last = {}; };
  return c;
}


long rss_kib() {
  std::ifstream f("/proc/self/statm");
  long pages = 0, res = 0;
  f >> pages >> res;
  return res * 4;
}

// Bytes in use from malloc: small blocks plus mmap'd large ones (a 10,000-entry buffer is one).
std::size_t heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  const int N = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int R = argc > 2 ? std::atoi(argv[2]) : 300;

  boost::asio::io_context io;
  Config cfg;
  cfg.slots = 1;
  cfg.starts_per_window = 1000000;
  cfg.rate_window_s = 1;
  cfg.max_wait_s = 3600;  // capacity far above N: the bench is about broadcast, not refusal
  cfg.heartbeat_s = 3600;
  RenderQueue q(io, cfg);
  SlotLease holder;
  Counter counter;
  counter.holder = &holder;

  // Sinks exist before the measurement: they are the server's, not the queue's.
  std::vector<std::unique_ptr<Sink>> sinks;
  for (int i = 0; i < N + R + 1; ++i) sinks.push_back(std::make_unique<Sink>(Sink{&counter, {}}));
  std::vector<Ticket> tickets;
  tickets.reserve(std::size_t(N + R + 1));

  Callbacks hc;
  hc.on_granted = [&](SlotLease l) { holder = std::move(l); };
  tickets.push_back(q.submit({}, hc));
  io.poll();
  io.restart();

  // --- memory per waiting entry ---
  malloc_trim(0);
  const long rss0 = rss_kib();
  const auto heap0 = heap_bytes();
  for (int i = 0; i < N; ++i)
    tickets.push_back(q.submit(Holder{HolderKind::turn, "user-0000", "turn 0123456789abcdef"}, callbacks_for(sinks[std::size_t(i)].get())));
  const auto heap1 = heap_bytes();
  counter.expected = N;
  counter.seen = 0;
  io.poll();  // the first broadcast (also sizes the queue's reused snapshot buffer)
  io.restart();
  const auto heap2 = heap_bytes();
  const long rss1 = rss_kib();
  if (counter.seen != N) {
    std::fprintf(stderr, "first broadcast reached %ld of %d\n", counter.seen, N);
    return 1;
  }

  // --- broadcast latency: change -> last position callback of the broadcast it causes ---
  std::vector<double> lat_ms;
  int next_sink = N;
  std::size_t front = 1;  // tickets[front] is the head of the queue
  for (int r = 0; r < R; ++r) {
    const int waiting_before = q.status().waiting;
    counter.seen = 0;
    const auto t0 = Clock::now();
    switch (r % 3) {
      case 0:  // the head withdraws (a user cancels)
        tickets[front++].cancel();
        counter.expected = waiting_before - 1;
        break;
      case 1:  // a new turn queues at the back
        tickets.push_back(q.submit({}, callbacks_for(sinks[std::size_t(next_sink++)].get())));
        counter.expected = waiting_before + 1;
        break;
      case 2:  // the holder ends its turn: the head is granted, everyone moves up
        holder.release();
        ++front;
        counter.expected = waiting_before - 1;
        break;
    }
    while (counter.seen < counter.expected) {
      if (io.run_one() == 0) {
        std::fprintf(stderr, "change %d: broadcast reached %ld of %ld\n", r, counter.seen, counter.expected);
        return 1;
      }
    }
    lat_ms.push_back(ms(counter.last - t0));
    io.poll();  // drain the rest of the turn (on_granted etc.)
    io.restart();
  }

  // --- baseline: the same number of the same callbacks called straight from a vector ---
  std::vector<std::function<void(Position)>> direct;
  for (int i = 0; i < N; ++i) {
    Sink* s = sinks[std::size_t(i)].get();
    direct.emplace_back([s](Position p) { on_pos(s, p); });
  }
  std::vector<double> base_ms;
  for (int r = 0; r < R; ++r) {
    counter.expected = N;
    counter.seen = 0;
    const auto t0 = Clock::now();
    int p = 0;
    for (auto& f : direct) f(Position{++p, N});
    base_ms.push_back(ms(counter.last - t0));
  }

  const double per_entry_heap = double(heap1 - heap0) / N;
  const double per_entry_heap_bc = double(heap2 - heap0) / N;
  const double per_entry_rss = double(rss1 - rss0) * 1024.0 / N;
  std::printf("queue_bench: %d waiters, %d changes (withdraw head / submit at back / grant head, in turn)\n", N, R);
  std::printf("  broadcast, change -> last callback:  p50 %.3f ms  p99 %.3f ms  max %.3f ms\n", pct(lat_ms, 0.5),
              pct(lat_ms, 0.99), pct(lat_ms, 1.0));
  std::printf("  baseline, %d direct calls:        p50 %.3f ms  p99 %.3f ms\n", N, pct(base_ms, 0.5), pct(base_ms, 0.99));
  std::printf("  ratio p50 queue/baseline:            %.1fx\n", pct(lat_ms, 0.5) / pct(base_ms, 0.5));
  std::printf("  heap per waiting entry:              %.0f B (after submit), %.0f B (incl. broadcast buffer)\n",
              per_entry_heap, per_entry_heap_bc);
  std::printf("  RSS per waiting entry:               %.0f B\n", per_entry_rss);
  return 0;
}
