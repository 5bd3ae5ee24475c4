"""What must hold after every restart of a killed plotqd (issue 16, section 1). Each check appends
its failures (plain sentences) to a list and returns how many acknowledged answers it looked at.
The store is a SQLite file or a PostgreSQL target (pg.py): the same SQL reads both."""
import json
import shutil
import sqlite3

import pg
from plotq_client import Stream, read_to_done, request
from workload import TRANSPORT


def open_db(target):
    if pg.is_target(target):
        return pg.Conn(target)
    db = sqlite3.connect(target, timeout=30)
    db.row_factory = sqlite3.Row
    return db


def verdict(name, work, fail, most=40):
    """Prints the failures (the first `most`), keeps the work dir when there are any (else removes
    it) and gives the exit status."""
    for f in fail[:most]:
        print("FAIL " + f)
    if len(fail) > most:
        print("FAIL ... and %d more" % (len(fail) - most))
    if fail:
        print("%s: plotqd's log kept in %s" % (name, work))
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if fail else 0


def store_whole(db, fail):
    # PostgreSQL checks every constraint and key at each statement and keeps its own pages whole
    # (its WAL is replayed after a crash): there is no file of ours to check afterwards.
    if isinstance(db, pg.Conn):
        return
    rows = [r[0] for r in db.execute("PRAGMA integrity_check")]
    if rows != ["ok"]:
        fail.append("integrity_check: %r" % rows[:5])
    fk = db.execute("PRAGMA foreign_key_check").fetchall()
    if fk:
        fail.append("foreign_key_check: %d rows, first %r" % (len(fk), tuple(fk[0])))


def nothing_stuck(db, fail):
    n = db.execute("SELECT count(*) FROM turns WHERE status <> 'done'").fetchone()[0]
    if n:
        fail.append("%d turns still queued or running after the restart" % n)
    n = db.execute("SELECT count(*) FROM idempotency WHERE state = 'running'").fetchone()[0]
    if n:
        fail.append("%d idempotency claims still running after the restart" % n)
    # Every turn that ended, however it ended, has its done stored: a resume always ends.
    rows = db.execute("SELECT id, outcome FROM turns t WHERE status = 'done' AND NOT EXISTS "
                      "(SELECT 1 FROM turn_events e WHERE e.turn_id = t.id AND e.event = 'done')").fetchall()
    if rows:
        fail.append("%d ended turns without a stored done, first %s (%s)" % (len(rows), rows[0][0], rows[0][1]))


def _events(db, turn):
    return [(r[0], r[1], r[2]) for r in db.execute(
        "SELECT seq, event, data FROM turn_events WHERE turn_id = ? ORDER BY seq", (turn,))]


def _as_read(events):
    return [(e["id"], e["event"], json.dumps(e["data"], sort_keys=True)) for e in events]


def _normal(stored):
    return [(s, e, json.dumps(json.loads(d), sort_keys=True)) for s, e, d in stored]


def turns_kept(db, rec, fail, sample=None):
    """A finished turn's stored events are the ones its stream read: same ids, same data."""
    checked = 0
    turns = list(rec.turns)
    for t in (sample(turns) if sample else turns):
        if _normal(_events(db, t["turn"])) != _as_read(t["events"]):
            fail.append("turn %s (%s, round %d): stored events differ from its stream"
                        % (t["turn"], t["action"], t["round"]))
        checked += 1
    return checked


def turns_replayed(port, rec, round_no, fail):
    """This round's finished turns, read again over HTTP from id 0: the same events."""
    checked = 0
    for t in [t for t in rec.turns if t["round"] == round_no]:
        got = _resume(port, t, 0, fail)
        if got is not None and _as_read(got) != _as_read(t["events"]):
            fail.append("turn %s: a replay from 0 differs from its stream" % t["turn"])
        checked += 1
    return checked


def _resume(port, t, after, fail):
    try:
        st = Stream(port, "GET", "/v1/sessions/%s/turns/%s/events" % (t["session"], t["turn"]),
                    user=t["user"], headers={"Last-Event-ID": str(after)}, timeout=30)
    except TRANSPORT as e:
        fail.append("turn %s: resume failed: %r" % (t["turn"], e))
        return None
    if st.status != 200:
        fail.append("turn %s: resume answered %d %s" % (t["turn"], st.status, st.error))
        return None
    seen = []
    try:
        ok = read_to_done(st, seen)
    except TRANSPORT:
        ok = False
    finally:
        st.close()
    if not ok:
        fail.append("turn %s: the resume after %d ended without done" % (t["turn"], after))
    return seen


