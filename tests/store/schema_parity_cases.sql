-- Writes that schema_parity.sh runs on both engines, each alone in a transaction that is rolled
-- back, on top of schema_parity_seed.sql: a case starts at a line `-- ok: WHY` (must succeed),
-- `-- refused: WHY` (must fail on a constraint: CHECK, NOT NULL, UNIQUE or foreign key) or
-- `-- error: WHY` (must fail otherwise), and its SQL runs to the next case. Both engines must give
-- the expected answer and print the same rows for any SELECT in it (no REAL columns: the two CLIs
-- print them differently). Portable SQL only, apart from @NOT_PNG@ (a blob, as in the seed).
-- Together they exercise every CHECK of the SQLite schema through its translation
-- (migrations/postgresql/README.md).

-- ok: a plain user
INSERT INTO users(id, created_at) VALUES ('dave', '2026-01-02T03:04:05Z');
-- ok: a user id of 128 characters
INSERT INTO users(id, created_at) VALUES ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '2026-01-02T03:04:05Z');
-- refused: a user id of 129 characters
INSERT INTO users(id, created_at) VALUES ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '2026-01-02T03:04:05Z');
-- ok: a user id of 128 two-byte characters (length counts characters on both)
INSERT INTO users(id, created_at) VALUES ('éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé', '2026-01-02T03:04:05Z');
-- refused: an empty user id
INSERT INTO users(id, created_at) VALUES ('', '2026-01-02T03:04:05Z');
-- refused: a NULL user id
INSERT INTO users(id, created_at) VALUES (NULL, '2026-01-02T03:04:05Z');
-- refused: a duplicate user id
INSERT INTO users(id, created_at) VALUES ('alice', '2026-01-02T03:04:05Z');
-- ok: user ids differ by case
INSERT INTO users(id, created_at) VALUES ('ALICE', '2026-01-02T03:04:05Z');
-- refused: a time with a space for the T
INSERT INTO users(id, created_at) VALUES ('dave', '2026-01-02 03:04:05Z');
-- refused: a time with fractional seconds
INSERT INTO users(id, created_at) VALUES ('dave', '2026-01-02T03:04:05.1Z');
-- refused: a time with a newline after it (the pattern is anchored at the very end)
INSERT INTO users(id, created_at) VALUES ('dave', '2026-01-02T03:04:05Z
');
-- refused: a time with text before it
INSERT INTO users(id, created_at) VALUES ('dave', 'x2026-01-02T03:04:05Z');
-- refused: a NULL time
INSERT INTO users(id, created_at) VALUES ('dave', NULL);
-- refused: a time with a non-ASCII digit
INSERT INTO users(id, created_at) VALUES ('dave', '２026-01-02T03:04:05Z');

-- ok: a session closed with its reason
INSERT INTO sessions(id, user_id, created_at, closed_at, close_reason) VALUES ('s9', 'alice', '2026-01-02T03:04:05Z', '2026-01-02T03:04:06Z', 'user');
-- refused: closed_at without close_reason
INSERT INTO sessions(id, user_id, created_at, closed_at) VALUES ('s9', 'alice', '2026-01-02T03:04:05Z', '2026-01-02T03:04:06Z');
-- refused: close_reason without closed_at
INSERT INTO sessions(id, user_id, created_at, close_reason) VALUES ('s9', 'alice', '2026-01-02T03:04:05Z', 'user');
-- refused: an unknown close_reason
INSERT INTO sessions(id, user_id, created_at, closed_at, close_reason) VALUES ('s9', 'alice', '2026-01-02T03:04:05Z', '2026-01-02T03:04:06Z', 'bored');
-- refused: a session of an unknown user
INSERT INTO sessions(id, user_id, created_at) VALUES ('s9', 'nobody', '2026-01-02T03:04:05Z');
-- refused: data_pruned_at on an open session
UPDATE sessions SET data_pruned_at = '2026-01-02T03:04:05Z' WHERE id = 's1';
-- ok: data_pruned_at on a closed session
UPDATE sessions SET data_pruned_at = '2026-01-02T03:04:05Z' WHERE id = 's3';
-- refused: closing a session without a reason
UPDATE sessions SET closed_at = '2026-01-02T03:04:05Z' WHERE id = 's1';

-- ok: a queued turn
INSERT INTO turns(id, session_id, user_id, created_at, text_chars) VALUES ('t9', 's1', 'alice', '2026-01-02T03:04:05Z', 0);
SELECT action, scope, status FROM turns WHERE id = 't9';
-- refused: a turn whose user does not own its session
INSERT INTO turns(id, session_id, user_id, created_at, text_chars) VALUES ('t9', 's1', 'Bob', '2026-01-02T03:04:05Z', 0);
-- refused: a negative text_chars
INSERT INTO turns(id, session_id, user_id, created_at, text_chars) VALUES ('t9', 's1', 'alice', '2026-01-02T03:04:05Z', -1);
-- refused: an unknown action
INSERT INTO turns(id, session_id, user_id, created_at, text_chars, action) VALUES ('t9', 's1', 'alice', '2026-01-02T03:04:05Z', 0, 'draw');
-- refused: an unknown scope
INSERT INTO turns(id, session_id, user_id, created_at, text_chars, scope) VALUES ('t9', 's1', 'alice', '2026-01-02T03:04:05Z', 0, 'Attack');
-- refused: done without ended_at
INSERT INTO turns(id, session_id, user_id, created_at, text_chars, status, outcome) VALUES ('t9', 's1', 'alice', '2026-01-02T03:04:05Z', 0, 'done', 'ok');
-- refused: done without outcome
INSERT INTO turns(id, session_id, user_id, created_at, text_chars, status, ended_at) VALUES ('t9', 's1', 'alice', '2026-01-02T03:04:05Z', 0, 'done', '2026-01-02T03:04:05Z');
-- refused: an outcome that starts with a capital
UPDATE turns SET status = 'done', outcome = 'Ok', ended_at = '2026-01-02T03:04:05Z' WHERE id = 't3';
-- refused: an outcome that starts with a digit
UPDATE turns SET status = 'done', outcome = '1ok', ended_at = '2026-01-02T03:04:05Z' WHERE id = 't3';
-- ok: an outcome that starts lower-case and goes on with anything
UPDATE turns SET status = 'done', outcome = 'ok-Ish 2', ended_at = '2026-01-02T03:04:05Z' WHERE id = 't3';
-- refused: an outcome of 33 characters
UPDATE turns SET status = 'done', outcome = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', ended_at = '2026-01-02T03:04:05Z' WHERE id = 't3';
-- refused: an empty code
UPDATE turns SET code = '' WHERE id = 't1';
-- ok: a code
UPDATE turns SET code = 'rate_limited' WHERE id = 't1';
-- refused: events_pruned_at on a running turn
UPDATE turns SET events_pruned_at = '2026-01-02T03:04:05Z' WHERE id = 't3';
-- ok: events_pruned_at on an ended turn
UPDATE turns SET events_pruned_at = '2026-01-02T03:04:05Z' WHERE id = 't1';

-- ok: an event name with an underscore, and JSON of several shapes
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES
  ('t3', 4, 'slot_free', ' {"a": [1, 2.5e3, true, false, null], "b": "é\n\u00e9"} ', '2026-01-02T03:04:05Z'),
  ('t3', 5, 'x', 'null', '2026-01-02T03:04:05Z'),
  ('t3', 6, 'y', '-0.5', '2026-01-02T03:04:05Z'),
  ('t3', 7, 'z', '"\u0000"', '2026-01-02T03:04:05Z');
SELECT count(*), max(seq) FROM turn_events WHERE turn_id = 't3';
-- refused: an event name with a capital
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'Ready', '{}', '2026-01-02T03:04:05Z');
-- refused: an event name with a hyphen
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'slot-free', '{}', '2026-01-02T03:04:05Z');
-- refused: an event name with a digit
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'v2', '{}', '2026-01-02T03:04:05Z');
-- refused: an empty event name
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, '', '{}', '2026-01-02T03:04:05Z');
-- refused: an event name that starts with an underscore
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, '_x', '{}', '2026-01-02T03:04:05Z');
-- refused: an event name of 33 characters
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '{}', '2026-01-02T03:04:05Z');
-- refused: data that is not JSON
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'x', '{"a":1', '2026-01-02T03:04:05Z');
-- refused: data with trailing text after the JSON
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'x', '{} x', '2026-01-02T03:04:05Z');
-- refused: empty data
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'x', '', '2026-01-02T03:04:05Z');
-- refused: single-quoted JSON strings
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 4, 'x', '{''a'':1}', '2026-01-02T03:04:05Z');
-- refused: seq 0
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 0, 'x', '{}', '2026-01-02T03:04:05Z');
-- refused: a seq taken
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('t3', 1, 'x', '{}', '2026-01-02T03:04:05Z');
-- refused: an event of an unknown turn
INSERT INTO turn_events(turn_id, seq, event, data, created_at) VALUES ('nope', 1, 'x', '{}', '2026-01-02T03:04:05Z');

