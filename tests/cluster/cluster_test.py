"""Three real plotqd nodes on one PostgreSQL (issue 37, docs/scale-out.md), standard library only.

  cluster_test.py PLOTQD CASE     CASE: handoff | limits | fifo | kill | pause | idle_kill
  (PLOTQ_TEST_PG: a server's conninfo; each case gets a schema of its own. Without it PLOTQ-SKIP.)

Every case reads like a transcript: what each node is sent, what each stream says, and what the
store holds after. "Ran once" is counted three ways: the claim log lines of every node (the
killed one's log file included), the ledger rows of the job, and the turn's events.
"""
import json
import os
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "crash"))
import pg  # noqa: E402
from plotq_client import Plotqd, Stream, read_to_done, request, new_session  # noqa: E402

LEASE_S = 2.0
HEARTBEAT_S = 0.4
BASE_ENV = {
    "PLOTQ_CLUSTER": "on",
    "PLOTQ_NODE_LEASE_S": str(LEASE_S),
    "PLOTQ_NODE_HEARTBEAT_S": str(HEARTBEAT_S),
    "PLOTQ_CLUSTER_RESCUE_S": "0.2",
    "PLOTQ_RUNS_PER_MINUTE": "10000",
    "PLOTQ_USER_MESSAGES_PER_MINUTE": "1000",
    "PLOTQ_SHUTDOWN_GRACE_S": "1",
    # Only data turns run here: the plot and figure zygotes' imports would only load the CPUs.
    "PLOTQ_WARM_MODES": "data",
}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def data_code():
    return "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2], 'y': [3, 4]})\n"


def slow(sleep_s):
    """A plot turn that holds its slot for sleep_s seconds (a data snippet may not sleep: its
    validator admits no `time`), then ends without an image."""
    return {"text": "hold", "action": {"kind": "plot", "library": "matplotlib", "themes": ["light"],
                                       "code": "import time\nimport matplotlib.pyplot as plt\ntime.sleep(%s)\n" % sleep_s}}


def message(code):
    if isinstance(code, dict):
        return code
    return {"text": "make data", "action": {"kind": "data", "source_language": "python", "code": code}}


class Cluster:
    def __init__(self, binary, target, tmp, env=None):
        self.binary, self.target, self.tmp = binary, target, tmp
        self.env = dict(BASE_ENV)
        self.env.update(env or {})
        self.nodes = {}

    def start(self, name, **extra):
        e = dict(self.env)
        e["PLOTQ_NODE_ID"] = name
        e.update(extra)
        n = Plotqd(self.binary, self.target, os.path.join(self.tmp, name + ".log"), e).start()
        self.nodes[name] = n
        return n

    def stop(self):
        for n in self.nodes.values():
            try:
                os.kill(n.pid, signal.SIGCONT)
            except OSError:
                pass
            n.stop()

    def claims(self, turn):
        """(node, log line) of every claim of the turn's work, in every node's log file."""
        out = []
        for name in self.nodes:
            with open(os.path.join(self.tmp, name + ".log"), "rb") as f:
                for raw in f:
                    if b'"cluster_claimed"' in raw and turn.encode() in raw:
                        out.append(name)
        return out

    def claim_line(self, turn):
        for name in self.nodes:
            with open(os.path.join(self.tmp, name + ".log"), "rb") as f:
                for raw in f:
                    if b'"cluster_claimed"' in raw and turn.encode() in raw:
                        return json.loads(raw)
        fail("no claim of " + turn)

    def runner(self, turn, timeout=15):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            got = self.claims(turn)
            if got:
                return got[0]
            time.sleep(0.05)
        fail("nobody claimed turn %s within %ss" % (turn, timeout))


def send(node, user, code):
    sid = new_session(node.port, user)
    s = Stream(node.port, "POST", "/v1/sessions/%s/messages" % sid, message(code), user=user)
    if s.status != 200:
        fail("message to %s: %s %s" % (node.port, s.status, s.error))
    return sid, s.headers.get("X-Plotq-Turn"), s


def resume(node, user, sid, turn, after):
    return Stream(node.port, "GET", "/v1/sessions/%s/turns/%s/events" % (sid, turn), user=user,
                  headers={"Last-Event-ID": str(after)}, timeout=60)


def until(stream, pred):
    """Events up to and including the first for which pred holds (None: the stream ended first)."""
    seen = []
    while True:
        ev = stream.next()
        if ev is None:
            return seen, None
        seen.append(ev)
        if pred(ev):
            return seen, ev


