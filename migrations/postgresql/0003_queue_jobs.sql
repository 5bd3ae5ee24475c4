-- 0003_queue_jobs: the cluster's queue counts itself and holds the assistant service's single jobs
-- (issue 37). Twin of ../0009_queue_jobs.sql; the comments there say what each change is for.
-- Never edit this file once landed.

ALTER TABLE queue_entries ALTER COLUMN turn_id DROP NOT NULL;
ALTER TABLE queue_entries ADD COLUMN verdict TEXT COLLATE "C" CHECK (verdict IS NULL OR length(verdict) BETWEEN 1 AND 32);
ALTER TABLE queue_entries ADD COLUMN ended_ms BIGINT;
ALTER TABLE queue_entries DROP CONSTRAINT queue_entries_state_check;
ALTER TABLE queue_entries DROP CONSTRAINT queue_entries_check;
ALTER TABLE queue_entries ADD CONSTRAINT queue_entries_state_check CHECK (state IN ('waiting', 'running', 'ended'));
ALTER TABLE queue_entries ADD CONSTRAINT queue_entries_running_check
  CHECK (state <> 'running' OR (node IS NOT NULL AND epoch IS NOT NULL AND started_ms IS NOT NULL));
ALTER TABLE queue_entries ADD CONSTRAINT queue_entries_waiting_check
  CHECK (state <> 'waiting' OR (node IS NULL AND epoch IS NULL AND started_ms IS NULL));
ALTER TABLE queue_entries ADD CONSTRAINT queue_entries_ended_check
  CHECK ((state = 'ended') = (verdict IS NOT NULL AND ended_ms IS NOT NULL));
ALTER TABLE queue_entries ADD CONSTRAINT queue_entries_ended_job_check CHECK (state <> 'ended' OR turn_id IS NULL);
CREATE INDEX queue_entries_waiting_since ON queue_entries(enqueued_ms) WHERE state = 'waiting';
CREATE INDEX queue_entries_jobs ON queue_entries(job_id) WHERE turn_id IS NULL;
-- Ended single jobs whose node never read them (it went away) are deleted after a while.
CREATE INDEX queue_entries_ended ON queue_entries(ended_ms) WHERE state = 'ended';

-- One row, rewritten by every admission, claim and end: a low fillfactor keeps its versions on one
-- page (HOT updates), and autovacuum at a small fixed count of dead versions keeps it one page.
CREATE TABLE queue_counts (
  id       BIGINT PRIMARY KEY CHECK (id = 1),
  waiting  BIGINT NOT NULL CHECK (waiting >= 0),
  running  BIGINT NOT NULL CHECK (running >= 0)
) WITH (fillfactor = 10, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
INSERT INTO queue_counts(id, waiting, running) VALUES (1,
  (SELECT count(*) FROM queue_entries WHERE state = 'waiting'),
  (SELECT count(*) FROM queue_entries WHERE state = 'running'));

-- The counts' one writer: a row trigger, so every path (admission, claim, end, cancel, rescue, a
-- turn's delete cascading to its entry) keeps them; its row lock is taken last in each of those
-- transactions, after the entries' own.
CREATE FUNCTION plotq_queue_counted() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  w bigint := 0;
  r bigint := 0;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    w := w - (OLD.state = 'waiting')::int;
    r := r - (OLD.state = 'running')::int;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    w := w + (NEW.state = 'waiting')::int;
    r := r + (NEW.state = 'running')::int;
  END IF;
  IF w <> 0 OR r <> 0 THEN
    UPDATE queue_counts SET waiting = waiting + w, running = running + r WHERE id = 1;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER queue_entries_counted AFTER INSERT OR DELETE OR UPDATE OF state ON queue_entries
  FOR EACH ROW EXECUTE FUNCTION plotq_queue_counted();

-- The fence without a row lock. FOR KEY SHARE in every write transaction of every node wrote a lock
-- into the node's row (a MultiXact when several held it at once): with thousands of admissions it
-- was a quarter of the database's time. A shared advisory lock per node does the same in memory:
-- the rescue takes it exclusively (a try: a node with a fenced write in flight is rescued at the
-- next round, after that write) before marking the node lost, and a join waits for it, so neither
-- ends what a write already fenced is about to store.
CREATE FUNCTION plotq_node_lock(node_id text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT hashtextextended('plotq:node:' || node_id, 0) $$;
CREATE OR REPLACE FUNCTION plotq_fence(node_id text, node_epoch bigint) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(plotq_node_lock(node_id));
  -- (a statement of its own: its snapshot is taken after the lock, so it sees a rescue that held it)
  PERFORM 1 FROM nodes WHERE id = node_id AND epoch = node_epoch AND state = 'live'
                         AND lease_until_ms > plotq_now_ms();
  IF NOT FOUND THEN
    RAISE EXCEPTION 'node % epoch % holds no lease', node_id, node_epoch USING ERRCODE = 'PQF01';
  END IF;
END
$$;