-- ok: a ledger row gets the next id and the defaults
INSERT INTO runs(job_id, kind, user_id, created_at, outcome) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'ok');
SELECT id, timed_out, attempts, CASE WHEN slot_wait_s = 0 AND wall_s = 0 AND cpu_s = 0 THEN 'zero' END FROM runs WHERE job_id = 'j9';
-- refused: an unknown kind
INSERT INTO runs(job_id, kind, user_id, created_at, outcome) VALUES ('j9', 'plot', 'alice', '2026-01-02T03:04:05Z', 'ok');
-- refused: refused without a refusal_code
INSERT INTO runs(job_id, kind, user_id, created_at, outcome) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'refused');
-- refused: a refusal_code on a run that ran
INSERT INTO runs(job_id, kind, user_id, created_at, outcome, refusal_code) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'ok', 'capacity');
-- refused: timed_out 2
INSERT INTO runs(job_id, kind, user_id, created_at, outcome, timed_out) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'ok', 2);
-- refused: signal 0
INSERT INTO runs(job_id, kind, user_id, created_at, outcome, signal) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'failed', 0);
-- refused: a negative wall time
INSERT INTO runs(job_id, kind, user_id, created_at, outcome, wall_s) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'ok', -0.5);
-- refused: an upper-case runtime_id
INSERT INTO runs(job_id, kind, user_id, created_at, outcome, runtime_id) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'ok', 'ABCDEF012345');
-- refused: a runtime_id of 11 hex
INSERT INTO runs(job_id, kind, user_id, created_at, outcome, runtime_id) VALUES ('j9', 'data', 'alice', '2026-01-02T03:04:05Z', 'ok', 'abcdef01234');
-- refused: a run of an unknown session
INSERT INTO runs(job_id, kind, user_id, session_id, created_at, outcome) VALUES ('j9', 'data', 'alice', 'nope', '2026-01-02T03:04:05Z', 'ok');
-- refused: a job id of 129 characters
INSERT INTO runs(job_id, kind, user_id, created_at, outcome) VALUES ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'data', 'alice', '2026-01-02T03:04:05Z', 'ok');