def ledger(db, job_id):
    return db.execute("SELECT outcome, reason FROM runs WHERE job_id = ?", (job_id,)).fetchall()


def stored_events(db, turn):
    return db.execute("SELECT seq, event FROM turn_events WHERE turn_id = ? ORDER BY seq", (turn,)).fetchall()


# ---- cases ----

def case_handoff(c, db):
    """A turn accepted on A runs on B (A's slot is busy) and is resumed on C: every event once, in order."""
    a = c.start("a")
    _, blocker, bs = send(a, "blocker", slow(6))
    check(c.runner(blocker) == "a", "a alone claims the blocker's turn")
    b, cc = c.start("b"), c.start("c")
    sid, turn, s = send(a, "ann", data_code())
    first, running = until(s, lambda e: e["event"] == "status" and e["data"].get("step") == "running")
    check(running is not None, "ann's stream on a says running (%d events)" % len(first))
    s.close()
    ran_on = c.runner(turn)
    check(ran_on in ("b", "c"), "ann's turn ran on %s, not on the busy a" % ran_on)
    other = cc if ran_on == "b" else b
    r = resume(other, "ann", sid, turn, first[-1]["id"])
    rest = []
    check(read_to_done(r, rest), "the resume on the third node reads to done")
    ids = [e["id"] for e in first + rest if e["id"] is not None]
    check(ids == list(range(1, len(ids) + 1)), "event ids 1..%d, each once, in order: %s" % (len(ids), ids))
    names = [e["event"] for e in first + rest if e["id"] is not None]
    check(names[0] == "ready" and "dataset" in names and names[-1] == "done", "ready .. dataset .. done: %s" % names)
    check(rest[-1]["data"]["state"] == "ok", "done{state: ok}")
    check(c.claims(turn) == [ran_on], "claimed once, by %s" % ran_on)
    rows = ledger(db, turn + "-data-1")
    check(len(rows) == 1 and rows[0][0] == "ok", "one ledger row for the job: %s" % rows)
    bs.close()


