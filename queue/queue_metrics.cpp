#include "queue/queue_metrics.hpp"

#include <string>

#include "common/metrics.hpp"
#include "queue/render_queue.hpp"

namespace plotq::queue {
namespace {

struct QueueMetrics {
  metrics::CounterFamily& refused;
  metrics::CounterFamily& expired;
  metrics::HistogramFamily& wait;
};

QueueMetrics& m() {
  auto& r = metrics::registry();
  static QueueMetrics x = [&] {
    QueueMetrics q{
        r.counter("plotq_queue_capacity_refusals_total", "submits refused because the queue was at capacity",
                  {"holder"}),
        r.counter("plotq_queue_max_wait_expiries_total", "waiting entries that expired after the max wait",
                  {"holder"}),
        r.histogram("plotq_queue_slot_wait_seconds", "time from submit to the render slot's grant", {"holder"},
                    metrics::kSecondsBuckets),
    };
    for (const char* k : {"turn", "job"}) {  // present at zero from the start
      q.refused.with({k});
      q.expired.with({k});
      q.wait.with({k});
    }
    return q;
  }();
  return x;
}

}  // namespace

void count_refused(HolderKind kind) { m().refused.with({to_string(kind)}).inc(); }
void count_expired(HolderKind kind) { m().expired.with({to_string(kind)}).inc(); }
void observe_slot_wait(HolderKind kind, double seconds) { m().wait.with({to_string(kind)}).observe(seconds); }

void register_queue_metrics(const RenderQueue& q) {
  m();
  auto& r = metrics::registry();
  r.collect("plotq_queue_waiting", metrics::Type::gauge, "entries waiting for the render slot", {"holder"}, [&q] {
    QueueStatus s = q.status();
    return std::vector<metrics::Sample>{{{"turn"}, double(s.waiting_turns)}, {{"job"}, double(s.waiting_jobs)}};
  });
  r.collect("plotq_queue_slot_busy", metrics::Type::gauge, "1 while the render slot is held, per slot", {"slot"}, [&q] {
    QueueStatus s = q.status();
    std::vector<metrics::Sample> out;
    for (int i = 0; i < s.slots; ++i) out.push_back({{std::to_string(i)}, i < s.in_flight ? 1.0 : 0.0});
    return out;
  });
}

}  // namespace plotq::queue
