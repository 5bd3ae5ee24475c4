#!/usr/bin/python3
"""PostgreSQL restarted under load loses no acknowledged answer (issue 32). A real plotqd on a
throwaway PostgreSQL of this test's own (tools/pg.sh start), kept busy by client threads (plain
turns, dataset pastes and confirms, new sessions, and /run-data when the sandbox runs here); the
server is stopped twice under that load (pg_ctl -m fast, then -m immediate: a crash, its WAL replayed
at the next start), left down for DOWN_S and started again. Checked:

- while it is down, requests answer 503 store_unavailable with Retry-After (never another 5xx, a
  dropped connection or a hang past ANSWER_S), a turn's stream ends with error{store_unavailable}
  (id-less when the event itself could not be stored), and /readyz goes 503; after the start /readyz turns 200 by itself and
  requests succeed again; plotqd never exits;
- afterwards, in the store (libpq, pg.py): every session answered 201 exists, every dataset version
  announced is stored with its rows (and confirmed when the confirm was answered 200), every turn
  read to done has exactly the events its stream read, every turn cut by the outage resumes to a
  done, every /run-data 200 has its ledger row and is answered the same again (nothing ran twice);
  nothing is half-written: no turn left queued or running, every ended turn has its done stored, no
  idempotency claim left running.

  pg_restart.py PLOTQD     (needs PostgreSQL's server binaries: tools/pg.sh bindir; else PLOTQ-SKIP)

Standard library only.
"""
import os
import random
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checks  # noqa: E402
import pg  # noqa: E402
from plotq_client import Plotqd, Stream, request_h  # noqa: E402
from workload import TRANSPORT, Record, data_code, paste_text  # noqa: E402

DOWN_S = 3.0      # how long the server stays down each time
LOAD_S = 2.5      # load before, between and after the restarts
ANSWER_S = 12.0   # any answer, also while the server is down: connect timeout + a statement's
READY_S = 15.0    # /readyz back to 200 after the server is up again
BACKOFF_S = 5.0   # the longest backoff step of a worker's reconnects (store/pg_driver.cpp)

SETTINGS = {
    "PLOTQ_RUNS_PER_MINUTE": "100000",
    "PLOTQ_USER_MESSAGES_PER_MINUTE": "1000000",
    "PLOTQ_USER_MESSAGES_PER_DAY": "100000000",
    "PLOTQ_DAILY_DATA_RUNS": "100000000",
    "PLOTQ_DB_PROBE_MS": "250",
    "PLOTQ_DB_CONNECT_TIMEOUT_S": "2",
    "PLOTQ_WARM_MODES": "data",
}