def case_limits(c, db):
    """One turn in flight per user, daily limits and capacity, across nodes at once."""
    nodes = [c.start(n, PLOTQ_DAILY_DATA_RUNS="2", PLOTQ_RUNS_PER_MINUTE="2", PLOTQ_QUEUE_MAX_WAIT_S="30")
             for n in ("a", "b", "c")]
    # capacity per node: floor(2 x 30 / 60) = 1; slots 1: the cluster admits at most 3 + 3.
    a, b, cc = nodes
    sid = new_session(a.port, "u1")
    s1 = Stream(a.port, "POST", "/v1/sessions/%s/messages" % sid, message(slow(4)), user="u1")
    check(s1.status == 200, "u1's first turn is admitted on a")
    results = []

    def other(node):
        s = Stream(node.port, "POST", "/v1/sessions/%s/messages" % sid, message(data_code()), user="u1")
        results.append((s.status, s.error))

    ts = [threading.Thread(target=other, args=(n,)) for n in (b, cc)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    check(sorted(results) == [(409, "run_active")] * 2, "u1's turns sent to b and c meanwhile: 409 run_active %s" % results)
    read_to_done(s1, [])
    # Two data runs a day: the first on b and the second on c run, the third (on a) is refused.
    outs = []
    for node in (b, cc, a):
        _, turn, s = send(node, "u1", data_code())
        seen = []
        read_to_done(s, seen)
        outs.append([e["event"] for e in seen][-2:] + [seen[-2]["data"].get("code")])
    check(outs[0][:2] == ["message", "done"] and outs[1][:2] == ["message", "done"],
          "u1's first two data runs (on b, then c) run: %s" % outs[:2])
    check(outs[2][0] == "refusal" and outs[2][2] == "data_runs_exhausted", "the third (on a): data_runs_exhausted %s" % outs[2])

    # A burst of 12 users over the three nodes at once, each turn 3 s long.
    verdicts = []
    lock = threading.Lock()
    peak = {"waiting": 0, "running": 0}
    stop = threading.Event()

    def watch():
        w = pg.Conn(c.target)
        while not stop.is_set():
            row = w.execute("SELECT count(*) FILTER (WHERE state = 'waiting'), count(*) FILTER (WHERE state = 'running') "
                            "FROM queue_entries").fetchone()
            peak["waiting"] = max(peak["waiting"], row[0])
            peak["running"] = max(peak["running"], row[1])
            time.sleep(0.01)
        w.close()

    def burst(i):
        node = nodes[i % 3]
        _, turn, s = send(node, "burst%d" % i, slow(3))
        seen = []
        read_to_done(s, seen)
        codes = [e["data"].get("code") for e in seen if e["event"] == "error"]
        with lock:
            verdicts.append((turn, codes[0] if codes else "ok"))

    w = threading.Thread(target=watch)
    w.start()
    ts = [threading.Thread(target=burst, args=(i,)) for i in range(12)]
    [t.start() for t in ts]
    [t.join(120) for t in ts]
    stop.set()
    w.join()
    ok = [t for t, v in verdicts if v != "capacity"]  # ran (and ended without an image: it only slept)
    refused = [t for t, v in verdicts if v == "capacity"]
    check(len(verdicts) == 12 and len(ok) + len(refused) == 12, "12 burst turns: %d ran, %d refused capacity" % (len(ok), len(refused)))
    check(3 <= len(ok) <= 6, "no over-admission: at most 3 slots + 3 places ran (%d)" % len(ok))
    check(peak["waiting"] <= 3 and peak["running"] <= 3,
          "the queue never held more than capacity waiting (%d) or slots running (%d)" % (peak["waiting"], peak["running"]))
    for t in ok:
        check(len(c.claims(t)) == 1, "burst turn %s claimed once" % t)
    for t in refused:
        rows = ledger(db, t + "-plot")
        check(rows == [("refused", "capacity")], "a refused burst turn's ledger row says capacity: %s" % rows)


def case_fifo(c, db):
    """Global FIFO: turns sent round-robin to three busy nodes are told positions 1..6 and start in that order."""
    nodes = [c.start(n) for n in ("a", "b", "c")]
    sent = [send(nodes[i], "block%d" % i, slow(4)) for i in range(3)]
    for _, turn, _ in sent:  # every slot held before the six are sent
        c.runner(turn)
    blockers = [s for _, _, s in sent]
    streams = []
    for i in range(6):
        sid, turn, s = send(nodes[i % 3], "fifo%d" % i, data_code())
        _, st = until(s, lambda e: e["event"] == "status")
        check(st is not None and st["data"].get("step") == "queued" and st["data"]["position"] == i + 1,
              "turn %d (on %s) is told position %d: %s" % (i, "abc"[i % 3], i + 1, st and st["data"]))
        check(st["id"] is None, "a position is not stored (no id)")
        streams.append((turn, s))
    for turn, s in streams:
        check(read_to_done(s, []), "turn %s reads to done" % turn)
    # Start times on the database's clock (each claim's log line). Two nodes claiming at the same
    # moment take the two oldest entries; which UPDATE lands first is a matter of milliseconds.
    starts = [c.claim_line(t)["started_ms"] for t, _ in streams]
    late = [(i, j) for i in range(6) for j in range(i + 1, 6) if starts[j] < starts[i] - 50]
    check(not late, "the six started in the order they were sent (start ms %s)" % starts)
    for b in blockers:
        b.close()


def case_kill(c, db):
    """kill -9 of the node running a job: node_lost within the lease, the next job runs elsewhere, nothing twice."""
    nodes = {n: c.start(n) for n in ("a", "b", "c")}
    sid, victim, vs = send(nodes["a"], "victim", slow(30))
    r = c.runner(victim)
    others = [n for n in nodes if n != r]
    fillers = [send(nodes[others[i]], "filler%d" % i, slow(3)) for i in range(2)]
    for f in fillers:  # the survivors' slots held: the next turn waits
        c.runner(f[1])
    nsid, nxt, ns = send(nodes[others[0]], "next", data_code())
    vs.close()
    watcher = resume(nodes[others[1]], "victim", sid, victim, 0)
    time.sleep(0.5)
    t0 = time.monotonic()
    nodes[r].kill()
    seen = []
    check(read_to_done(watcher, seen), "the victim's stream on %s reads to done" % others[1])
    took = time.monotonic() - t0
    errs = [e["data"]["code"] for e in seen if e["event"] == "error"]
    check(errs == ["node_lost"], "the victim's turn ended error{node_lost}: %s" % errs)
    check(took <= LEASE_S + HEARTBEAT_S + 1.5, "within the lease plus a heartbeat (and a rescue round): %.2fs" % took)
    check(seen[-1]["data"]["state"] == "error", "done{state: error}")
    nseen = []
    check(read_to_done(ns, nseen), "the next waiting turn reads to done")
    check(nseen[-1]["data"]["state"] == "ok" and c.claims(nxt)[0] in others, "it ran on a surviving node (%s)" % c.claims(nxt))
    for t in [victim, nxt] + [f[1] for f in fillers]:
        check(len(c.claims(t)) == 1, "turn %s claimed exactly once" % t)
    check(ledger(db, victim + "-plot") == [("failed", "node_lost")], "the victim's ledger row says node_lost")
    free = Stream(nodes[others[0]].port, "POST", "/v1/sessions/%s/messages" % sid, message(data_code()), user="victim")
    check(free.status == 200, "the victim's user is free again")
    read_to_done(free, [])


def case_pause(c, db):
    """SIGSTOP of a node past its lease, then SIGCONT: it fences itself, writes nothing, rejoins with a new epoch."""
    nodes = {n: c.start(n) for n in ("a", "b", "c")}
    sid, turn, s = send(nodes["a"], "paused", slow(8))
    r = c.runner(turn)
    other = [n for n in nodes if n != r][0]
    s.close()
    watcher = resume(nodes[other], "paused", sid, turn, 0)
    time.sleep(0.5)
    os.kill(nodes[r].pid, signal.SIGSTOP)
    seen = []
    check(read_to_done(watcher, seen), "the paused node's turn ends, seen on %s" % other)
    check([e["data"]["code"] for e in seen if e["event"] == "error"] == ["node_lost"], "ended node_lost")
    last = stored_events(db, turn)
    os.kill(nodes[r].pid, signal.SIGCONT)
    check(nodes[r].wait_log("node_fenced", 10) is not None, "%s fences itself when it wakes" % r)
    rejoin = nodes[r].wait_log("node_rejoined", 10)
    check(rejoin is not None and rejoin["epoch"] == 2, "and rejoins with epoch 2: %s" % rejoin)
    time.sleep(9)  # past the job's own end, had it gone on
    check(stored_events(db, turn) == last, "nothing of the turn was written after node_lost: %s" % last)
    check(ledger(db, turn + "-plot") == [("failed", "node_lost")], "one ledger row, node_lost")
    st, body = request(nodes[r].port, "GET", "/readyz")
    # (its zygotes may still be warming: the cluster's own check is the one this case is about)
    check(body["checks"]["cluster"]["ok"], "the rejoined node's /readyz cluster check is ok: %s" % body["checks"]["cluster"])
    sid2, t2, s2 = send(nodes[r], "after", data_code())
    check(read_to_done(s2, []), "it admits and runs turns again")


def case_idle_kill(c, db):
    """kill -9 of an idle node: nothing lost; a waiting turn it admitted still runs elsewhere."""
    nodes = {n: c.start(n) for n in ("a", "b", "c")}
    blockers = [send(nodes[n], "hold" + n, slow(3))[2] for n in ("b", "c")]
    sid, held, hs = send(nodes["a"], "holda", slow(3))
    c.runner(held)  # a's slot held: what a admits next waits
    sid2, waiting, ws = send(nodes["a"], "waits", data_code())
    _, st = until(ws, lambda e: e["event"] == "status")
    check(st["data"].get("step") == "queued", "a turn admitted on a waits in the cluster's queue")
    ws.close()
    nodes["a"].kill()
    r = resume(nodes["b"], "waits", sid2, waiting, 0)
    seen = []
    check(read_to_done(r, seen), "its stream, resumed on b, reads to done")
    check(seen[-1]["data"]["state"] == "ok", "it ran (on %s) after a died: %s" % (c.claims(waiting), seen[-1]))
    check(len(c.claims(waiting)) == 1, "once")
    for b in blockers:
        b.close()


CASES = {"handoff": case_handoff, "limits": case_limits, "fifo": case_fifo, "kill": case_kill,
         "pause": case_pause, "idle_kill": case_idle_kill}


def run_case(cases, prefix="plotq-cluster-", env=None):
    """PLOTQD CASE from argv: the case on a Cluster on a schema of its own (PLOTQ-SKIP without
    PLOTQ_TEST_PG); the nodes stopped and the schema dropped whatever happens."""
    binary, case = sys.argv[1], sys.argv[2]
    server = pg.test_server()
    if server is None:
        return 0
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix=prefix)
    c = Cluster(binary, target, tmp, env)
    db = pg.Conn(target)
    try:
        cases[case](c, db)
    finally:
        c.stop()
        db.close()
        drop()
    print("PASS: " + case + " (logs in " + tmp + ")")
    return 0


def main():
    return run_case(CASES)


if __name__ == "__main__":
    sys.exit(main())
