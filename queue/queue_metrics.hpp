// The queue's metrics (docs/metrics.md), counted by the adapter (queue_impl.hpp) as the core's
// events come out; the waiting and busy gauges are read from the queue when scraped.
#pragma once
#include "queue/queue_core.hpp"

namespace plotq::queue {
class RenderQueue;

void count_refused(HolderKind kind);                 // capacity: the position would pass capacity
void count_expired(HolderKind kind);                 // waited max_wait_s without starting
void observe_slot_wait(HolderKind kind, double seconds);  // at each grant (0 when it started at once)

// The queue's gauges, read from `q` at scrape time: call the scrape on q's io_context thread.
// A second call replaces the first (the newest queue is the one shown).
void register_queue_metrics(const RenderQueue& q);

}  // namespace plotq::queue