class Load:
    """Client threads, each its own user; every answer is logged, the acknowledged ones recorded."""

    def __init__(self, port, rec, sandbox):
        self.port = port
        self.rec = rec
        self.sandbox = sandbox
        self.rng = random.Random(7)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answers = []   # (kind, started, took_s, status, code, retry_after)
        self.broken = []    # requests that got no answer: (kind, error)
        self.sessions = {}
        self.threads = []

    def log(self, kind, t0, status, code, headers):
        with self.lock:
            self.answers.append((kind, t0, time.monotonic() - t0, status, code, (headers or {}).get("Retry-After")))

    def call(self, kind, method, path, body=None, user="dev"):
        t0 = time.monotonic()
        try:
            status, got, headers = request_h(self.port, method, path, body, user=user, timeout=ANSWER_S + 10)
        except TRANSPORT as e:
            with self.lock:
                self.broken.append((kind, repr(e)))
            return None, None
        self.log(kind, t0, status, got.get("detail") if isinstance(got, dict) else None, headers)
        return status, got

    def session(self, user):
        if user not in self.sessions:
            status, body = self.call("session", "POST", "/v1/sessions", user=user)
            if status != 201:
                return None
            self.sessions[user] = body["id"]
            with self.rec.lock:
                self.rec.sessions.append(body["id"])
                self.rec.users.add(user)
        return self.sessions[user]

    def new_sessions(self, user):
        status, body = self.call("session", "POST", "/v1/sessions", user=user)
        if status == 201:
            with self.rec.lock:
                self.rec.sessions.append(body["id"])

    def plain(self, user):
        sid = self.session(user)
        if not sid:
            return
        t0 = time.monotonic()
        try:
            st = Stream(self.port, "POST", "/v1/sessions/%s/messages" % sid, {"text": "hi"}, user=user,
                        timeout=ANSWER_S + 10)
        except TRANSPORT as e:
            with self.lock:
                self.broken.append(("turn", repr(e)))
            return
        if st.status != 200:
            return self.log("turn", t0, st.status, st.error, st.headers)
        seen = []
        try:
            while True:
                ev = st.next()
                if ev is None:
                    break
                seen.append(ev)
                if ev["event"] == "done":
                    break
        except TRANSPORT as e:
            with self.lock:
                self.broken.append(("turn stream", repr(e)))
        finally:
            st.close()
        done = bool(seen) and seen[-1]["event"] == "done"
        errors = [e["data"].get("code") for e in seen if e["event"] == "error"]
        code = errors[0] if errors else None
        # A stream answers 200 at once: what counts is how it ended (an error event in the vocabulary).
        self.log("turn", t0, 200 if not errors else 503 if code == "store_unavailable" else 500,
                 code, {"Retry-After": "(stream)"})
        if not seen or seen[0]["event"] != "ready":
            return
        stored = [e for e in seen if e["id"] is not None]
        entry = {"user": user, "session": sid, "turn": seen[0]["data"]["turn"], "events": stored,
                 "action": "none", "round": 1}
        if not stored:
            return  # not even its ready was stored: nothing was acknowledged (its end is checked)
        with self.rec.lock:
            (self.rec.turns if done else self.rec.interrupted).append(entry)

    def paste(self, user):
        sid = self.session(user)
        if not sid:
            return
        status, body = self.call("paste", "POST", "/v1/sessions/%s/datasets" % sid,
                                 {"text": paste_text(self.rng.randrange(2, 200), self.rng.randrange(1, 90))}, user=user)
        if status != 201:
            return
        entry = {"session": sid, "version": body["version"], "rows": body["rows"], "confirmed": False, "round": 1}
        with self.rec.lock:
            self.rec.versions.append(entry)
        status, body = self.call("confirm", "POST", "/v1/sessions/%s/datasets/%d/confirm" % (sid, entry["version"]),
                                 user=user)
        if status == 200 and body.get("confirmed") is True:
            with self.rec.lock:
                entry["confirmed"] = True

    def run_data(self, _user):
        with self.rec.lock:
            old = [k for k in self.rec.requests if k.startswith("rd-")]
        if old and self.rng.random() < 0.25:
            job_id = self.rng.choice(old)  # a retry: the same payload
        else:
            job_id = self.rec.next_id("rd")
            with self.rec.lock:
                self.rec.requests[job_id] = ("/run-data", {"job_id": job_id, "source": data_code(self.rng.randrange(2, 30)),
                                                           "timeout_s": 20})
        path, body = self.rec.requests[job_id]
        status, answer = self.call("run-data", "POST", path, body, user="svc")
        if status == 200:
            with self.rec.lock:
                if job_id in self.rec.run_data and self.rec.run_data[job_id] != answer:
                    self.rec.mismatch.append((job_id, "a retry got another answer"))
                self.rec.run_data.setdefault(job_id, answer)

    def _loop(self, fn, user, pause):
        while not self.stop.is_set():
            fn(user)
            if self.stop.wait(pause):
                return

    def start(self):
        plan = [(self.plain, "plain-1", 0.02), (self.plain, "plain-2", 0.02), (self.plain, "plain-3", 0.02),
                (self.paste, "paste-1", 0.02), (self.paste, "paste-2", 0.02), (self.new_sessions, "new-1", 0.05)]
        if self.sandbox:
            plan += [(self.run_data, "svc", 0.02), (self.run_data, "svc", 0.02)]
        for fn, user, pause in plan:
            t = threading.Thread(target=self._loop, args=(fn, user, pause), daemon=True)
            t.start()
            self.threads.append(t)

    def join(self):
        self.stop.set()
        for t in self.threads:
            t.join(ANSWER_S + 15)
        return [t for t in self.threads if t.is_alive()]


def readyz(port):
    """(status, the checks that failed) of GET /readyz."""
    try:
        status, body, _ = request_h(port, "GET", "/readyz", timeout=5)
        return status, body.get("failing") if isinstance(body, dict) else body
    except TRANSPORT as e:
        return None, repr(e)


