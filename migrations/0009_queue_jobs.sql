-- 0009_queue_jobs: the cluster's queue counts itself and holds the assistant service's single jobs
-- (issue 37). Twin of postgresql/0003_queue_jobs.sql. SQLite serves one node and never reads these
-- tables; they keep both engines one schema (store.schema_parity). Never edit this file once landed.
--
-- queue_entries is rebuilt (SQLite cannot drop a NOT NULL) with:
--   turn_id NULL   a single job (/run-data, /render) waits and runs through the same queue as the
--                  turns, in the same order; its request is the action, its answer the job's
--                  idempotency row;
--   state 'ended'  a single job that ended without an answer to keep (refused, cancelled, a host
--                  error: its idempotency key was forgotten so a retry runs again) waits here with
--                  its verdict until the node that took the request reads it. Turns never end
--                  here: their end is their events.
CREATE TABLE queue_entries_new (
  id                INTEGER PRIMARY KEY,
  turn_id           TEXT UNIQUE REFERENCES turns(id) ON DELETE CASCADE,
  user_id           TEXT NOT NULL,
  session_id        TEXT NOT NULL,
  job_id            TEXT NOT NULL CHECK (length(job_id) BETWEEN 1 AND 128),
  kind              TEXT NOT NULL CHECK (kind IN ('data', 'render')),
  action            TEXT NOT NULL CHECK (json_valid(action)),
  state             TEXT NOT NULL CHECK (state IN ('waiting', 'running', 'ended')),
  origin_node       TEXT NOT NULL,
  node              TEXT,
  epoch             INTEGER,
  next_seq          INTEGER NOT NULL CHECK (next_seq >= 1),
  enqueued_ms       INTEGER NOT NULL,
  started_ms        INTEGER,
  cancel_requested  INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  verdict           TEXT CHECK (verdict IS NULL OR length(verdict) BETWEEN 1 AND 32),
  ended_ms          INTEGER,
  CHECK (state <> 'running' OR (node IS NOT NULL AND epoch IS NOT NULL AND started_ms IS NOT NULL)),
  CHECK (state <> 'waiting' OR (node IS NULL AND epoch IS NULL AND started_ms IS NULL)),
  CHECK ((state = 'ended') = (verdict IS NOT NULL AND ended_ms IS NOT NULL)),
  CHECK (state <> 'ended' OR turn_id IS NULL)
);
INSERT INTO queue_entries_new(id, turn_id, user_id, session_id, job_id, kind, action, state, origin_node, node, epoch,
                              next_seq, enqueued_ms, started_ms, cancel_requested)
  SELECT id, turn_id, user_id, session_id, job_id, kind, action, state, origin_node, node, epoch, next_seq,
         enqueued_ms, started_ms, cancel_requested FROM queue_entries;
DROP TABLE queue_entries;
ALTER TABLE queue_entries_new RENAME TO queue_entries;
CREATE INDEX queue_entries_waiting ON queue_entries(id) WHERE state = 'waiting';
CREATE INDEX queue_entries_running ON queue_entries(node, epoch) WHERE state = 'running';
-- The expiry scan reads the waiting entries oldest first and stops at the first that may still wait.
CREATE INDEX queue_entries_waiting_since ON queue_entries(enqueued_ms) WHERE state = 'waiting';
CREATE INDEX queue_entries_jobs ON queue_entries(job_id) WHERE turn_id IS NULL;
-- Ended single jobs whose node never read them (it went away) are deleted after a while.
CREATE INDEX queue_entries_ended ON queue_entries(ended_ms) WHERE state = 'ended';

-- queue_counts: the waiting and running entries, counted by triggers on every change of
-- queue_entries, so an admission reads two numbers instead of counting a backlog.
CREATE TABLE queue_counts (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  waiting  INTEGER NOT NULL CHECK (waiting >= 0),
  running  INTEGER NOT NULL CHECK (running >= 0)
) STRICT;
INSERT INTO queue_counts(id, waiting, running) VALUES (1,
  (SELECT count(*) FROM queue_entries WHERE state = 'waiting'),
  (SELECT count(*) FROM queue_entries WHERE state = 'running'));
CREATE TRIGGER queue_entries_counted_insert AFTER INSERT ON queue_entries BEGIN
  UPDATE queue_counts SET waiting = waiting + (NEW.state = 'waiting'), running = running + (NEW.state = 'running');
END;
CREATE TRIGGER queue_entries_counted_delete AFTER DELETE ON queue_entries BEGIN
  UPDATE queue_counts SET waiting = waiting - (OLD.state = 'waiting'), running = running - (OLD.state = 'running');
END;
CREATE TRIGGER queue_entries_counted_update AFTER UPDATE OF state ON queue_entries WHEN OLD.state <> NEW.state BEGIN
  UPDATE queue_counts SET waiting = waiting - (OLD.state = 'waiting') + (NEW.state = 'waiting'),
                          running = running - (OLD.state = 'running') + (NEW.state = 'running');
END;
