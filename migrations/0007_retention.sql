-- 0007_retention: what the retention prune (store/retention.hpp, issue 17) needs to find its work
-- without rescanning what it already pruned. Never edit this file once landed; add the next number
-- instead. Conventions as in 0001_init.sql.
--
-- turns.events_pruned_at: set when the events and plots of an ended turn were deleted (the turn row
-- itself stays: the ledger, strikes and dataset versions name it). The partial index holds only the
-- ended turns still to be pruned, oldest end first, so each prune step starts at its work.
ALTER TABLE turns ADD COLUMN events_pruned_at TEXT
  CHECK (events_pruned_at IS NULL OR (status = 'done' AND events_pruned_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'));
CREATE INDEX turns_events_to_prune ON turns(ended_at) WHERE status = 'done' AND events_pruned_at IS NULL;

-- sessions.data_pruned_at: set when the dataset (every version) of a closed session was deleted.
-- The partial index holds the closed sessions still to be pruned, oldest close first.
ALTER TABLE sessions ADD COLUMN data_pruned_at TEXT
  CHECK (data_pruned_at IS NULL OR (closed_at IS NOT NULL AND data_pruned_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'));
CREATE INDEX sessions_data_to_prune ON sessions(closed_at) WHERE closed_at IS NOT NULL AND data_pruned_at IS NULL;

-- sweeps: the prune finds sweeps by their last activity (a sweep row per label: few rows, but an
-- index keeps the step a range scan like the others).
CREATE INDEX sweeps_by_update ON sweeps(updated_at);
