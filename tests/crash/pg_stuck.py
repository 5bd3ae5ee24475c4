#!/usr/bin/python3
"""The loop never waits for the database (issue 32): a real plotqd on PostgreSQL (a schema of its
own on PLOTQ_TEST_PG) while this test holds one PostgreSQL transaction open with a row lock that
user A's next message needs (A's row of quota_days, SELECT ... FOR UPDATE). A's message is then
stuck in the store: its admission (one transaction with the turn's row) waits on our lock in
pg_stat_activity, and A has no answer yet (nothing is streamed before the store has the turn).
Meanwhile, each measured against a baseline taken in this run before the lock: user B's plain
turns (SSE streams) run to done, /healthz answers, and user C's open stream (a data run sleeping
in the sandbox) gets its pings, each within LIMIT_S. After the lock is let go, A's turn answers
ready, message, done at once. Then the lock is held past lock_timeout: A's next message is
answered 503 store_unavailable at the timeout, not later, and nothing of it is stored.

  pg_stuck.py PLOTQD      (PLOTQ_TEST_PG: a server's conninfo; without it PLOTQ-SKIP)

Standard library only (libpq through ctypes: pg.py).
"""
import os
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checks  # noqa: E402
import pg  # noqa: E402
from plotq_client import Plotqd, Stream, new_session, read_to_done, request  # noqa: E402

LIMIT_S = 1.0     # what any answer on the loop may take while A is stuck (usual: milliseconds)
HOLD_S = 4.0      # how long the lock is held, then let go
LOCK_TIMEOUT_S = 7.0  # PLOTQ_DB_LOCK_TIMEOUT_MS: past HOLD_S; the second hold outlasts it
PING_S = 0.2      # PLOTQ_SSE_PING_S: the stuck stream's pings show the loop's timers run

SETTINGS = {
    "PLOTQ_RUNS_PER_MINUTE": "100000",
    "PLOTQ_USER_MESSAGES_PER_MINUTE": "1000000",
    "PLOTQ_USER_MESSAGES_PER_DAY": "100000000",
    "PLOTQ_SSE_PING_S": str(PING_S),
    # The first hold ends before lock_timeout (only our ROLLBACK ends A's wait); the second outlasts
    # it. statement_timeout stays well past both.
    "PLOTQ_DB_LOCK_TIMEOUT_MS": str(int(LOCK_TIMEOUT_S * 1000)),
    "PLOTQ_DB_STATEMENT_TIMEOUT_MS": "60000",
    "PLOTQ_DB_PROBE_MS": "200",
}


class RawStream:
    """A turn's stream, opened and read line by line on a thread (its answer's head may wait for the
    store), each line with the time it came (pings too)."""

    def __init__(self, port, session, user, body):
        self.st = None
        self.status = None  # the answer's status once its head came
        self.error = None
        self.head_at = None
        self.lines = []  # (monotonic time, line)
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self._read, args=(port, session, user, body), daemon=True)
        self.t.start()

    def _read(self, port, session, user, body):
        try:
            st = Stream(port, "POST", "/v1/sessions/%s/messages" % session, body, user=user, timeout=60)
            self.st, self.error, self.head_at = st, st.error, time.monotonic()
            self.status = st.status
            if st.status != 200:
                return
            while True:
                line = st.resp.readline()
                if not line:
                    return
                with self.lock:
                    self.lines.append((time.monotonic(), line.decode().rstrip("\r\n")))
        except (OSError, ValueError):
            return

    def events(self, since=0.0):
        with self.lock:
            return [(t, l[len("event: "):]) for t, l in self.lines if l.startswith("event: ") and t >= since]

    def pings(self, since, until):
        with self.lock:
            return [t for t, l in self.lines if l.startswith(":") and since <= t <= until]

    def close(self):
        if self.st:
            self.st.close()


# C's data run: spins in the sandbox, holding the slot and C's stream open, until C cancels it.
SPINNER = {"text": "spin", "action": {"kind": "data", "source_language": "python",
                                      "code": "import pandas as pd\nwhile True:\n    pass\n"
                                              "df = pd.DataFrame({'a': [1]})\n"}}