-- ok: a version counts its csv's bytes, not characters
INSERT INTO dataset_versions(session_id, version, source, csv, rows, cols, bytes, created_at) VALUES ('s2', 2, 'paste', 'ü', 0, 1, 2, '2026-01-02T03:04:05Z');
-- refused: bytes counted as characters
INSERT INTO dataset_versions(session_id, version, source, csv, rows, cols, bytes, created_at) VALUES ('s2', 2, 'paste', 'ü', 0, 1, 1, '2026-01-02T03:04:05Z');
-- refused: code source without code
INSERT INTO dataset_versions(session_id, version, source, csv, rows, cols, bytes, created_at) VALUES ('s2', 2, 'code', 'a', 0, 1, 1, '2026-01-02T03:04:05Z');
-- refused: a paste with code
INSERT INTO dataset_versions(session_id, version, source, csv, code, rows, cols, bytes, created_at) VALUES ('s2', 2, 'paste', 'a', 'x', 0, 1, 1, '2026-01-02T03:04:05Z');
-- refused: confirmed without confirmed_at
INSERT INTO dataset_versions(session_id, version, source, csv, rows, cols, bytes, confirmed, created_at) VALUES ('s2', 2, 'paste', 'a', 0, 1, 1, 1, '2026-01-02T03:04:05Z');
-- refused: confirmed 2
INSERT INTO dataset_versions(session_id, version, source, csv, rows, cols, bytes, confirmed, confirmed_at, created_at) VALUES ('s2', 2, 'paste', 'a', 0, 1, 1, 2, '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a parent not older than the version
INSERT INTO dataset_versions(session_id, version, source, csv, parent_version, rows, cols, bytes, created_at) VALUES ('s2', 2, 'paste', 'a', 2, 0, 1, 1, '2026-01-02T03:04:05Z');
-- refused: a parent version that does not exist
INSERT INTO dataset_versions(session_id, version, source, csv, parent_version, rows, cols, bytes, created_at) VALUES ('s2', 5, 'paste', 'a', 3, 0, 1, 1, '2026-01-02T03:04:05Z');
-- ok: a parent version that exists
INSERT INTO dataset_versions(session_id, version, source, csv, parent_version, rows, cols, bytes, created_at) VALUES ('s2', 5, 'paste', 'a', 1, 0, 1, 1, '2026-01-02T03:04:05Z');
-- refused: a version of a session without a dataset
INSERT INTO dataset_versions(session_id, version, source, csv, rows, cols, bytes, created_at) VALUES ('s3', 1, 'paste', 'a', 0, 1, 1, '2026-01-02T03:04:05Z');
-- refused: a dataset of an unknown session
INSERT INTO datasets(session_id, created_at) VALUES ('nope', '2026-01-02T03:04:05Z');

-- ok: a counter with an underscore
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('carol', 'pipeline_runs', '2026-01-02', 0);
-- refused: a counter with a digit
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('carol', 'runs2', '2026-01-02', 0);
-- refused: a counter with a capital
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('carol', 'Messages', '2026-01-02', 0);
-- refused: a day with a time
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('carol', 'messages', '2026-01-02T00:00', 0);
-- refused: a negative count
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('carol', 'messages', '2026-01-02', -1);
-- refused: a counter of an unknown user
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('nope', 'messages', '2026-01-02', 1);
-- ok: the booking upsert, the old count named with its table (a bare `count` is ambiguous on
-- PostgreSQL: the target's or excluded's)
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('alice', 'messages', '2026-01-02', 1)
  ON CONFLICT(user_id, counter, day) DO UPDATE SET count = quota_days.count + 1;
INSERT INTO quota_days(user_id, counter, day, count) VALUES ('alice', 'messages', '2026-01-02', 1)
  ON CONFLICT(user_id, counter, day) DO UPDATE SET count = quota_days.count + 1;
SELECT count FROM quota_days WHERE user_id = 'alice' AND day = '2026-01-02';
-- refused: a minute with seconds
INSERT INTO quota_minutes(user_id, counter, minute, count) VALUES ('carol', 'messages', '2026-01-02T03:04:05', 0);
-- ok: a minute
INSERT INTO quota_minutes(user_id, counter, minute, count) VALUES ('carol', 'messages', '2026-01-02T03:04', 0);
-- ok: a limit name with a digit
INSERT INTO quota_limits(name, value, updated_at) VALUES ('a1_b', 0, '2026-01-02T03:04:05Z');
-- refused: a limit name that starts with a digit
INSERT INTO quota_limits(name, value, updated_at) VALUES ('1a', 0, '2026-01-02T03:04:05Z');
-- refused: a negative limit
INSERT INTO quota_limits(name, value, updated_at) VALUES ('x', -1, '2026-01-02T03:04:05Z');

-- ok: a strike
INSERT INTO strikes(user_id, kind, at) VALUES ('carol', 'dataset', '2026-01-02T03:04:05Z');
SELECT id FROM strikes WHERE user_id = 'carol';
-- refused: a strike kind with a capital
INSERT INTO strikes(user_id, kind, at) VALUES ('carol', 'Attack', '2026-01-02T03:04:05Z');
-- refused: a strike for an unknown turn
INSERT INTO strikes(user_id, kind, at, turn_id) VALUES ('carol', 'attack', '2026-01-02T03:04:05Z', 'nope');

-- ok: an idempotency record done
INSERT INTO idempotency(job_id, kind, fingerprint, state, response, created_at, finished_at) VALUES ('j9', 'data', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'done', '[]', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a fingerprint of 63 hex
INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j9', 'data', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde', 'running', '2026-01-02T03:04:05Z');
-- refused: an upper-case fingerprint
INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j9', 'data', '0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef', 'running', '2026-01-02T03:04:05Z');
-- refused: done without a response
INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at, finished_at) VALUES ('j9', 'data', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'done', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a response that is not JSON
INSERT INTO idempotency(job_id, kind, fingerprint, state, response, created_at, finished_at) VALUES ('j9', 'data', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'done', 'ok', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a second record of a job and kind
INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j2', 'light,dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'running', '2026-01-02T03:04:05Z');
-- ok: the same job with another kind
INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) VALUES ('j2', 'dark,light', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'running', '2026-01-02T03:04:05Z');

