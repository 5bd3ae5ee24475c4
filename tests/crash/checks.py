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


def nothing_stuck(db, fail, orphans=None):
    """orphans (a cluster): the job ids of /run-data and /render requests a killed node had in flight.
    A cluster node's restart does not forget its keys (its other nodes' keys run): a key a killed node
    claimed but had not enqueued stays running until a retry takes it over (cluster::take_over_key),
    so only those may still be running, and nothing else."""
    n = db.execute("SELECT count(*) FROM turns WHERE status <> 'done'").fetchone()[0]
    if n:
        fail.append("%d turns still queued or running after the restart" % n)
    if orphans is None:
        n = db.execute("SELECT count(*) FROM idempotency WHERE state = 'running'").fetchone()[0]
        if n:
            fail.append("%d idempotency claims still running after the restart" % n)
    else:
        left = [r[0] for r in db.execute("SELECT job_id FROM idempotency WHERE state = 'running'")
                if r[0] not in orphans]
        if left:
            fail.append("%d idempotency claims running that no killed node had in flight, first %s"
                        % (len(left), left[0]))
        n = db.execute("SELECT count(*) FROM queue_entries WHERE state <> 'ended'").fetchone()[0]
        if n:
            fail.append("%d entries still in the cluster's queue with every turn ended" % n)
        counts = db.execute("SELECT waiting, running FROM queue_counts").fetchone()
        if tuple(counts) != (0, 0):
            fail.append("queue_counts says %r with nothing waiting or running" % (tuple(counts),))
    # Every turn that ended, however it ended, has its done stored: a resume always ends.
    rows = db.execute("SELECT id, outcome FROM turns t WHERE status = 'done' AND NOT EXISTS "
                      "(SELECT 1 FROM turn_events e WHERE e.turn_id = t.id AND e.event = 'done')").fetchall()
    if rows:
        fail.append("%d ended turns without a stored done, first %s (%s)" % (len(rows), rows[0][0], rows[0][1]))


def _events(db, turn):
    return [(r[0], r[1], r[2]) for r in db.execute(
        "SELECT seq, event, data FROM turn_events WHERE turn_id = ? ORDER BY seq", (turn,))]


def _live_only(e):
    """A frame sent live and never stored: a cluster's queue position (status{queued} without an id,
    docs/scale-out.md "positions") or a closing frame (node_fenced, shutdown)."""
    return e["id"] is None and (e["event"] == "closing" or (
        e["event"] == "status" and isinstance(e["data"], dict) and e["data"].get("step") == "queued"))


def _as_read(events):
    return [(e["id"], e["event"], json.dumps(e["data"], sort_keys=True)) for e in events if not _live_only(e)]


