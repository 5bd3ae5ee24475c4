// The sandbox-run metrics (docs/metrics.md): counted where a run's ledger row is booked, so every
// run plotqd books is counted exactly once, refused ones included, and nothing else is.
#pragma once
#include <string_view>

#include "store/ledger.hpp"

namespace plotq::runs {

// After the row (and its transaction) committed. library: the render's plotting library, empty
// for data runs (label "none").
void count_run(const store::LedgerEntry& row, std::string_view library);

// Registers the families at zero (plotqd calls it at start so a scrape shows them before any run).
void register_run_metrics();

}  // namespace plotq::runs
