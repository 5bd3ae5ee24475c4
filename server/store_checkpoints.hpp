// plotqd's WAL checkpoints (store/checkpoint.hpp): a timer on the event loop runs a PASSIVE
// checkpoint on the loop's own writer connection every PLOTQ_DB_CHECKPOINT_INTERVAL_MS, with the
// connection's auto-checkpoint off. One connection commits and checkpoints, so SQLite's WAL-reset
// race (two connections) cannot happen inside plotqd. A failure is logged as db_checkpoint_failed
// and the next tick tries again.
#pragma once

namespace plotq::server {

struct App;

// Turns the writer's auto-checkpoint off and arms the timer when the interval is > 0; an
// app.on_shutdown hook stops it (the store's close checkpoints what is left).
void start_store_checkpoints(App& app);

}  // namespace plotq::server