def timed(fn):
    t0 = time.monotonic()
    out = fn()
    return time.monotonic() - t0, out


def plain_turn(port, session, user):
    st = Stream(port, "POST", "/v1/sessions/%s/messages" % session, {"text": "hello"}, user=user, timeout=30)
    if st.status != 200:
        return "answered %d %s" % (st.status, st.error)
    seen = []
    try:
        ok = read_to_done(st, seen)
    finally:
        st.close()
    if not ok or seen[-1]["data"].get("state") != "ok":
        return "ended without done{ok}: %r" % [e["event"] for e in seen]
    return None


def healthz(port):
    status, body = request(port, "GET", "/healthz", timeout=30)
    return None if status == 200 else "healthz %d %r" % (status, body)


def measure(port, b_session, n, fail, what):
    """n of B's plain turns and n /healthz, each timed; returns the slowest of each."""
    worst = {"turn": 0.0, "healthz": 0.0}
    for _ in range(n):
        for name, fn in (("turn", lambda: plain_turn(port, b_session, "user-b")), ("healthz", lambda: healthz(port))):
            took, err = timed(fn)
            if err:
                fail.append("%s: %s %s" % (what, name, err))
            worst[name] = max(worst[name], took)
    return worst


def stuck_in_store(c):
    """plotqd's backends that wait on a lock now (pg_stat_activity)."""
    return c.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'plotq' "
                     "AND wait_event_type = 'Lock' AND state = 'active'").fetchone()[0]