def last_id(events):
    """The last id a stream read (what a client resumes after)."""
    ids = [e["id"] for e in events if e["id"] is not None]
    return ids[-1] if ids else 0


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
        got = _resume(port() if callable(port) else port, t, 0, fail)
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
    abandoned turn's says error{abandoned}, a cluster's turn its node lost error{node_lost}); what it
    stored up to that id is what the stream read. port: an int, or a callable giving the port of
    each resume (a cluster: any node)."""
    checked = 0
    for t in [t for t in rec.interrupted if t["round"] == round_no]:
        last = last_id(t["events"])
        stored = {s: (s, e, d) for s, e, d in _normal(_events(db, t["turn"]))}
        for ev in _as_read(t["events"]):
            if ev[0] in stored and stored[ev[0]] != ev:
                fail.append("turn %s: stored event %d differs from the one its stream read" % (t["turn"], ev[0]))
        rest = _resume(port() if callable(port) else port, t, last, fail)
        if rest:
            if any(e["id"] is not None and e["id"] <= last for e in rest):
                fail.append("turn %s: the resume after %d sent an id at or below it" % (t["turn"], last))
            ended = db.execute("SELECT outcome, code FROM turns WHERE id = ?", (t["turn"],)).fetchone()
            errors = [e["data"].get("code") for e in rest if e["event"] == "error"]
            if ended and ended[0] == "abandoned" and "abandoned" not in errors:
                fail.append("turn %s: abandoned, but its resume has no error{abandoned}: %r"
                            % (t["turn"], [e["event"] for e in rest]))
            if ended and ended[1] == "node_lost" and "node_lost" not in errors + [
                    e["data"].get("code") for e in t["events"] if e["event"] == "error"]:
                fail.append("turn %s: ended node_lost, but neither its stream nor its resume says error{node_lost}: %r"
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
            status, answer = request(port() if callable(port) else port, "POST", path, body, user="svc", timeout=120)
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


def users_free(port, rec, sessions, fail, ports=None):
    """Every user starts a new turn at once (no stale run_active) and the render slot is free.
    ports (a cluster): every node's slots are free, and each user's turn goes to port() (any node)."""
    for p in ports or [port() if callable(port) else port]:
        status, body = request(p, "GET", "/v1/status")
        if status != 200 or body.get("in_flight") != 0 or body.get("waiting") != 0:
            fail.append("render slot not free after the restart: %d %r" % (status, body))
    for user in sorted(rec.users):
        st = Stream(port() if callable(port) else port, "POST", "/v1/sessions/%s/messages" % sessions[user],
                    {"text": "still there?"}, user=user, timeout=30)
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


# ---- a cluster of nodes on one PostgreSQL (crash_driver.py --cluster N) ----

def claims(log_paths):
    """turn id -> [(node, process start), ...]: every cluster_claimed line of every node's log file (a
    node's log keeps every process it ran, each after a "--- start" line), and the turns a node said
    it was given twice (cluster_claim_twice). A single job's claims are under "job JOB_ID" (a job id
    is claimed again only by a retry after an end that kept no answer: each claim is of its own entry,
    "entry N")."""
    out, twice = {}, []
    for node, path in log_paths.items():
        start = 0
        with open(path, "rb") as f:
            for raw in f:
                if raw.startswith(b"--- start"):
                    start += 1
                    continue
                if b'"cluster_claim' not in raw:
                    continue
                try:
                    ev = json.loads(raw)
                except ValueError:
                    continue
                if ev.get("event") == "cluster_claimed":
                    if ev.get("turn"):
                        out.setdefault(ev["turn"], []).append((node, start))
                    else:
                        out.setdefault("entry %s" % ev["entry"], []).append((node, start))
                        out.setdefault("job %s" % ev["job_id"], []).append((node, start))
                elif ev.get("event") == "cluster_claim_twice":
                    twice.append((node, start, ev.get("turn")))
    return out, twice


def claimed_once(log_paths, fail):
    """No turn's work was claimed twice, by one node or two (a claim moves an entry once)."""
    got, twice = claims(log_paths)
    for turn, who in sorted(got.items()):
        if len(who) > 1 and not turn.startswith("job "):
            fail.append("turn %s claimed %d times: %s" % (turn, len(who), who))
    for node, start, turn in twice:
        fail.append("node %s (process %d) was given turn %s while it ran it (cluster_claim_twice)" % (node, start, turn))
    return got


def owned_at_kill(db, node):
    """The turns a node held when it was killed (read at once after the kill): {turn: how}, how being
    'running' (its job held a slot there), 'bare' (no entry in the queue: a plain turn, or one
    between its admission and its entry) or 'waiting' (it admitted the turn, whose work waits in
    the cluster's queue for any node)."""
    rows = db.execute("SELECT t.id, q.state, q.node, q.job_id FROM turns t LEFT JOIN queue_entries q "
                      "ON q.turn_id = t.id WHERE t.node = ? AND t.status <> 'done'", (node,))
    out = {}
    for turn, state, qnode, job in rows:
        if state is None:
            out[turn] = ("bare", None)
        elif state == "running" and qnode == node:
            out[turn] = ("running", job)
        elif state == "waiting":
            out[turn] = ("waiting", job)
    return out