def wait_ready(port, want, within, report):
    t0 = time.monotonic()
    seen = set()
    while time.monotonic() - t0 < within:
        status, failing = readyz(port)
        if status == want:
            if seen and want == 200:
                report.append("/readyz failing on the way back: " + "; ".join(sorted(seen)))
            return time.monotonic() - t0
        if status not in (200, 503):
            report.append("/readyz answered %r: %s" % (status, failing))
        seen.add(" ".join(failing) if isinstance(failing, list) else repr(failing))
        time.sleep(0.05)
    report.append("/readyz not %d within %.0f s; its failing checks meanwhile: %s" % (want, within, "; ".join(sorted(seen))))
    return None


def health(when, port, want, fail):
    """/healthz answers at once with the store's part: 503 store not ok while the server is down."""
    try:
        t0 = time.monotonic()
        status, body, _ = request_h(port, "GET", "/healthz", timeout=5)
        took = time.monotonic() - t0
    except TRANSPORT as e:
        return fail.append("%s: /healthz failed: %r" % (when, e))
    store_ok = body.get("store", {}).get("ok") if isinstance(body, dict) else None
    if status != want or store_ok != (want == 200) or took > 1.0:
        fail.append("%s: /healthz %d in %.2f s, store %r" % (when, status, took, body.get("store") if isinstance(body, dict) else body))


def outage(server, d, load, mode, fail, report):
    """One stop and start of the server under load; returns the window from the stop until /readyz
    answered 200 again."""
    server.down(mode)
    t_down = time.monotonic()
    took = wait_ready(d.port, 503, DOWN_S, report)
    if took is None:
        fail.append("%s stop: /readyz never answered 503 while the server was down" % mode)
    else:
        health("%s stop, server down" % mode, d.port, 503, fail)
    while time.monotonic() - t_down < DOWN_S:
        time.sleep(0.05)
    server.up()
    t_up = time.monotonic()
    back = wait_ready(d.port, 200, READY_S, report)
    if back is None:
        fail.append("%s stop: /readyz not 200 within %.0f s of the start" % (mode, READY_S))
    if back is not None:
        health("%s stop, server back" % mode, d.port, 200, fail)
    report.append("%s: /readyz 503 after %.2f s, 200 again %.2f s after the start" % (
        mode, took if took is not None else -1, back if back is not None else -1))
    return t_down, t_up + (back if back is not None else READY_S)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if len(sys.argv) != 2:
        sys.exit("usage: pg_restart.py PLOTQD")
    why = pg.server_binaries()
    if why:
        print("PLOTQ-SKIP: " + why)
        return 0
    work = tempfile.mkdtemp(prefix="plotq-pgrestart-")
    os.chmod(work, 0o711)
    server = pg.Server(work)
    fail, report = [], []
    started = time.monotonic()
    d = None
    try:
        server.start()
        d = Plotqd(sys.argv[1], server.conninfo, os.path.join(work, "plotqd.log"), dict(SETTINGS, PLOTQ_FIGURE_TMP_ROOT=work))
        d.start()
        sandbox = d.wait_log("sandbox", 5, lambda ev: ev.get("ready") is True) is not None
        # Ready first (the data zygote's preload can take seconds on a loaded host): the outages
        # are then the only thing that slows an answer.
        if wait_ready(d.port, 200, 120, report) is None:
            fail.append("/readyz not 200 before the load")
        rec = Record()
        load = Load(d.port, rec, sandbox)
        load.start()
        time.sleep(LOAD_S)
        windows = []
        for mode in ("fast", "immediate"):
            windows.append(outage(server, d, load, mode, fail, report))
            time.sleep(LOAD_S)
        stuck = load.join()
        if stuck:
            fail.append("%d client threads never returned" % len(stuck))
        if d.proc.poll() is not None:
            fail.append("plotqd exited (status %s) during the restarts" % d.proc.returncode)
        else:
            verify(server, d, load, rec, windows, fail, report)
    finally:
        if d:
            d.stop()
        server.stop()
    return finish(work, fail, report, started)


