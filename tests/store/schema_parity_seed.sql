-- The rows schema_parity.sh loads into both engines before it compares every view's rows. Portable
-- SQL only (the same text runs on SQLite and PostgreSQL). Placeholders, filled in by the script
-- from one clock reading: @NOW@ (UTC 'YYYY-MM-DDTHH:MM:SSZ'), @AGO_1H@, @AGO_2H@, @AGO_3H@,
-- @DAY_IN@ (23h58m ago: inside the views' last 24 hours), @DAY_OUT@ (24h02m ago: outside),
-- @OLD@ (3 days ago), @TODAY@, @OLD_DAY@ (3 days ago), @TODAY_START@ (today 00:00:00Z), @MINUTE@,
-- @OLD_MINUTE@; and @PNG@ (a PNG signature and two bytes), the one thing the two spell
-- differently: X'...' on SQLite, '\x...'::bytea on PostgreSQL. Sort keys of ordered views are
-- distinct, so row order is defined; user ids of both cases and a non-ASCII one check that text
-- sorts by byte on both.

INSERT INTO users(id, created_at, label) VALUES
  ('alice', @OLD@, 'Alice A.'),
  ('Bob', @OLD@, NULL),
  ('carol', @OLD@, 'C'),
  ('émile', @OLD@, 'É');

INSERT INTO sessions(id, user_id, created_at, closed_at, close_reason, data_pruned_at) VALUES
  ('s1', 'alice', @AGO_3H@, NULL, NULL, NULL),
  ('s2', 'Bob', @AGO_2H@, NULL, NULL, NULL),
  ('s3', 'alice', @OLD@, @AGO_1H@, 'admin', NULL),
  ('s4', 'carol', @DAY_OUT@, @DAY_IN@, 'idle', @AGO_1H@),
  ('s5', 'émile', @AGO_1H@, NULL, NULL, NULL);

INSERT INTO turns(id, session_id, user_id, created_at, text_chars, action, scope, status, outcome, code, ended_at, events_pruned_at) VALUES
  ('t1', 's1', 'alice', @AGO_3H@, 10, 'data', 'none', 'done', 'ok', NULL, @AGO_2H@, NULL),
  ('t2', 's1', 'alice', @AGO_2H@, 0, 'plot', 'out_of_scope', 'done', 'refused', 'scope', @AGO_2H@, @AGO_1H@),
  ('t3', 's1', 'alice', @AGO_1H@, 7, 'plot', 'none', 'running', NULL, NULL, NULL, NULL),
  ('t4', 's2', 'Bob', @DAY_IN@, 3, 'none', 'attack', 'done', 'refused', 'attack', @DAY_IN@, NULL),
  ('t5', 's2', 'Bob', @NOW@, 5, 'none', 'needs_data', 'queued', NULL, NULL, NULL, NULL),
  ('t6', 's5', 'émile', @AGO_1H@, 1, 'data', 'none', 'done', 'error', 'rate_limited', @AGO_1H@, NULL),
  ('t7', 's3', 'alice', @OLD@, 2, 'none', 'none', 'queued', NULL, NULL, NULL, NULL);

INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES
  ('t1', 1, 'ready', '{"run":"t1"}', @AGO_3H@),
  ('t1', 2, 'done', '{"ok":true}', @AGO_2H@),
  ('t3', 1, 'ready', '{}', @AGO_1H@),
  ('t3', 2, 'status', '{"queue":2,"note":"é"}', @AGO_1H@),
  ('t3', 3, 'slot_wait', '[1, 2.5, null]', @AGO_1H@),
  ('t5', 1, 'ready', '"x"', @NOW@);

-- wall/cpu/slot times whose sums round at a half (0.15, 0.25, 1.0005, ...) check that both
-- engines round the same way.
INSERT INTO runs(job_id, kind, user_id, session_id, turn_id, theme, created_at, slot_wait_s, wall_s, cpu_s,
                 exit_code, signal, timed_out, reason, measured, limit_value, max_rss_mb, attempts, outcome,
                 refusal_code, runtime_id) VALUES
  ('j1', 'data', 'alice', 's1', 't1', NULL, @TODAY_START@, 0, 0.15, 0.1, 0, NULL, 0, NULL, NULL, NULL, 12.5, 1, 'ok', NULL, 'abcdef012345'),
  ('j2', 'render', 'alice', NULL, NULL, 'light', @AGO_1H@, 0.25, 1.0005, 0.5, NULL, 9, 1, 'timeout', 31.0, 30, 100, 2, 'failed', NULL, NULL),
  ('j3', 'render', 'alice', NULL, NULL, 'dark', @AGO_1H@, 0.35, 2.0015, 1.25, 1, NULL, 0, 'exit', NULL, NULL, NULL, 1, 'failed', NULL, 'abcdef012345'),
  ('j4', 'data', 'Bob', 's2', 't4', NULL, @DAY_IN@, 0, 0, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL, 0, 'refused', 'capacity', NULL),
  ('j5', 'sweep', 'Bob', NULL, NULL, 'light', @DAY_OUT@, 0, 3, 2, 0, NULL, 0, NULL, NULL, NULL, 50, 1, 'ok', NULL, NULL),
  ('j6', 'raw', 'émile', NULL, NULL, NULL, @NOW@, 0.125, 0.0625, 0.03125, 0, NULL, 0, NULL, NULL, NULL, 7, 1, 'ok', NULL, NULL),
  ('j7', 'data', 'carol', NULL, NULL, NULL, @OLD@, 0, 1, 1, 0, NULL, 0, NULL, NULL, NULL, 1, 1, 'ok', NULL, NULL);

INSERT INTO datasets(session_id, created_at) VALUES
  ('s1', @AGO_3H@),
  ('s2', @AGO_2H@),
  ('s4', @DAY_OUT@);

INSERT INTO dataset_versions(session_id, version, source, csv, code, parent_version, rows, cols, bytes, confirmed,
                             confirmed_at, turn_id, job_id, created_at) VALUES
  ('s1', 1, 'code', 'x,y;1,2', 'print(1)', NULL, 1, 2, 7, 0, NULL, 't1', 'j1', @AGO_3H@),
  ('s1', 2, 'paste', 'é,ü', NULL, 1, 0, 2, 5, 1, @AGO_1H@, NULL, NULL, @AGO_2H@),
  ('s2', 1, 'paste', 'a', NULL, NULL, 0, 1, 1, 0, NULL, NULL, NULL, @AGO_1H@),
  ('s4', 1, 'paste', '', NULL, NULL, 0, 0, 0, 1, @DAY_OUT@, NULL, NULL, @DAY_OUT@);

INSERT INTO quota_days(user_id, counter, day, count) VALUES
  ('alice', 'messages', @TODAY@, 3),
  ('alice', 'data_runs', @TODAY@, 1),
  ('alice', 'messages', @OLD_DAY@, 9),
  ('Bob', 'messages', @TODAY@, 2),
  ('Bob', 'pipeline_runs', @TODAY@, 4),
  ('carol', 'messages', @OLD_DAY@, 1),
  ('émile', 'other_counter', @TODAY@, 6);

INSERT INTO quota_minutes(user_id, counter, minute, count) VALUES
  ('alice', 'messages', @MINUTE@, 2),
  ('Bob', 'messages', @OLD_MINUTE@, 1);

INSERT INTO quota_limits(name, value, updated_at) VALUES
  ('messages_per_day', 50, @NOW@),
  ('messages_per_minute', 5, @NOW@),
  ('data_runs_per_day', 20, @NOW@),
  ('session_refusals', 3, @NOW@);

INSERT INTO strikes(user_id, kind, at, session_id, turn_id) VALUES
  ('alice', 'attack', @AGO_1H@, 's1', 't2'),
  ('alice', 'dataset', @TODAY_START@, NULL, NULL),
  ('Bob', 'attack', @OLD@, 's2', 't4');

INSERT INTO idempotency(job_id, kind, fingerprint, state, response, created_at, finished_at) VALUES
  ('j1', 'data', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'done', '{"ok":1}', @AGO_1H@, @AGO_1H@),
  ('j2', 'light,dark', 'fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210', 'running', NULL, @NOW@, NULL);

INSERT INTO sweeps(label, mode, server_url, root, glob, libraries, themes, timeout_s, jobs, state, files_total,
                   elapsed_s, pid, plotq_version, created_at, updated_at, finished_at, runtime_id) VALUES
  ('nightly', 'sandbox', 'http://127.0.0.1:8080', '/cat', '**/*.py', NULL, 'light,dark', 30, 2, 'done', 3, 12.25, 77, '1.0', @OLD@, @AGO_1H@, @AGO_1H@, 'abcdef012345'),
  ('bare-1.x', 'bare', NULL, '/cat', '*.py', 'matplotlib,plotly', 'light', 10.5, 1, 'interrupted', 2, 0.05, NULL, '1.0', @AGO_2H@, @AGO_2H@, NULL, NULL),
  ('empty', 'sandbox', NULL, '/cat', '*.py', NULL, 'dark', 1, 1, 'running', 0, 0, NULL, '1.0', @NOW@, @NOW@, NULL, NULL);

INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, error_class, exit_code, signal,
                          width, height, png_bytes, detail, wall_s, cpu_s, max_rss_mb, created_at, canvas) VALUES
  (1, 'a.py', 'light', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'render', 'ok', NULL, 0, NULL, 3200, 1800, 1000, NULL, 1, 1, 80, @AGO_1H@, 'exact'),
  (1, 'a.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'render', 'ok', NULL, 0, NULL, 3000, 1700, 900, NULL, 1, 1, 80, @AGO_1H@, 'off'),
  (1, 'b.py', 'light', '1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'matplotlib', 'render', 'ok', NULL, 0, NULL, 2400, 2390, 500, NULL, 2, 1.5, NULL, @AGO_1H@, 'off'),
  (1, 'c.py', 'light', '2123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'matplotlib', 'fail', 'plot_error', 'ModuleNotFoundError', 1, NULL, NULL, NULL, NULL, NULL, 0.5, 0.4, NULL, @AGO_1H@, NULL),
  (1, 'c.py', 'dark', '2123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'matplotlib', 'fail', 'plot_error', 'ModuleNotFoundError', 1, NULL, NULL, NULL, NULL, NULL, 0.5, 0.4, NULL, @AGO_1H@, NULL),
  (2, 'a.py', 'light', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'timeout', NULL, NULL, 9, NULL, NULL, NULL, NULL, 10.5, 10, NULL, @AGO_2H@, NULL),
  (2, 'd.py', 'light', '3123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'bokeh', 'fail', 'canvas_size', NULL, 0, NULL, 10, 10, NULL, '10x10', 1, 1, NULL, @AGO_2H@, NULL);

INSERT INTO turn_plots(turn_id, theme, width, height, bytes, png, created_at) VALUES
  ('t1', 'light', 3200, 1800, 10, @PNG@, @AGO_2H@),
  ('t1', 'dark', 3200, 1800, 10, @PNG@, @AGO_1H@),
  ('t6', 'light', 10, 10, 10, @PNG@, @DAY_OUT@);
