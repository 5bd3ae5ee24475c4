-- 0005_runtime_ids: which runtime ran what, and whether a render kept the canvas. Never edit this
-- file once landed; add the next number instead.
--
-- runtime_id is the sandbox runtime's identity (runtime/venv/plotq-runtime.json: the first 12 hex
-- of its lock's sha256). Recorded with every ledger row and every sweep, so that two sweeps can
-- tell "the runtime changed" from "the code changed". NULL: the manifest could not be read (and
-- for rows written before this migration).
ALTER TABLE runs ADD COLUMN runtime_id TEXT
  CHECK (runtime_id IS NULL OR (length(runtime_id) = 12 AND runtime_id NOT GLOB '*[^0-9a-f]*'));
ALTER TABLE sweeps ADD COLUMN runtime_id TEXT
  CHECK (runtime_id IS NULL OR (length(runtime_id) = 12 AND runtime_id NOT GLOB '*[^0-9a-f]*'));

-- A PNG of any size is a render; canvas says whether it is on one of the two canvases: 'exact'
-- (within 16 px of 3200x1800 or 2400x2400) or 'off'. Set for renders only. Every render recorded
-- before this migration was exact (another size was then a canvas_size failure).
ALTER TABLE sweep_results ADD COLUMN canvas TEXT
  CHECK (canvas IS NULL OR (canvas IN ('exact', 'off') AND outcome = 'render'));
UPDATE sweep_results SET canvas = 'exact' WHERE outcome = 'render';

-- The views gain the new columns: dropped and made again as in 0001/0002, plus them.
DROP VIEW v_runs_recent;
CREATE VIEW v_runs_recent AS
SELECT r.id, r.created_at, r.job_id, r.kind, r.user_id, u.label AS user_label, r.session_id,
       r.turn_id, r.theme, r.outcome, r.refusal_code, r.reason, r.measured, r.limit_value,
       r.exit_code, r.signal, r.timed_out, r.slot_wait_s, r.wall_s, r.cpu_s, r.max_rss_mb, r.attempts,
       r.runtime_id
FROM runs r JOIN users u ON u.id = r.user_id
WHERE r.created_at >= strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-1 day')
ORDER BY r.created_at DESC, r.id DESC;

DROP VIEW v_sweeps;
CREATE VIEW v_sweeps AS
SELECT s.label, s.mode, s.state, s.themes, s.files_total,
       (SELECT count(DISTINCT r.path) FROM sweep_results r WHERE r.sweep_id = s.id) AS files_done,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.outcome = 'render') AS renders,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.outcome = 'fail') AS fails,
       round(s.elapsed_s, 1) AS elapsed_s, s.server_url, s.root, s.created_at, s.finished_at,
       s.runtime_id,
       (SELECT count(*) FROM sweep_results r WHERE r.sweep_id = s.id AND r.canvas = 'off') AS renders_off_canvas
FROM sweeps s
ORDER BY s.created_at DESC, s.id DESC;

-- Renders off the canvas per sweep and library: how far the drawings drift.
CREATE VIEW v_sweep_canvas AS
SELECT s.label, r.library, count(*) AS renders,
       sum(CASE WHEN r.canvas = 'off' THEN 1 ELSE 0 END) AS off_canvas,
       min(CASE WHEN r.canvas = 'off' THEN r.width END) AS min_off_width,
       max(CASE WHEN r.canvas = 'off' THEN r.width END) AS max_off_width
FROM sweep_results r JOIN sweeps s ON s.id = r.sweep_id
WHERE r.outcome = 'render'
GROUP BY s.label, r.library;