def killed_work(db, killed, claimed, fail):
    """What a killed node held ended as docs/scale-out.md says: its running jobs and bare turns
    error{node_lost} (a running job has one ledger row, failed/node_lost or the one it booked itself
    if it ended just before the kill; claimed at most once: never run again), and the turns it
    admitted whose work waited ran on another node, once.
    killed: [(node, {turn: (how, job id)})]. Returns how many turns it looked at."""
    n = 0
    for node, owned in killed:
        for turn, (how, job) in sorted(owned.items()):
            n += 1
            row = db.execute("SELECT status, outcome, code FROM turns WHERE id = ?", (turn,)).fetchone()
            if row is None or row[0] != "done":
                fail.append("turn %s (%s on killed node %s) has not ended: %r" % (turn, how, node, row))
                continue
            runs = db.execute("SELECT job_id, outcome, reason FROM runs WHERE turn_id = ? ORDER BY job_id",
                              (turn,)).fetchall()
            who = claimed.get(turn, [])
            if how in ("running", "bare"):
                if row[2] != "node_lost":
                    fail.append("turn %s (%s on killed node %s) ended %s/%s, not error{node_lost}"
                                % (turn, how, node, row[1], row[2]))
                # One job, one row: failed/node_lost, or the job's own row when it ended and booked it
                # just before its node died (the turn's end did not make it: still node_lost).
                job_rows = [r[1:] for r in runs if r[0] == job]
                if how == "running" and len(job_rows) != 1:
                    fail.append("turn %s (running on killed node %s): its job %s has %d ledger rows, not one: %r"
                                % (turn, node, job, len(job_rows), runs))
                if len(who) > 1 or (who and who[0][0] != node):
                    fail.append("turn %s (%s on killed node %s) was claimed again: %r" % (turn, how, node, who))
                last = db.execute("SELECT event, data FROM turn_events WHERE turn_id = ? ORDER BY seq DESC LIMIT 2",
                                  (turn,)).fetchall()
                if [e for e, _ in last] != ["done", "error"] or json.loads(last[1][1]).get("code") != "node_lost":
                    fail.append("turn %s (%s on killed node %s): its stored events do not end error{node_lost}, done: %r"
                                % (turn, how, node, last))
            else:  # waiting: another node ran it (or a later rescue ended it; never node_lost)
                if row[2] == "node_lost":
                    fail.append("turn %s waited in the queue when its node %s was killed, yet ended node_lost"
                                % (turn, node))
                if len(who) > 1:
                    fail.append("turn %s (waiting when %s was killed) claimed %d times: %r" % (turn, node, len(who), who))
    return n


def node_lost_only_where_killed(db, killed, fenced, fail, claimed=None):
    """Nothing ended node_lost but what a killed node ran or held (a node that fenced itself, its
    lease lost without a kill, may end its own too: `fenced` names them), and every node_lost
    ledger row is a job of such a turn, or a single job (/run-data, /render) a killed or fenced
    node claimed, which it claimed once (it never runs again)."""
    held = {turn for _, owned in killed for turn, (how, _) in owned.items() if how in ("running", "bare")}
    rows = db.execute("SELECT id, node FROM turns WHERE code = 'node_lost'").fetchall()
    for turn, node in rows:
        if turn not in held and node not in fenced:
            fail.append("turn %s (node %s) ended node_lost, yet no killed node held it" % (turn, node))
    killed_nodes = {node for node, _ in killed} | set(fenced)
    for job, turn in db.execute("SELECT job_id, turn_id FROM runs WHERE reason = 'node_lost'").fetchall():
        if turn is None and claimed is not None:
            who = claimed.get("job %s" % job, [])
            if not who or who[-1][0] not in killed_nodes:
                fail.append("single job %s has a node_lost ledger row, yet no killed node claimed it: %r" % (job, who))
            continue
        if turn not in {r[0] for r in rows}:
            fail.append("job %s has a node_lost ledger row, but its turn %s did not end node_lost" % (job, turn))
    return len(rows)
