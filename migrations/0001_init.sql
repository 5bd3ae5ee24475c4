-- 0001_init: the first plotq schema. Never edit this file once landed; add 0002_... instead.
--
-- Conventions (a contract: admins read this database with sqlite3, see store/README.md):
--   * Every table is STRICT (SQLite >= 3.37): a value of the wrong type is refused.
--   * Times are UTC text 'YYYY-MM-DDTHH:MM:SSZ' (second precision, so text order = time order and
--     SQLite's date functions read them: date(created_at), strftime('%s', created_at)).
--   * Days are 'YYYY-MM-DD' (UTC) and minutes 'YYYY-MM-DDTHH:MM' (UTC).
--   * Booleans are INTEGER 0/1. Vocabularies are CHECKed so a misspelt value never lands.
--   * User text (messages, model output) is never stored here; only its length.
-- The runner applies this file inside one transaction and records it in schema_migrations.

-- Callers known to plotq. id is the caller-given user id (opaque). A row appears the first time a
-- user does anything; label is a free admin note (e.g. a name), never set by plotqd.
CREATE TABLE users (
  id          TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  created_at  TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  label       TEXT
) STRICT;

-- Chat sessions. A session closes once (closed_at and close_reason are set together):
-- 'refusals' (the 3rd scope refusal), 'admin', 'idle', 'user'.
CREATE TABLE sessions (
  id            TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  user_id       TEXT NOT NULL REFERENCES users(id),
  created_at    TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  closed_at     TEXT CHECK (closed_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  close_reason  TEXT CHECK (close_reason IN ('refusals', 'admin', 'idle', 'user')),
  CHECK ((closed_at IS NULL) = (close_reason IS NULL)),
  UNIQUE (id, user_id)  -- target of turns' (session_id, user_id) key: a turn's user owns its session
) STRICT;
CREATE INDEX sessions_by_user ON sessions(user_id, created_at);
CREATE INDEX sessions_open ON sessions(created_at) WHERE closed_at IS NULL;

-- Chat turns (one POST .../messages each). id is the turn's run id (shown in the SSE 'ready' event).
--   action:  none | data | plot          (what the turn asked plotq to run)
--   scope:   none | out_of_scope | attack | needs_data   (verdict set by the trusted caller;
--            out_of_scope and attack count towards the session's refusals, needs_data never does)
--   status:  queued -> running -> done   (ended_at is set exactly when done)
--   outcome: when done, a word such as ok | refused | error | cancelled | abandoned; code is the
--            refusal or error code shown to the client (rate_limited, capacity, ...), if any.
CREATE TABLE turns (
  id          TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
  session_id  TEXT NOT NULL,
  user_id     TEXT NOT NULL,
  created_at  TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  text_chars  INTEGER NOT NULL CHECK (text_chars >= 0),
  action      TEXT NOT NULL DEFAULT 'none' CHECK (action IN ('none', 'data', 'plot')),
  scope       TEXT NOT NULL DEFAULT 'none' CHECK (scope IN ('none', 'out_of_scope', 'attack', 'needs_data')),
  status      TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done')),
  outcome     TEXT CHECK (outcome GLOB '[a-z]*' AND length(outcome) <= 32),
  code        TEXT CHECK (code GLOB '[a-z]*' AND length(code) <= 64),
  ended_at    TEXT CHECK (ended_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  CHECK ((status = 'done') = (ended_at IS NOT NULL)),
  CHECK ((status = 'done') = (outcome IS NOT NULL)),
  FOREIGN KEY (session_id, user_id) REFERENCES sessions(id, user_id)
) STRICT;
CREATE INDEX turns_by_session ON turns(session_id, created_at);
CREATE INDEX turns_by_user ON turns(user_id, created_at);
CREATE INDEX turns_active ON turns(user_id) WHERE status <> 'done';

-- Every SSE event of a turn, in order, so a client reconnecting with Last-Event-ID gets what it
-- missed. seq counts from 1 per turn and is the SSE id; data is the compact JSON sent on the wire.
CREATE TABLE turn_events (
  turn_id     TEXT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL CHECK (seq >= 1),
  event       TEXT NOT NULL CHECK (event GLOB '[a-z]*' AND event NOT GLOB '*[^a-z_]*' AND length(event) <= 32),
  data        TEXT NOT NULL CHECK (json_valid(data)),
  created_at  TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  PRIMARY KEY (turn_id, seq)
) STRICT, WITHOUT ROWID;

-- The run ledger: one row per sandbox run (or refused run), appended once it ends.
--   kind:     data (a data snippet) | render (one plot render) | sweep (catalogue sweep) | raw
--   outcome:  ok | failed (ran and failed) | refused (never ran; refusal_code says why)
--   reason:   why a run failed, in the sandbox vocabulary (timeout, memory, output, exit, ...);
--             measured vs limit_value are the figure that crossed the limit (e.g. MiB, seconds).
--   slot_wait_s: time waiting for the render slot; wall_s / cpu_s: the child's wall and CPU time.
-- session_id / turn_id are set when a chat turn caused the run (NULL for /run-data and /render).
CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  job_id        TEXT NOT NULL CHECK (length(job_id) BETWEEN 1 AND 128),
  kind          TEXT NOT NULL CHECK (kind IN ('data', 'render', 'sweep', 'raw')),
  user_id       TEXT NOT NULL REFERENCES users(id),
  session_id    TEXT REFERENCES sessions(id),
  turn_id       TEXT REFERENCES turns(id),
  theme         TEXT,
  created_at    TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  slot_wait_s   REAL NOT NULL DEFAULT 0 CHECK (slot_wait_s >= 0),
  wall_s        REAL NOT NULL DEFAULT 0 CHECK (wall_s >= 0),
  cpu_s         REAL NOT NULL DEFAULT 0 CHECK (cpu_s >= 0),
  exit_code     INTEGER,
  signal        INTEGER CHECK (signal BETWEEN 1 AND 128),
  timed_out     INTEGER NOT NULL DEFAULT 0 CHECK (timed_out IN (0, 1)),
  reason        TEXT,
  measured      REAL,
  limit_value   REAL,
  max_rss_mb    REAL CHECK (max_rss_mb >= 0),
  attempts      INTEGER NOT NULL DEFAULT 1 CHECK (attempts >= 0),
  outcome       TEXT NOT NULL CHECK (outcome IN ('ok', 'failed', 'refused')),
  refusal_code  TEXT,
  CHECK ((outcome = 'refused') = (refusal_code IS NOT NULL))
) STRICT;
CREATE INDEX runs_by_time ON runs(created_at);
CREATE INDEX runs_by_user ON runs(user_id, created_at);
CREATE INDEX runs_by_job ON runs(job_id);

-- A chat session's dataset (one per session, created with its first version).
CREATE TABLE datasets (
  session_id  TEXT PRIMARY KEY REFERENCES sessions(id),
  created_at  TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z')
) STRICT;

-- Numbered versions of a session's dataset: 1, 2, 3, ... (max + 1, assigned atomically).
--   source: code (a data run made it: code holds the Python) | paste (the user pasted CSV: no code)
--   parent_version: the version this one was derived from, if any.
--   bytes is the UTF-8 size of csv; confirmed/confirmed_at are set together when the user confirms.
CREATE TABLE dataset_versions (
  session_id      TEXT NOT NULL REFERENCES datasets(session_id),
  version         INTEGER NOT NULL CHECK (version >= 1),
  source          TEXT NOT NULL CHECK (source IN ('code', 'paste')),
  csv             TEXT NOT NULL,
  code            TEXT,
  parent_version  INTEGER,
  rows            INTEGER NOT NULL CHECK (rows >= 0),
  cols            INTEGER NOT NULL CHECK (cols >= 0),
  bytes           INTEGER NOT NULL CHECK (bytes = length(CAST(csv AS BLOB))),
  confirmed       INTEGER NOT NULL DEFAULT 0 CHECK (confirmed IN (0, 1)),
  confirmed_at    TEXT CHECK (confirmed_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  turn_id         TEXT REFERENCES turns(id),
  job_id          TEXT,
  created_at      TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  PRIMARY KEY (session_id, version),
  FOREIGN KEY (session_id, parent_version) REFERENCES dataset_versions(session_id, version),
  CHECK (parent_version IS NULL OR parent_version < version),
  CHECK ((source = 'code') = (code IS NOT NULL)),
  CHECK ((confirmed = 1) = (confirmed_at IS NOT NULL))
) STRICT;

-- Per-user quota counters. counter is messages | data_runs | pipeline_runs (later issues may add
-- more names). One row per (user, counter, UTC day) and per (user, counter, UTC minute); plotqd
-- books them atomically (check and increment in one BEGIN IMMEDIATE transaction) and prunes minute
-- rows older than the current minute.
CREATE TABLE quota_days (
  user_id  TEXT NOT NULL REFERENCES users(id),
  counter  TEXT NOT NULL CHECK (counter GLOB '[a-z]*' AND counter NOT GLOB '*[^a-z_]*'),
  day      TEXT NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
  count    INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (user_id, counter, day)
) STRICT, WITHOUT ROWID;
CREATE INDEX quota_days_by_day ON quota_days(day);

CREATE TABLE quota_minutes (
  user_id  TEXT NOT NULL REFERENCES users(id),
  counter  TEXT NOT NULL CHECK (counter GLOB '[a-z]*' AND counter NOT GLOB '*[^a-z_]*'),
  minute   TEXT NOT NULL CHECK (minute GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]'),
  count    INTEGER NOT NULL CHECK (count >= 0),
  PRIMARY KEY (user_id, counter, minute)
) STRICT, WITHOUT ROWID;

-- The limits plotqd runs with, written at every start so admins and views can compare usage to
-- them. Names: <counter>_per_day, <counter>_per_minute (e.g. messages_per_day), and other limits
-- such as session_refusals, attack_strikes, attack_strike_window_s.
CREATE TABLE quota_limits (
  name        TEXT PRIMARY KEY CHECK (name GLOB '[a-z]*' AND name NOT GLOB '*[^a-z0-9_]*'),
  value       INTEGER NOT NULL CHECK (value >= 0),
  updated_at  TEXT NOT NULL CHECK (updated_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z')
) STRICT;

-- Strikes for the per-user lockout. kind: attack (a chat turn judged an attack) or dataset (the
-- dataset route's judge refused a paste); other lower-case words may be added by later issues.
CREATE TABLE strikes (
  id          INTEGER PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users(id),
  kind        TEXT NOT NULL CHECK (kind GLOB '[a-z]*' AND kind NOT GLOB '*[^a-z_]*'),
  at          TEXT NOT NULL CHECK (at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  session_id  TEXT REFERENCES sessions(id),
  turn_id     TEXT REFERENCES turns(id)
) STRICT;
CREATE INDEX strikes_by_user ON strikes(user_id, at);

-- Idempotency records for /run-data and /render: key (job_id, kind) where kind is 'data' or the
-- themes in request order joined by commas ('light,dark'). fingerprint = sha256 hex of the request
-- JSON. running -> done (response = the stored answer). Only successful answers are kept (a failed
-- run's row is deleted so a replay runs again), and only the newest few done rows (plotqd setting).
CREATE TABLE idempotency (
  id           INTEGER PRIMARY KEY,
  job_id       TEXT NOT NULL CHECK (length(job_id) BETWEEN 1 AND 128),
  kind         TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 256),
  fingerprint  TEXT NOT NULL CHECK (length(fingerprint) = 64 AND fingerprint NOT GLOB '*[^0-9a-f]*'),
  state        TEXT NOT NULL CHECK (state IN ('running', 'done')),
  response     TEXT CHECK (response IS NULL OR json_valid(response)),
  created_at   TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  finished_at  TEXT CHECK (finished_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  UNIQUE (job_id, kind),
  CHECK ((state = 'done') = (response IS NOT NULL)),
  CHECK ((state = 'done') = (finished_at IS NOT NULL))
) STRICT;
CREATE INDEX idempotency_done ON idempotency(finished_at) WHERE state = 'done';

-- ---------------------------------------------------------------------------------------------
-- Views for admins. "today" and "now" are UTC, evaluated when the query runs.

-- Per user with any counter today: usage against the limits plotqd runs with (NULL = no limit
-- written), messages this minute, and strikes today.
CREATE VIEW v_quota_today AS
WITH today AS (SELECT date('now') AS day, strftime('%Y-%m-%dT%H:%M', 'now') AS minute),
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

-- Every day's counters per user (history; the same columns as v_quota_today without the minute).
CREATE VIEW v_quota_days AS
SELECT
  user_id,
  day,
  sum(CASE WHEN counter = 'messages' THEN count ELSE 0 END) AS messages,
  sum(CASE WHEN counter = 'data_runs' THEN count ELSE 0 END) AS data_runs,
  sum(CASE WHEN counter = 'pipeline_runs' THEN count ELSE 0 END) AS pipeline_runs
FROM quota_days
GROUP BY user_id, day
ORDER BY day DESC, user_id;

-- The ledger of the last 24 hours, newest first, with the user's admin label.
CREATE VIEW v_runs_recent AS
SELECT r.id, r.created_at, r.job_id, r.kind, r.user_id, u.label AS user_label, r.session_id,
       r.turn_id, r.theme, r.outcome, r.refusal_code, r.reason, r.measured, r.limit_value,
       r.exit_code, r.signal, r.timed_out, r.slot_wait_s, r.wall_s, r.cpu_s, r.max_rss_mb, r.attempts
FROM runs r JOIN users u ON u.id = r.user_id
WHERE r.created_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 day')
ORDER BY r.created_at DESC, r.id DESC;

-- Today's ledger summed per user.
CREATE VIEW v_ledger_by_user_today AS
SELECT user_id,
       count(*) AS runs,
       sum(kind = 'data') AS data_runs,
       sum(kind = 'render') AS renders,
       sum(outcome = 'ok') AS ok,
       sum(outcome = 'failed') AS failed,
       sum(outcome = 'refused') AS refused,
       sum(timed_out) AS timed_out,
       round(sum(wall_s), 3) AS wall_s,
       round(sum(cpu_s), 3) AS cpu_s,
       round(sum(slot_wait_s), 3) AS slot_wait_s,
       max(max_rss_mb) AS max_rss_mb
FROM runs
WHERE created_at >= strftime('%Y-%m-%dT00:00:00Z', 'now')
GROUP BY user_id
ORDER BY runs DESC, user_id;

-- Open chat sessions with their activity.
CREATE VIEW v_sessions_open AS
SELECT s.id AS session_id, s.user_id, s.created_at,
       (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turns,
       (SELECT max(t.created_at) FROM turns t WHERE t.session_id = s.id) AS last_turn_at,
       (SELECT count(*) FROM turns t WHERE t.session_id = s.id AND t.scope IN ('out_of_scope', 'attack')) AS scope_refusals,
       (SELECT max(v.version) FROM dataset_versions v WHERE v.session_id = s.id) AS dataset_version
FROM sessions s
WHERE s.closed_at IS NULL
ORDER BY s.created_at DESC;

-- The latest dataset version of every session (metadata; select csv/code from dataset_versions).
CREATE VIEW v_datasets AS
SELECT v.session_id, s.user_id, v.version, c.versions, v.source, v.rows, v.cols, v.bytes,
       v.confirmed, v.confirmed_at, v.parent_version, v.created_at
FROM dataset_versions v
JOIN (SELECT session_id, max(version) AS version, count(*) AS versions
      FROM dataset_versions GROUP BY session_id) c
  ON c.session_id = v.session_id AND c.version = v.version
JOIN sessions s ON s.id = v.session_id
ORDER BY v.created_at DESC;

-- Turns still queued or running (one per user at most while plotqd runs).
CREATE VIEW v_turns_active AS
SELECT t.id AS turn_id, t.user_id, t.session_id, t.action, t.status, t.created_at,
       (SELECT max(e.seq) FROM turn_events e WHERE e.turn_id = t.id) AS events
FROM turns t
WHERE t.status <> 'done'
ORDER BY t.created_at;
