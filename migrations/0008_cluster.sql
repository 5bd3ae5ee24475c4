-- 0008_cluster: many plotqd nodes on one PostgreSQL (issue 37). Twin of postgresql/0002_cluster.sql.
-- SQLite serves one node and never reads these tables; they exist so both engines keep one schema
-- (store.schema_parity). Never edit this file once landed; add the next number instead.
--
-- nodes: one row per plotqd of a cluster. epoch grows each time the node (re)joins, so a write
-- fenced by (id, epoch) from before a pause can never match again. Lease times are milliseconds
-- of the database's clock: every node compares against the same clock.
CREATE TABLE nodes (
  id              TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  epoch           INTEGER NOT NULL CHECK (epoch >= 1),
  state           TEXT NOT NULL CHECK (state IN ('live', 'lost', 'left')),
  slots           INTEGER NOT NULL CHECK (slots >= 1),
  capacity        INTEGER NOT NULL CHECK (capacity >= 0),
  address         TEXT NOT NULL DEFAULT '',
  joined_ms       INTEGER NOT NULL,
  heartbeat_ms    INTEGER NOT NULL,
  lease_until_ms  INTEGER NOT NULL
);

-- queue_entries: a turn's sandbox work waiting for, or holding, a slot somewhere in the cluster.
-- The row is deleted when its turn ends, so the table holds only live work (the ledger is runs).
CREATE TABLE queue_entries (
  id                INTEGER PRIMARY KEY,
  turn_id           TEXT NOT NULL UNIQUE REFERENCES turns(id) ON DELETE CASCADE,
  user_id           TEXT NOT NULL,
  session_id        TEXT NOT NULL,
  job_id            TEXT NOT NULL CHECK (length(job_id) BETWEEN 1 AND 128),
  kind              TEXT NOT NULL CHECK (kind IN ('data', 'render')),
  action            TEXT NOT NULL CHECK (json_valid(action)),
  state             TEXT NOT NULL CHECK (state IN ('waiting', 'running')),
  origin_node       TEXT NOT NULL,
  node              TEXT,
  epoch             INTEGER,
  next_seq          INTEGER NOT NULL CHECK (next_seq >= 1),
  enqueued_ms       INTEGER NOT NULL,
  started_ms        INTEGER,
  cancel_requested  INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  CHECK ((state = 'running') = (node IS NOT NULL AND epoch IS NOT NULL AND started_ms IS NOT NULL))
);
CREATE INDEX queue_entries_waiting ON queue_entries(id) WHERE state = 'waiting';
CREATE INDEX queue_entries_running ON queue_entries(node, epoch) WHERE state = 'running';

-- turns.node, node_epoch: the node (and its epoch) that writes the turn's events now: the one that
-- admitted it, then the one that claimed its work. NULL on a single node.
ALTER TABLE turns ADD COLUMN node TEXT;
ALTER TABLE turns ADD COLUMN node_epoch INTEGER;
CREATE INDEX turns_by_node ON turns(node, node_epoch) WHERE status <> 'done';