def interrupted_resumed(db, port, rec, round_no, fail):
    """A turn cut by the kill: a resume after its last read id gets the stored rest and a done (an
    abandoned turn's says error{abandoned}); what it stored up to that id is what the stream read."""
    checked = 0
    for t in [t for t in rec.interrupted if t["round"] == round_no]:
        last = t["events"][-1]["id"]
        stored = {s: (s, e, d) for s, e, d in _normal(_events(db, t["turn"]))}
        for ev in _as_read(t["events"]):
            if ev[0] in stored and stored[ev[0]] != ev:
                fail.append("turn %s: stored event %d differs from the one its stream read" % (t["turn"], ev[0]))
        rest = _resume(port, t, last, fail)
        if rest:
            if any(e["id"] <= last for e in rest):
                fail.append("turn %s: the resume after %d sent an id at or below it" % (t["turn"], last))
            ended = db.execute("SELECT outcome FROM turns WHERE id = ?", (t["turn"],)).fetchone()
            errors = [e["data"].get("code") for e in rest if e["event"] == "error"]
            if ended and ended[0] == "abandoned" and "abandoned" not in errors:
                fail.append("turn %s: abandoned, but its resume has no error{abandoned}: %r"
                            % (t["turn"], [e["event"] for e in rest]))
        checked += 1
    return checked


def answers_kept(port, rec, which, fail, sample=None):
    """The same request again gets the same stored answer (never a second run)."""
    table = getattr(rec, which)
    ids = sorted(table)
    if sample is not None:
        ids = sample(ids)
    for job_id in ids:
        path, body = rec.requests[job_id]
        try:
            status, answer = request(port, "POST", path, body, user="svc", timeout=120)
        except TRANSPORT as e:
            fail.append("%s %s: replay failed: %r" % (which, job_id, e))
            continue
        if status != 200 or answer != table[job_id]:
            fail.append("%s %s: replay answered %d with %s answer" % (which, job_id, status,
                                                                    "another" if status == 200 else "no"))
    return len(ids)


def ledger_once(db, rec, fail):
    """One ok ledger row per job that ended: per job id and theme, and per turn, never two."""
    twice = db.execute("SELECT job_id, kind, theme, count(*) FROM runs WHERE outcome = 'ok' "
                       "GROUP BY job_id, kind, theme, turn_id HAVING count(*) > 1").fetchall()
    for r in twice[:5]:
        fail.append("ran twice: job %s (%s, %s): %d ok rows" % tuple(r))
    missing = 0
    for job_id in list(rec.run_data) + list(rec.render):
        if db.execute("SELECT count(*) FROM runs WHERE job_id = ?", (job_id,)).fetchone()[0] < 1:
            missing += 1
            fail.append("job %s: acknowledged but no ledger row" % job_id)
    return len(twice), missing


def versions_kept(db, port, rec, round_no, fail):
    """A dataset version announced has its rows (and its confirm, when that was answered)."""
    for v in list(rec.versions):
        row = db.execute("SELECT rows, confirmed FROM dataset_versions WHERE session_id = ? AND version = ?",
                         (v["session"], v["version"])).fetchone()
        if row is None:
            fail.append("dataset %s v%d: announced but not stored" % (v["session"], v["version"]))
        elif row[0] != v["rows"] or (v["confirmed"] and row[1] != 1):
            fail.append("dataset %s v%d: stored %r, announced rows=%d confirmed=%s"
                        % (v["session"], v["version"], tuple(row), v["rows"], v["confirmed"]))
    for sid in list(rec.sessions):
        if db.execute("SELECT count(*) FROM sessions WHERE id = ?", (sid,)).fetchone()[0] != 1:
            fail.append("session %s: answered 201 but not stored" % sid)
    return len(rec.versions) + len(rec.sessions)


def users_free(port, rec, sessions, fail):
    """Every user starts a new turn at once (no stale run_active) and the render slot is free."""
    status, body = request(port, "GET", "/v1/status")
    if status != 200 or body.get("in_flight") != 0 or body.get("waiting") != 0:
        fail.append("render slot not free after the restart: %d %r" % (status, body))
    for user in sorted(rec.users):
        st = Stream(port, "POST", "/v1/sessions/%s/messages" % sessions[user], {"text": "still there?"},
                    user=user, timeout=30)
        if st.status != 200:
            fail.append("user %s cannot start a turn after the restart: %d %s" % (user, st.status, st.error))
            continue
        seen = []
        try:
            if not read_to_done(st, seen) or seen[-1]["data"].get("state") != "ok":
                fail.append("user %s: a plain turn after the restart did not end ok" % user)
        except TRANSPORT as e:
            fail.append("user %s: a plain turn after the restart failed: %r" % (user, e))
        finally:
            st.close()