def timed_out(port, a_session, holder, fail):
    """The lock held past lock_timeout: A's message is answered in the vocabulary (503
    store_unavailable) within LIMIT_S of the timeout, never hangs, nothing of it is stored, and A's
    next message goes through."""
    holder.execute("BEGIN")
    holder.execute("SELECT count FROM quota_days WHERE user_id = 'user-a' AND counter = 'messages' FOR UPDATE")
    before = holder.execute("SELECT count(*) FROM turns WHERE user_id = 'user-a'").fetchone()[0]
    t0 = time.monotonic()
    a = RawStream(port, a_session, "user-a", {"text": "stuck for good?"})
    a.t.join(LOCK_TIMEOUT_S + 10)
    holder.execute("ROLLBACK")
    a.close()
    answered_at = a.head_at - t0 if a.head_at else None
    after = holder.execute("SELECT count(*) FROM turns WHERE user_id = 'user-a'").fetchone()[0]
    if (a.status != 503 or a.error != "store_unavailable" or answered_at is None
            or not LOCK_TIMEOUT_S - 0.5 <= answered_at <= LOCK_TIMEOUT_S + LIMIT_S):
        fail.append("A's message held past lock_timeout (%.0f s): answered %r %r after %r s" % (
            LOCK_TIMEOUT_S, a.status, a.error, answered_at and round(answered_at, 2)))
    if after != before:
        fail.append("A's refused message left %d turn row(s)" % (after - before))
    err = plain_turn(port, a_session, "user-a")
    if err:
        fail.append("A's next turn after the timeout: " + err)
    print("pg_stuck: held past lock_timeout, A's message answered %r %s %.2f s after it was sent" % (
        a.status, a.error, answered_at if answered_at is not None else -1), flush=True)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if len(sys.argv) != 2:
        sys.exit("usage: pg_stuck.py PLOTQD")
    server = pg.test_server()
    if server is None:
        return 0
    work = tempfile.mkdtemp(prefix="plotq-pgstuck-")
    target, drop = pg.own_schema(server)
    d = Plotqd(sys.argv[1], target, os.path.join(work, "plotqd.log"), SETTINGS)
    fail = []
    holder = watcher = None
    started = time.monotonic()
    try:
        d.start()
        port = d.port
        a_session, b_session = new_session(port, "user-a"), new_session(port, "user-b")
        err = plain_turn(port, a_session, "user-a")  # A's quota row exists from now on
        if err:
            fail.append("A's first turn: " + err)
        base = measure(port, b_session, 5, fail, "baseline")

        holder, watcher = pg.Conn(target), pg.Conn(target)
        c_session = new_session(port, "user-c")
        c = RawStream(port, c_session, "user-c", SPINNER)
        waited = 0.0
        while not any(l.startswith("data: ") and '"running"' in l for _, l in list(c.lines)) and waited < 30:
            time.sleep(0.05)
            waited += 0.05
        if c.status != 200 or not any('"running"' in l for _, l in list(c.lines)):
            fail.append("C's data run did not start: %r %r" % (c.status, c.error))
        holder.execute("BEGIN")
        locked = holder.execute("SELECT count FROM quota_days WHERE user_id = 'user-a' AND counter = 'messages' "
                                "FOR UPDATE")
        if len(locked) != 1:
            fail.append("A's quota row to lock: %d rows" % len(locked))
        t_lock = time.monotonic()
        a = RawStream(port, a_session, "user-a", {"text": "stuck?"})
        # A's statement reaches our lock: plotqd's backend waits on it.
        waited = 0.0
        while stuck_in_store(watcher) < 1 and waited < 5:
            time.sleep(0.05)
            waited += 0.05
        if stuck_in_store(watcher) < 1:
            fail.append("no plotqd statement waits on the held lock: A is not stuck in the store")
        during = measure(port, b_session, 5, fail, "while A is stuck")
        while time.monotonic() - t_lock < HOLD_S:
            time.sleep(0.05)
        t_release = time.monotonic()
        if a.status is not None:
            fail.append("A's message was answered %r while its admission waited on the lock" % a.status)
        pings = c.pings(t_lock + 0.5, t_release)
        gaps = [b - x for x, b in zip([t_lock + 0.5] + pings, pings + [t_release])]
        if len(pings) < int((t_release - t_lock - 0.5) / PING_S) // 2 or max(gaps) > LIMIT_S:
            fail.append("C's stream got %d pings in %.1f s, longest gap %.2f s" % (
                len(pings), t_release - t_lock - 0.5, max(gaps)))
        stuck_at_release = stuck_in_store(watcher)
        holder.execute("ROLLBACK")

        a.t.join(LIMIT_S + 1)
        after = a.events(t_release)
        a_done = [t - t_release for t, e in after if e == "done"]
        if a.status != 200 or [e for _, e in after] != ["ready", "message", "done"] or not a_done or a_done[0] > LIMIT_S:
            fail.append("A's turn after the lock went: %r %r" % (a.status, [(e, round(t - t_release, 3)) for t, e in after]))
        for name in ("turn", "healthz"):
            if during[name] > LIMIT_S:
                fail.append("B's %s took %.3f s while A was stuck (baseline %.3f s)" % (name, during[name], base[name]))
        print("pg_stuck: A stuck %.1f s (%d plotqd statement(s) waiting on the lock at release); "
              "slowest B turn %.3f s (baseline %.3f s), /healthz %.3f s (baseline %.3f s); "
              "C's stream %d pings, longest gap %.3f s; A's done %.3f s after the release; %.1f s in all" % (
                  t_release - t_lock, stuck_at_release, during["turn"], base["turn"], during["healthz"],
                  base["healthz"], len(pings), max(gaps), a_done[0] if a_done else -1,
                  time.monotonic() - started), flush=True)
        a.close()
        c_turn = c.st.headers.get("X-Plotq-Turn", "") if c.st else ""
        status, _ = request(port, "POST", "/v1/sessions/%s/turns/%s/cancel" % (c_session, c_turn), user="user-c")
        c.t.join(LIMIT_S + 10)  # its job killed, C's turn ends; the slot is free for what follows
        if status != 200 or "done" not in [e for _, e in c.events()]:
            fail.append("C's spinning run: cancel answered %r, events %r" % (status, [e for _, e in c.events()]))
        c.close()
        timed_out(port, a_session, holder, fail)
        if d.proc.poll() is not None:
            fail.append("plotqd exited (status %s)" % d.proc.returncode)
    finally:
        for c in (holder, watcher):
            if c:
                c.close()
        d.stop()
        drop()
    return checks.verdict("pg_stuck", work, fail)


if __name__ == "__main__":
    sys.exit(main())