def verify(server, d, load, rec, windows, fail, report):
    # Answers: each in time, each failure the documented one.
    for kind, err in load.broken:
        fail.append("%s: no answer: %s" % (kind, err))
    down_503 = 0
    wrong = {}  # (kind, status, code, Retry-After, when) -> how many
    for kind, t0, took, status, code, retry in load.answers:
        if took > ANSWER_S:
            fail.append("%s answered after %.1f s" % (kind, took))
        if 200 <= status < 300:
            continue
        # A request sent just before the stop may be the one the stop cut; after /readyz is 200
        # again, a worker whose connection is inside a backoff step fails its calls at once until
        # the step ends (docs/store.md, PostgreSQL faults).
        in_outage = any(a - 1 <= t0 <= b + BACKOFF_S for a, b in windows)
        if status == 503 and code == "store_unavailable" and retry and in_outage:
            down_503 += 1
            continue
        if kind == "turn" and status == 409 and code == "run_active":
            continue  # the user's previous turn, whose stream the outage closed, still runs
        since = min((t0 - b for a, b in windows if t0 > b), default=None)
        key = (kind, status, code, retry, "during an outage" if in_outage else "outside the outages" + (
            "" if since is None else " (%.1f s after /readyz was 200 again)" % since))
        wrong[key] = wrong.get(key, 0) + 1
    for (kind, status, code, retry, when), n in sorted(wrong.items(), key=str):
        fail.append("%d x %s answered %d %s (Retry-After %r) %s" % (n, kind, status, code, retry, when))
    if down_503 == 0:
        fail.append("no request was answered 503 store_unavailable while the server was down")
    ok = sum(1 for a in load.answers if 200 <= a[3] < 300)
    after = [a for a in load.answers if a[1] > windows[-1][1] and 200 <= a[3] < 300]

    # /run-data answers the store could not keep (docs/api.md: the answer is sent anyway, plotqd logs
    # idempotency_complete_failed, the key is forgotten and a retry runs the code again): each is
    # sent again now, must run and answer 200, and from then on that answer is kept. Without this
    # the key could stay running in the store (the forget fails too while the server is down).
    unkept = sorted({e["job_id"] for e in d.events("idempotency_complete_failed")} & set(rec.run_data))
    for job_id in unkept:
        path, body = rec.requests[job_id]
        status, answer, _ = request_h(d.port, "POST", path, body, user="svc", timeout=120)
        if status != 200:
            fail.append("%s: answered while the store could not keep it; its retry answered %d %r" % (job_id, status, answer))
        rec.run_data[job_id] = answer

    # The store: wait for the turns the outage cut to be ended in it (plotqd retries their ends).
    db = pg.Conn(server.conninfo)
    try:
        end = time.monotonic() + 20
        while time.monotonic() < end and db.execute("SELECT count(*) FROM turns WHERE status <> 'done'").fetchone()[0]:
            time.sleep(0.2)
        checks.nothing_stuck(db, fail)
        checked = checks.turns_kept(db, rec, fail)
        checked += checks.interrupted_resumed(db, d.port, rec, 1, fail)
        checked += checks.versions_kept(db, d.port, rec, 1, fail)
        checked += checks.answers_kept(d.port, rec, "run_data", fail)
        twice, missing = checks.ledger_once(db, rec, fail)
    finally:
        db.close()
    # A retry of an answer that was not kept runs again (above): its other answer is no mismatch.
    fail.extend("mismatch: %s %s" % m for m in rec.mismatch if m[0] not in unkept)
    report.append("answers %d (2xx %d, 503 store_unavailable while down %d, 2xx after the last start %d); "
                  "acknowledged: %d turns, %d cut turns resumed, %d dataset "
                  "versions, %d sessions, %d run-data (%d of them answered but not kept: %s); "
                  "%d checked in the store, %d lost, %d ran twice" % (
                      len(load.answers), ok, down_503, len(after), len(rec.turns), len(rec.interrupted),
                      len(rec.versions), len(rec.sessions), len(rec.run_data), len(unkept), " ".join(unkept) or "-",
                      checked, missing, twice))
    if not after:
        fail.append("no request succeeded after the last start")
    if not rec.turns or not rec.versions:
        fail.append("the load acknowledged no turn or no dataset: nothing was checked")


def finish(work, fail, report, started):
    for r in report:
        print("pg_restart: " + r)
    print("pg_restart: %.1f s in all" % (time.monotonic() - started), flush=True)
    return checks.verdict("pg_restart", work, fail)


if __name__ == "__main__":
    sys.exit(main())
