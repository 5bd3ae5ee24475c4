-- 0001_init (PostgreSQL 15): the schema of SQLite's migrations/0001..0007 together, the same
-- tables, columns (names and order), constraints, indexes and views. Never edit this file once
-- landed; add 0002_... here (and the SQLite twin in migrations/) instead. Every translation from the
-- SQLite text and why: README.md in this folder. tests/store/schema_parity.sh checks both agree.
--
-- Conventions (as migrations/0001_init.sql; the schema is a documented contract, admins read it
-- with psql):
--   * Times are UTC text 'YYYY-MM-DDTHH:MM:SSZ', days 'YYYY-MM-DD', minutes 'YYYY-MM-DDTHH:MM',
--     formatted by plotq, exactly as on SQLite (not timestamptz: both engines hold the same text).
--   * Every text column is COLLATE "C": comparisons and ORDER BY are by byte, as SQLite's BINARY,
--     whatever collation the database was created with.
--   * Integers are BIGINT (SQLite's are 64-bit); booleans are BIGINT 0/1 with a CHECK, as on
--     SQLite, so both engines hand back the same values. SQLite's INTEGER PRIMARY KEY is an
--     identity column (the store inserts without id and reads it back with RETURNING id).
--   * GLOB checks are anchored regular expressions; json_valid() below is SQLite's, for CHECKs.
-- The runner applies this file inside one transaction and records it in schema_migrations, which
-- it creates itself. Nothing here names a schema: the file lands in the first one of search_path.

-- SQLite's json_valid(): true when the text parses as JSON, NULL for NULL. A CHECK that calls it
-- fails as a check violation (SQLSTATE 23514), as on SQLite, instead of the cast's syntax error.
-- The parse is the json type's (syntax only, the text is not rewritten).
CREATE FUNCTION json_valid(t text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  PERFORM t::json;
  RETURN true;
EXCEPTION WHEN data_exception THEN
  RETURN false;
END
$$;

-- Callers known to plotq (migrations/0001_init.sql).
CREATE TABLE users (
  id          TEXT COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  created_at  TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  label       TEXT COLLATE "C"
);

-- Chat sessions (0001; data_pruned_at from 0007).
CREATE TABLE sessions (
  id              TEXT COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  user_id         TEXT COLLATE "C" NOT NULL REFERENCES users(id),
  created_at      TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  closed_at       TEXT COLLATE "C" CHECK (closed_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  close_reason    TEXT COLLATE "C" CHECK (close_reason IN ('refusals', 'admin', 'idle', 'user')),
  data_pruned_at  TEXT COLLATE "C",
  CHECK (data_pruned_at IS NULL OR (closed_at IS NOT NULL AND data_pruned_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$')),
  CHECK ((closed_at IS NULL) = (close_reason IS NULL)),
  UNIQUE (id, user_id)  -- target of turns' (session_id, user_id) key: a turn's user owns its session
);
CREATE INDEX sessions_by_user ON sessions(user_id, created_at);
CREATE INDEX sessions_open ON sessions(created_at) WHERE closed_at IS NULL;
CREATE INDEX sessions_data_to_prune ON sessions(closed_at) WHERE closed_at IS NOT NULL AND data_pruned_at IS NULL;

-- Chat turns (0001; events_pruned_at from 0007).
CREATE TABLE turns (
  id                TEXT COLLATE "C" PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  session_id        TEXT COLLATE "C" NOT NULL,
  user_id           TEXT COLLATE "C" NOT NULL,
  created_at        TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  text_chars        BIGINT NOT NULL CHECK (text_chars >= 0),
  action            TEXT COLLATE "C" NOT NULL DEFAULT 'none' CHECK (action IN ('none', 'data', 'plot')),
  scope             TEXT COLLATE "C" NOT NULL DEFAULT 'none' CHECK (scope IN ('none', 'out_of_scope', 'attack', 'needs_data')),
  status            TEXT COLLATE "C" NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done')),
  outcome           TEXT COLLATE "C" CHECK (outcome ~ '^[a-z]' AND length(outcome) <= 32),
  code              TEXT COLLATE "C" CHECK (code ~ '^[a-z]' AND length(code) <= 64),
  ended_at          TEXT COLLATE "C" CHECK (ended_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  events_pruned_at  TEXT COLLATE "C",
  CHECK (events_pruned_at IS NULL OR (status = 'done' AND events_pruned_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$')),
  CHECK ((status = 'done') = (ended_at IS NOT NULL)),
  CHECK ((status = 'done') = (outcome IS NOT NULL)),
  FOREIGN KEY (session_id, user_id) REFERENCES sessions(id, user_id)
);
CREATE INDEX turns_by_session ON turns(session_id, created_at);
CREATE INDEX turns_by_user ON turns(user_id, created_at);
CREATE INDEX turns_active ON turns(user_id) WHERE status <> 'done';
CREATE INDEX turns_events_to_prune ON turns(ended_at) WHERE status = 'done' AND events_pruned_at IS NULL;

-- Every SSE event of a turn, in order (0001, rebuilt by 0004 with the same columns and key). The
-- hottest table: a queue broadcast appends one row per waiting turn in one commit and the
-- retention prune deletes them in batches. Autovacuum at a twentieth of the table instead of a
-- fifth keeps the dead rows of those batches, and the visibility map that index-only max(seq)
-- lookups read, from lagging a large table by millions of rows.
CREATE TABLE turn_events (
  turn_id     TEXT COLLATE "C" NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  seq         BIGINT NOT NULL CHECK (seq >= 1),
  event       TEXT COLLATE "C" NOT NULL CHECK (event ~ '^[a-z]' AND event !~ '[^a-z_]' AND length(event) <= 32),
  data        TEXT COLLATE "C" NOT NULL CHECK (json_valid(data)),
  created_at  TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  PRIMARY KEY (turn_id, seq)
) WITH (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_insert_scale_factor = 0.05,
        autovacuum_analyze_scale_factor = 0.05);

-- The run ledger (0001; runtime_id from 0005).
CREATE TABLE runs (
  id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  job_id        TEXT COLLATE "C" NOT NULL CHECK (length(job_id) BETWEEN 1 AND 128),
  kind          TEXT COLLATE "C" NOT NULL CHECK (kind IN ('data', 'render', 'sweep', 'raw')),
  user_id       TEXT COLLATE "C" NOT NULL REFERENCES users(id),
  session_id    TEXT COLLATE "C" REFERENCES sessions(id),
  turn_id       TEXT COLLATE "C" REFERENCES turns(id),
  theme         TEXT COLLATE "C",
  created_at    TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  slot_wait_s   DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (slot_wait_s >= 0),
  wall_s        DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (wall_s >= 0),
  cpu_s         DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (cpu_s >= 0),
  exit_code     BIGINT,
  signal        BIGINT CHECK (signal BETWEEN 1 AND 128),
  timed_out     BIGINT NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
  reason        TEXT COLLATE "C",
  measured      DOUBLE PRECISION,
  limit_value   DOUBLE PRECISION,
  max_rss_mb    DOUBLE PRECISION CHECK (max_rss_mb >= 0),
  attempts      BIGINT NOT NULL DEFAULT 1 CHECK (attempts >= 0),
  outcome       TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('ok', 'failed', 'refused')),
  refusal_code  TEXT COLLATE "C",
  runtime_id    TEXT COLLATE "C" CHECK (runtime_id IS NULL OR (length(runtime_id) = 12 AND runtime_id !~ '[^0-9a-f]')),
  CHECK ((outcome = 'refused') = (refusal_code IS NOT NULL))
);
CREATE INDEX runs_by_time ON runs(created_at);
CREATE INDEX runs_by_user ON runs(user_id, created_at);
CREATE INDEX runs_by_job ON runs(job_id);

-- A chat session's dataset and its numbered versions (0001).
CREATE TABLE datasets (
  session_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions(id),
  created_at  TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$')
);

CREATE TABLE dataset_versions (
  session_id      TEXT COLLATE "C" NOT NULL REFERENCES datasets(session_id),
  version         BIGINT NOT NULL CHECK (version >= 1),
  source          TEXT COLLATE "C" NOT NULL CHECK (source IN ('code', 'paste')),
  csv             TEXT COLLATE "C" NOT NULL,
  code            TEXT COLLATE "C",
  parent_version  BIGINT,
  rows            BIGINT NOT NULL CHECK (rows >= 0),
  cols            BIGINT NOT NULL CHECK (cols >= 0),
  bytes           BIGINT NOT NULL CHECK (bytes = octet_length(csv)),
  confirmed       BIGINT NOT NULL DEFAULT 0 CHECK (confirmed IN (0, 1)),
  confirmed_at    TEXT COLLATE "C" CHECK (confirmed_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  turn_id         TEXT COLLATE "C" REFERENCES turns(id),
  job_id          TEXT COLLATE "C",
  created_at      TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  PRIMARY KEY (session_id, version),
  FOREIGN KEY (session_id, parent_version) REFERENCES dataset_versions(session_id, version),
  CHECK (parent_version IS NULL OR parent_version < version),
  CHECK ((source = 'code') = (code IS NOT NULL)),
  CHECK ((confirmed = 1) = (confirmed_at IS NOT NULL))
);

-- Per-user quota counters per UTC day and minute, and the limits plotqd runs with (0001).
CREATE TABLE quota_days (
  user_id  TEXT COLLATE "C" NOT NULL REFERENCES users(id),
  counter  TEXT COLLATE "C" NOT NULL CHECK (counter ~ '^[a-z]' AND counter !~ '[^a-z_]'),
  day      TEXT COLLATE "C" NOT NULL CHECK (day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
  count    BIGINT NOT NULL CHECK (count >= 0),
  PRIMARY KEY (user_id, counter, day)
);
CREATE INDEX quota_days_by_day ON quota_days(day);

CREATE TABLE quota_minutes (
  user_id  TEXT COLLATE "C" NOT NULL REFERENCES users(id),
  counter  TEXT COLLATE "C" NOT NULL CHECK (counter ~ '^[a-z]' AND counter !~ '[^a-z_]'),
  minute   TEXT COLLATE "C" NOT NULL CHECK (minute ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}$'),
  count    BIGINT NOT NULL CHECK (count >= 0),
  PRIMARY KEY (user_id, counter, minute)
);

CREATE TABLE quota_limits (
  name        TEXT COLLATE "C" PRIMARY KEY CHECK (name ~ '^[a-z]' AND name !~ '[^a-z0-9_]'),
  value       BIGINT NOT NULL CHECK (value >= 0),
  updated_at  TEXT COLLATE "C" NOT NULL CHECK (updated_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$')
);

-- Strikes for the per-user lockout (0001).
CREATE TABLE strikes (
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  user_id     TEXT COLLATE "C" NOT NULL REFERENCES users(id),
  kind        TEXT COLLATE "C" NOT NULL CHECK (kind ~ '^[a-z]' AND kind !~ '[^a-z_]'),
  at          TEXT COLLATE "C" NOT NULL CHECK (at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  session_id  TEXT COLLATE "C" REFERENCES sessions(id),
  turn_id     TEXT COLLATE "C" REFERENCES turns(id)
);
CREATE INDEX strikes_by_user ON strikes(user_id, at);

-- Idempotency records for /run-data and /render (0001).
CREATE TABLE idempotency (
  id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  job_id       TEXT COLLATE "C" NOT NULL CHECK (length(job_id) BETWEEN 1 AND 128),
  kind         TEXT COLLATE "C" NOT NULL CHECK (length(kind) BETWEEN 1 AND 256),
  fingerprint  TEXT COLLATE "C" NOT NULL CHECK (length(fingerprint) = 64 AND fingerprint !~ '[^0-9a-f]'),
  state        TEXT COLLATE "C" NOT NULL CHECK (state IN ('running', 'done')),
  response     TEXT COLLATE "C" CHECK (response IS NULL OR json_valid(response)),
  created_at   TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  finished_at  TEXT COLLATE "C" CHECK (finished_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  UNIQUE (job_id, kind),
  CHECK ((state = 'done') = (response IS NOT NULL)),
  CHECK ((state = 'done') = (finished_at IS NOT NULL))
);
CREATE INDEX idempotency_done ON idempotency(finished_at) WHERE state = 'done';

-- Catalogue sweeps (0002; runtime_id from 0005, sweeps_by_update from 0007).
CREATE TABLE sweeps (
  id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  label          TEXT COLLATE "C" NOT NULL UNIQUE
                 CHECK (length(label) BETWEEN 1 AND 64 AND label !~ '[^A-Za-z0-9._-]'),
  mode           TEXT COLLATE "C" NOT NULL CHECK (mode IN ('sandbox', 'bare')),
  server_url     TEXT COLLATE "C",
  root           TEXT COLLATE "C" NOT NULL CHECK (length(root) BETWEEN 1 AND 4096),  -- the swept directory (absolute)
  glob           TEXT COLLATE "C" NOT NULL CHECK (length(glob) BETWEEN 1 AND 512),   -- relative to root
  libraries      TEXT COLLATE "C" CHECK (length(libraries) BETWEEN 1 AND 512),       -- comma list; NULL = every library
  themes         TEXT COLLATE "C" NOT NULL CHECK (themes IN ('light', 'dark', 'light,dark', 'dark,light')),
  timeout_s      DOUBLE PRECISION NOT NULL CHECK (timeout_s > 0),
  jobs           BIGINT NOT NULL CHECK (jobs >= 1),
  state          TEXT COLLATE "C" NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'interrupted', 'done')),
  files_total    BIGINT NOT NULL DEFAULT 0 CHECK (files_total >= 0),  -- matching files at the last (re)start
  elapsed_s      DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (elapsed_s >= 0),
  pid            BIGINT,                          -- the plotq process of the current/last session
  plotq_version  TEXT COLLATE "C" NOT NULL,
  created_at     TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  updated_at     TEXT COLLATE "C" NOT NULL CHECK (updated_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  finished_at    TEXT COLLATE "C" CHECK (finished_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  runtime_id     TEXT COLLATE "C" CHECK (runtime_id IS NULL OR (length(runtime_id) = 12 AND runtime_id !~ '[^0-9a-f]')),
  CHECK (server_url IS NULL OR (mode = 'sandbox' AND length(server_url) <= 256)),
  CHECK ((state = 'done') = (finished_at IS NOT NULL))
);
CREATE INDEX sweeps_by_update ON sweeps(updated_at);

-- One row per file and theme of a sweep (0002; canvas from 0005). reason_class is computed as on
-- SQLite; PostgreSQL 15 has stored generated columns only (SQLite's is VIRTUAL).
CREATE TABLE sweep_results (
  sweep_id      BIGINT NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  path          TEXT COLLATE "C" NOT NULL CHECK (length(path) BETWEEN 1 AND 4096),  -- relative to sweeps.root
  theme         TEXT COLLATE "C" NOT NULL CHECK (theme IN ('light', 'dark')),
  sha256        TEXT COLLATE "C" NOT NULL CHECK (length(sha256) = 64 AND sha256 !~ '[^0-9a-f]'),
  library       TEXT COLLATE "C" NOT NULL CHECK (length(library) BETWEEN 1 AND 64),
  outcome       TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('render', 'fail')),
  reason        TEXT COLLATE "C" NOT NULL CHECK (reason ~ '^[a-z]' AND reason !~ '[^a-z0-9_]' AND length(reason) <= 32),
  error_class   TEXT COLLATE "C" CHECK (length(error_class) BETWEEN 1 AND 128),
  reason_class  TEXT COLLATE "C" GENERATED ALWAYS AS (CASE WHEN reason = 'plot_error' THEN error_class ELSE reason END) STORED,
  exit_code     BIGINT,
  signal        BIGINT,
  width         BIGINT CHECK (width >= 0),
  height        BIGINT CHECK (height >= 0),
  png_bytes     BIGINT CHECK (png_bytes >= 0),
  detail        TEXT COLLATE "C" CHECK (length(detail) <= 200),
  wall_s        DOUBLE PRECISION NOT NULL CHECK (wall_s >= 0),
  cpu_s         DOUBLE PRECISION NOT NULL CHECK (cpu_s >= 0),
  max_rss_mb    DOUBLE PRECISION CHECK (max_rss_mb >= 0),
  created_at    TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  canvas        TEXT COLLATE "C",
  PRIMARY KEY (sweep_id, path, theme),
  CHECK ((outcome = 'render') = (reason = 'ok')),
  CHECK ((reason = 'plot_error') = (error_class IS NOT NULL)),
  CHECK ((outcome = 'render') = (png_bytes IS NOT NULL)),
  CHECK (canvas IS NULL OR (canvas IN ('exact', 'off') AND outcome = 'render'))
);
CREATE INDEX sweep_results_by_reason ON sweep_results(sweep_id, outcome, reason);

-- The PNGs a chat turn's plot action rendered (0003).
CREATE TABLE turn_plots (
  id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  turn_id     TEXT COLLATE "C" NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  theme       TEXT COLLATE "C" NOT NULL CHECK (theme IN ('light', 'dark')),
  width       BIGINT NOT NULL CHECK (width BETWEEN 1 AND 100000),
  height      BIGINT NOT NULL CHECK (height BETWEEN 1 AND 100000),
  bytes       BIGINT NOT NULL CHECK (bytes = octet_length(png) AND bytes > 0),
  png         BYTEA NOT NULL CHECK (substr(png, 1, 8) = '\x89504e470d0a1a0a'::bytea),
  created_at  TEXT COLLATE "C" NOT NULL CHECK (created_at ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'),
  UNIQUE (turn_id, theme)
);

-- ---------------------------------------------------------------------------------------------
-- Views for admins (the same names, columns and rows as SQLite's). "today" and "now" are UTC, taken
-- once per statement (statement_timestamp(), as SQLite's 'now'; now() would be the transaction's
-- start). Sums of integers are cast back to BIGINT (PostgreSQL's sum(bigint) is numeric) and
-- rounded reals back to DOUBLE PRECISION (round(x, n) takes numeric only).

-- Per user with any counter today: usage against the limits plotqd runs with (0001).
CREATE VIEW v_quota_today AS
WITH today AS (
  SELECT to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
         to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS minute
),
users_today AS (
  SELECT DISTINCT q.user_id FROM quota_days q, today WHERE q.day = today.day
)
SELECT
  u.user_id AS user_id,
  today.day AS day,
  coalesce((SELECT count FROM quota_days WHERE user_id = u.user_id AND counter = 'messages' AND day = today.day), 0) AS messages,
  (SELECT value FROM quota_limits WHERE name = 'messages_per_day') AS messages_limit,
  coalesce((SELECT count FROM quota_minutes WHERE user_id = u.user_id AND counter = 'messages' AND minute = today.minute), 0) AS messages_this_minute,
  (SELECT value FROM quota_limits WHERE name = 'messages_per_minute') AS messages_per_minute_limit,
  coalesce((SELECT count FROM quota_days WHERE user_id = u.user_id AND counter = 'data_runs' AND day = today.day), 0) AS data_runs,
  (SELECT value FROM quota_limits WHERE name = 'data_runs_per_day') AS data_runs_limit,
  coalesce((SELECT count FROM quota_days WHERE user_id = u.user_id AND counter = 'pipeline_runs' AND day = today.day), 0) AS pipeline_runs,
  (SELECT value FROM quota_limits WHERE name = 'pipeline_runs_per_day') AS pipeline_runs_limit,
  (SELECT count(*) FROM strikes s WHERE s.user_id = u.user_id AND substr(s.at, 1, 10) = today.day) AS strikes_today
FROM users_today u, today
ORDER BY u.user_id;

-- Every day's counters per user (0001).
CREATE VIEW v_quota_days AS
SELECT
  user_id,
  day,
  sum(CASE WHEN counter = 'messages' THEN count ELSE 0 END)::bigint AS messages,
  sum(CASE WHEN counter = 'data_runs' THEN count ELSE 0 END)::bigint AS data_runs,
  sum(CASE WHEN counter = 'pipeline_runs' THEN count ELSE 0 END)::bigint AS pipeline_runs
FROM quota_days
GROUP BY user_id, day
ORDER BY day DESC, user_id;

-- The ledger of the last 24 hours, newest first, with the user's admin label (0001, 0005).
CREATE VIEW v_runs_recent AS
SELECT r.id, r.created_at, r.job_id, r.kind, r.user_id, u.label AS user_label, r.session_id,
       r.turn_id, r.theme, r.outcome, r.refusal_code, r.reason, r.measured, r.limit_value,
       r.exit_code, r.signal, r.timed_out, r.slot_wait_s, r.wall_s, r.cpu_s, r.max_rss_mb, r.attempts,
       r.runtime_id
FROM runs r JOIN users u ON u.id = r.user_id
WHERE r.created_at >= to_char((statement_timestamp() AT TIME ZONE 'UTC') - interval '1 day', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
ORDER BY r.created_at DESC, r.id DESC;

-- Today's ledger summed per user (0001).
CREATE VIEW v_ledger_by_user_today AS
SELECT user_id,
       count(*) AS runs,
       sum((kind = 'data')::integer) AS data_runs,
       sum((kind = 'render')::integer) AS renders,
       sum((outcome = 'ok')::integer) AS ok,
       sum((outcome = 'failed')::integer) AS failed,
       sum((outcome = 'refused')::integer) AS refused,
       sum(timed_out)::bigint AS timed_out,
       round(sum(wall_s)::numeric, 3)::double precision AS wall_s,
       round(sum(cpu_s)::numeric, 3)::double precision AS cpu_s,
       round(sum(slot_wait_s)::numeric, 3)::double precision AS slot_wait_s,
       max(max_rss_mb) AS max_rss_mb
FROM runs
WHERE created_at >= to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T00:00:00Z"')
GROUP BY user_id
ORDER BY runs DESC, user_id;

-- Open chat sessions with their activity (0001).
CREATE VIEW v_sessions_open AS
SELECT s.id AS session_id, s.user_id, s.created_at,
       (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turns,
       (SELECT max(t.created_at) FROM turns t WHERE t.session_id = s.id) AS last_turn_at,
       (SELECT count(*) FROM turns t WHERE t.session_id = s.id AND t.scope IN ('out_of_scope', 'attack')) AS scope_refusals,
       (SELECT max(v.version) FROM dataset_versions v WHERE v.session_id = s.id) AS dataset_version
FROM sessions s
WHERE s.closed_at IS NULL
ORDER BY s.created_at DESC;

-- The latest dataset version of every session (0001).
CREATE VIEW v_datasets AS
SELECT v.session_id, s.user_id, v.version, c.versions, v.source, v.rows, v.cols, v.bytes,
       v.confirmed, v.confirmed_at, v.parent_version, v.created_at
FROM dataset_versions v
JOIN (SELECT session_id, max(version) AS version, count(*) AS versions
      FROM dataset_versions GROUP BY session_id) c
  ON c.session_id = v.session_id AND c.version = v.version
JOIN sessions s ON s.id = v.session_id
ORDER BY v.created_at DESC;

-- Turns still queued or running (0001, made again by 0004).
CREATE VIEW v_turns_active AS
SELECT t.id AS turn_id, t.user_id, t.session_id, t.action, t.status, t.created_at,
       (SELECT max(e.seq) FROM turn_events e WHERE e.turn_id = t.id) AS events
FROM turns t
WHERE t.status <> 'done'
ORDER BY t.created_at;

-- One row per sweep: its progress and counts (0002, 0005).
CREATE VIEW v_sweeps AS
SELECT s.label, s.mode, s.state, s.themes, s.files_total,
       (SELECT count(DISTINCT r.path) FROM sweep_results r WHERE r.sweep_id = s.id) AS files_done,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.outcome = 'render') AS renders,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.outcome = 'fail') AS fails,
       round(s.elapsed_s::numeric, 1)::double precision AS elapsed_s, s.server_url, s.root, s.created_at, s.finished_at,
       s.runtime_id,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.canvas = 'off') AS renders_off_canvas
FROM sweeps s
ORDER BY s.created_at DESC, s.id DESC;

-- Failures of every sweep grouped by reason class (0002).
CREATE VIEW v_sweep_reasons AS
SELECT s.label, r.reason, r.reason_class, count(*) AS rows, count(DISTINCT r.path) AS files
FROM sweep_results r JOIN sweeps s ON s.id = r.sweep_id
WHERE r.outcome = 'fail'
GROUP BY s.label, r.reason, r.reason_class;

-- Renders off the canvas per sweep and library (0005).
CREATE VIEW v_sweep_canvas AS
SELECT s.label, r.library, count(*) AS renders,
       sum(CASE WHEN r.canvas = 'off' THEN 1 ELSE 0 END) AS off_canvas,
       min(CASE WHEN r.canvas = 'off' THEN r.width END) AS min_off_width,
       max(CASE WHEN r.canvas = 'off' THEN r.width END) AS max_off_width
FROM sweep_results r JOIN sweeps s ON s.id = r.sweep_id
WHERE r.outcome = 'render'
GROUP BY s.label, r.library;

-- Plots of the last 24 hours without the image bytes, newest first (0003).
CREATE VIEW v_turn_plots_recent AS
SELECT p.turn_id, t.session_id, t.user_id, p.theme, p.width, p.height, p.bytes, p.created_at
FROM turn_plots p JOIN turns t ON t.id = p.turn_id
WHERE p.created_at >= to_char((statement_timestamp() AT TIME ZONE 'UTC') - interval '1 day', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
ORDER BY p.created_at DESC, p.id DESC;
