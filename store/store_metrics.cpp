#include "store/store_metrics.hpp"

#include "common/metrics.hpp"

namespace plotq::store {
namespace {

metrics::HistogramFamily& commit_seconds() {
  static metrics::HistogramFamily& f =
      metrics::registry().histogram("plotq_store_commit_seconds", "store write transactions, begin to commit, by what they store",
                                    {"what"}, metrics::kFastSecondsBuckets);
  return f;
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* w : {"turn_events", "data_run", "render_rows", "ledger", "idempotency"}) commit_seconds().with({w});
  return true;
}();

}  // namespace

void observe_commit(std::string_view what, double seconds) { commit_seconds().with({what}).observe(seconds); }

}  // namespace plotq::store
