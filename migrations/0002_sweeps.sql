-- 0002_sweeps: catalogue sweeps (plotq sweep run|report|diff|list, issue 7). Never edit this file
-- once landed; add 0003_... instead. Conventions as in 0001_init.sql (STRICT, UTC text times,
-- CHECKed vocabularies). Source code and program output are never stored: only the file's path,
-- its sha256, and plotq's own classification of what happened.

-- One row per sweep, named by its label. mode: 'sandbox' (the render path of POST /render, in
-- process, or against a running plotqd when server_url is set) or 'bare' (plain /usr/bin/python3,
-- no sandbox: the control). state: running -> interrupted (Ctrl-C, or the process died: pid tells
-- which) -> running again on --resume -> done. elapsed_s adds up the wall time of every session.
CREATE TABLE sweeps (
  id             INTEGER PRIMARY KEY,
  label          TEXT NOT NULL UNIQUE
                 CHECK (length(label) BETWEEN 1 AND 64 AND label NOT GLOB '*[^A-Za-z0-9._-]*'),
  mode           TEXT NOT NULL CHECK (mode IN ('sandbox', 'bare')),
  server_url     TEXT CHECK (server_url IS NULL OR (mode = 'sandbox' AND length(server_url) <= 256)),
  root           TEXT NOT NULL CHECK (length(root) BETWEEN 1 AND 4096),  -- the swept directory (absolute)
  glob           TEXT NOT NULL CHECK (length(glob) BETWEEN 1 AND 512),   -- relative to root
  libraries      TEXT CHECK (length(libraries) BETWEEN 1 AND 512),       -- comma list; NULL = every library
  themes         TEXT NOT NULL CHECK (themes IN ('light', 'dark', 'light,dark', 'dark,light')),
  timeout_s      REAL NOT NULL CHECK (timeout_s > 0),
  jobs           INTEGER NOT NULL CHECK (jobs >= 1),
  state          TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'interrupted', 'done')),
  files_total    INTEGER NOT NULL DEFAULT 0 CHECK (files_total >= 0),  -- matching files at the last (re)start
  elapsed_s      REAL NOT NULL DEFAULT 0 CHECK (elapsed_s >= 0),
  pid            INTEGER,                          -- the plotq process of the current/last session
  plotq_version  TEXT NOT NULL,
  created_at     TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  updated_at     TEXT NOT NULL CHECK (updated_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  finished_at    TEXT CHECK (finished_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  CHECK ((state = 'done') = (finished_at IS NOT NULL))
) STRICT;

-- One row per file and theme of a sweep. A file's themes are written together in one
-- transaction once all of them finished, so a file is either fully recorded or not at all (what
-- --resume relies on). outcome: 'render' (exit 0 and a PNG of the right canvas) or 'fail'.
-- reason: 'ok' for a render, else plotq's fixed reason (plot_error, no_output, canvas_size,
-- timeout, memory, guard_refused, runtime_unavailable, ...). error_class: the exception class of a
-- plot error (ModuleNotFoundError, pandas.errors.ParserError, unlisted, ...), never its message.
-- reason_class is what `plotq sweep diff` compares: the class for a plot error, else the reason.
-- detail: plotq's own short note (canvas_size: the measured "WxH"), never program output.
CREATE TABLE sweep_results (
  sweep_id      INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  path          TEXT NOT NULL CHECK (length(path) BETWEEN 1 AND 4096),  -- relative to sweeps.root
  theme         TEXT NOT NULL CHECK (theme IN ('light', 'dark')),
  sha256        TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
  library       TEXT NOT NULL CHECK (length(library) BETWEEN 1 AND 64),
  outcome       TEXT NOT NULL CHECK (outcome IN ('render', 'fail')),
  reason        TEXT NOT NULL CHECK (reason GLOB '[a-z]*' AND reason NOT GLOB '*[^a-z0-9_]*' AND length(reason) <= 32),
  error_class   TEXT CHECK (length(error_class) BETWEEN 1 AND 128),
  reason_class  TEXT GENERATED ALWAYS AS (CASE WHEN reason = 'plot_error' THEN error_class ELSE reason END) VIRTUAL,
  exit_code     INTEGER,
  signal        INTEGER,
  width         INTEGER CHECK (width >= 0),
  height        INTEGER CHECK (height >= 0),
  png_bytes     INTEGER CHECK (png_bytes >= 0),
  detail        TEXT CHECK (length(detail) <= 200),
  wall_s        REAL NOT NULL CHECK (wall_s >= 0),
  cpu_s         REAL NOT NULL CHECK (cpu_s >= 0),
  max_rss_mb    REAL CHECK (max_rss_mb >= 0),
  created_at    TEXT NOT NULL CHECK (created_at GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z'),
  PRIMARY KEY (sweep_id, path, theme),
  CHECK ((outcome = 'render') = (reason = 'ok')),
  CHECK ((reason = 'plot_error') = (error_class IS NOT NULL)),
  CHECK ((outcome = 'render') = (png_bytes IS NOT NULL))
) STRICT;
CREATE INDEX sweep_results_by_reason ON sweep_results(sweep_id, outcome, reason);

-- One row per sweep: its progress and counts (rows are file x theme).
CREATE VIEW v_sweeps AS
SELECT s.label, s.mode, s.state, s.themes, s.files_total,
       (SELECT count(DISTINCT r.path) FROM sweep_results r WHERE r.sweep_id = s.id) AS files_done,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.outcome = 'render') AS renders,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.outcome = 'fail') AS fails,
       round(s.elapsed_s, 1) AS elapsed_s, s.server_url, s.root, s.created_at, s.finished_at
FROM sweeps s
ORDER BY s.created_at DESC, s.id DESC;

-- Failures of every sweep grouped by reason class.
CREATE VIEW v_sweep_reasons AS
SELECT s.label, r.reason, r.reason_class, count(*) AS rows, count(DISTINCT r.path) AS files
FROM sweep_results r JOIN sweeps s ON s.id = r.sweep_id
WHERE r.outcome = 'fail'
GROUP BY s.label, r.reason, r.reason_class;