-- ok: a sweep label with dots, hyphens and underscores
INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) VALUES ('a.b-c_1', 'bare', '/r', '*', 'dark,light', 0.5, 1, 'v', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
SELECT id, state, files_total, CASE WHEN elapsed_s = 0 THEN 'zero' END FROM sweeps WHERE label = 'a.b-c_1';
-- refused: a sweep label with a space
INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) VALUES ('a b', 'bare', '/r', '*', 'dark', 1, 1, 'v', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a sweep label with a slash
INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) VALUES ('a/b', 'bare', '/r', '*', 'dark', 1, 1, 'v', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a label taken
INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) VALUES ('nightly', 'bare', '/r', '*', 'dark', 1, 1, 'v', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a server_url on a bare sweep
INSERT INTO sweeps(label, mode, server_url, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) VALUES ('x', 'bare', 'http://h', '/r', '*', 'dark', 1, 1, 'v', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: themes with a space
INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) VALUES ('x', 'bare', '/r', '*', 'light, dark', 1, 1, 'v', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: a zero timeout
INSERT INTO sweeps(label, mode, root, glob, themes, timeout_s, jobs, plotq_version, created_at, updated_at) VALUES ('x', 'bare', '/r', '*', 'dark', 0, 1, 'v', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z');
-- refused: done without finished_at
UPDATE sweeps SET state = 'done' WHERE label = 'empty';
-- ok: a fail with its error class, and reason_class computed from it
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, error_class, wall_s, cpu_s, created_at) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'plot_error', 'ValueError', 1, 1, '2026-01-02T03:04:05Z');
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, wall_s, cpu_s, created_at) VALUES (3, 'f.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'memory', 1, 1, '2026-01-02T03:04:05Z');
SELECT path, reason_class FROM sweep_results WHERE sweep_id = 3 ORDER BY path;
-- refused: a plot_error without its class
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, wall_s, cpu_s, created_at) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'plot_error', 1, 1, '2026-01-02T03:04:05Z');
-- refused: a render whose reason is not ok
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, png_bytes, wall_s, cpu_s, created_at) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'render', 'timeout', 1, 1, 1, '2026-01-02T03:04:05Z');
-- refused: a render without png_bytes
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, wall_s, cpu_s, created_at) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'render', 'ok', 1, 1, '2026-01-02T03:04:05Z');
-- refused: a canvas on a fail
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, wall_s, cpu_s, created_at, canvas) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'memory', 1, 1, '2026-01-02T03:04:05Z', 'off');
-- refused: an unknown canvas
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, png_bytes, wall_s, cpu_s, created_at, canvas) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'render', 'ok', 1, 1, 1, '2026-01-02T03:04:05Z', 'near');
-- refused: a reason with a capital
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, wall_s, cpu_s, created_at) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'Memory', 1, 1, '2026-01-02T03:04:05Z');
-- error: a reason_class written by hand (a generated column)
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, reason_class, wall_s, cpu_s, created_at) VALUES (3, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'memory', 'memory', 1, 1, '2026-01-02T03:04:05Z');
-- refused: a result of an unknown sweep
INSERT INTO sweep_results(sweep_id, path, theme, sha256, library, outcome, reason, wall_s, cpu_s, created_at) VALUES (99, 'e.py', 'dark', '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'plotly', 'fail', 'memory', 1, 1, '2026-01-02T03:04:05Z');
-- ok: deleting a sweep deletes its results
DELETE FROM sweeps WHERE label = 'nightly';
SELECT count(*) FROM sweep_results;

-- refused: a plot whose bytes do not start with the PNG signature
UPDATE turn_plots SET png = @NOT_PNG@ WHERE turn_id = 't1';
-- refused: a plot whose byte count is wrong
UPDATE turn_plots SET bytes = 11 WHERE turn_id = 't1' AND theme = 'dark';
-- refused: a zero width
UPDATE turn_plots SET width = 0 WHERE turn_id = 't1' AND theme = 'dark';
-- refused: a second plot of a turn and theme
UPDATE turn_plots SET theme = 'light' WHERE turn_id = 't1' AND theme = 'dark';
-- refused: an unknown theme
UPDATE turn_plots SET theme = 'sepia' WHERE turn_id = 't1' AND theme = 'dark';

-- ok: deleting a turn deletes its events and plots
DELETE FROM turns WHERE id = 't3';
SELECT count(*) FROM turn_events WHERE turn_id = 't3';
-- refused: deleting a turn that the ledger names
DELETE FROM turns WHERE id = 't1';
-- refused: deleting a user that has sessions
DELETE FROM users WHERE id = 'alice';
-- refused: deleting a session that has turns
DELETE FROM sessions WHERE id = 's5';
-- ok: deleting a dataset's versions newest first, then the dataset
DELETE FROM dataset_versions WHERE session_id = 's1' AND version = 2;
DELETE FROM dataset_versions WHERE session_id = 's1' AND version = 1;
DELETE FROM datasets WHERE session_id = 's1';
-- refused: deleting a version another one derives from
DELETE FROM dataset_versions WHERE session_id = 's1' AND version = 1;

-- ok: a turn's queue entry waits, runs and goes; the counts follow each step (triggers)
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms)
  VALUES ('t5', 'Bob', 's2', 'j1', 'render', '{}', 'waiting', 'a', 1, 1);
