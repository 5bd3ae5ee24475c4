// A step on the event loop, again and again (the idempotency prune, the WAL checkpoints): step()
// runs on the loop, between handlers, and returns the wait before its next run. An app.on_shutdown
// hook stops it, and a stopped step never runs again.
#pragma once
#include <chrono>
#include <functional>

namespace plotq::server {

struct App;

void run_periodically(App& app, std::chrono::milliseconds first, std::function<std::chrono::milliseconds()> step);

}  // namespace plotq::server