SELECT waiting, running FROM queue_counts;
UPDATE queue_entries SET state = 'running', node = 'a', epoch = 1, started_ms = 2 WHERE turn_id = 't5';
SELECT waiting, running FROM queue_counts;
DELETE FROM queue_entries WHERE turn_id = 't5';
SELECT waiting, running FROM queue_counts;
-- ok: a single job (no turn) waits, then ends with its verdict for the node that took it, counted by neither
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms)
  VALUES (NULL, 'Bob', '', 'job-1', 'data', '{"key":"data"}', 'waiting', 'a', 1, 1);
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms)
  VALUES (NULL, 'Bob', '', 'job-2', 'data', '{"key":"data"}', 'waiting', 'a', 1, 1);
UPDATE queue_entries SET state = 'ended', verdict = 'capacity', ended_ms = 5 WHERE job_id = 'job-1';
SELECT job_id, state, verdict FROM queue_entries ORDER BY job_id;
SELECT waiting, running FROM queue_counts;
-- refused: a turn's entry cannot end in the queue (its end is its events)
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms, verdict, ended_ms)
  VALUES ('t5', 'Bob', 's2', 'j1', 'render', '{}', 'ended', 'a', 1, 1, 'capacity', 2);
-- refused: an ended entry without its verdict
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms, ended_ms)
  VALUES (NULL, 'Bob', '', 'j1', 'data', '{}', 'ended', 'a', 1, 1, 2);
-- refused: a running entry without its node
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms, epoch, started_ms)
  VALUES (NULL, 'Bob', '', 'j1', 'data', '{}', 'running', 'a', 1, 1, 1, 2);
-- refused: a waiting entry that names the node running it
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms, node)
  VALUES (NULL, 'Bob', '', 'j1', 'data', '{}', 'waiting', 'a', 1, 1, 'a');
-- refused: a verdict out of its form
INSERT INTO queue_entries(turn_id, user_id, session_id, job_id, kind, action, state, origin_node, next_seq, enqueued_ms, verdict, ended_ms)
  VALUES (NULL, 'Bob', '', 'j1', 'data', '{}', 'ended', 'a', 1, 1, '', 2);
-- refused: a second counts row
INSERT INTO queue_counts(id, waiting, running) VALUES (2, 0, 0);
-- refused: a count below zero
UPDATE queue_counts SET waiting = waiting - 1;
