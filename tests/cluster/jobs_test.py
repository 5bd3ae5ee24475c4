"""The assistant service's single jobs (/run-data, /render) on many plotqd nodes (issue 37,
docs/scale-out.md "Single jobs"), standard library only.

  jobs_test.py PLOTQD CASE     CASE: queue | kill

A job waits in the cluster's one queue beside the turns and runs on whichever node's slot frees
first; the node that took the request answers it. "Ran once" is counted from every node's log
(`sandbox_job`: the launcher's record of each job it ran; `cluster_claimed`: each claim), and the
ledger (`runs`). Schema of its own on PLOTQ_TEST_PG (PLOTQ-SKIP without it).
"""
import hashlib
import json
import os
import secrets
import sys
import threading
import time

from cluster_test import LEASE_S, HEARTBEAT_S, check, data_code, fail, ledger, run_case, slow, send, until
from faults_test import NO_CHROMIUM, jobs_run, say
from plotq_client import read_to_done, request


def sleeper(jid, sleep_s):
    """A /render body whose plot sleeps sleep_s seconds, then draws."""
    return {"job_id": jid, "library": "matplotlib", "themes": ["light"], "timeout_s": 90,
            "source": "import time\nimport matplotlib.pyplot as plt\ntime.sleep(%s)\n"
                      "fig, ax = plt.subplots(figsize=(16, 9), dpi=200)\nax.plot([1, 2], [3, 4])\n"
                      "fig.savefig('plot-light.png', dpi=200)\n" % sleep_s}


def claims_of(c, job_id):
    """The nodes whose log says they claimed this job id."""
    out = []
    for name in c.nodes:
        with open(os.path.join(c.tmp, name + ".log"), "rb") as f:
            out += [name for raw in f if b'"cluster_claimed"' in raw and ('"job_id":"%s"' % job_id).encode() in raw]
    return out


def queued(db, job_id):
    return db.execute("SELECT count(*) FROM queue_entries WHERE job_id = ? AND state = 'waiting'",
                      (job_id,)).fetchone()[0] == 1


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(0.05)
    fail("%s: not within %ss" % (what, timeout))


class Call(threading.Thread):
    """One request in a thread of its own: (status, body, seconds) once joined."""

    def __init__(self, port, path, body):
        super().__init__()
        self.port, self.path, self.body, self.out = port, path, body, None
        self.start()

    def run(self):
        t0 = time.monotonic()
        st, body = request(self.port, "POST", self.path, self.body, user="svc", timeout=120)
        self.out = (st, body, time.monotonic() - t0)

    def result(self):
        self.join(120)
        return self.out


def case_queue(c, db):
    """Jobs wait in the one queue in order with the turns, run where a slot frees, and are cancelled from any node."""
    a, b, cc = c.start("a"), c.start("b"), c.start("c")
    # Every slot busy: a with a job of its own (admitted claimed: it had the free slot), b and c with turns.
    hold = "hold-" + secrets.token_hex(4)
    held = Call(a.port, "/render", sleeper(hold, 4))
    wait_for(lambda: claims_of(c, hold), 30, "a claims its own job")
    check(claims_of(c, hold) == ["a"], "a job sent to a node with a free slot runs there")
    sent = [send(n, "block%d" % i, slow(4)) for i, n in enumerate((b, cc))]
    for _, turn, _ in sent:
        c.runner(turn)
    blockers = [st for _, _, st in sent]
    # Then, in this order: a job on a, a turn on b, a job on c (to be cancelled from b).
    first = "first-" + secrets.token_hex(4)
    j1 = Call(a.port, "/run-data", {"job_id": first, "source": data_code(), "timeout_s": 30})
    wait_for(lambda: queued(db, first), 30, "the job waits in the queue")
    _, turn, ts = send(b, "after", data_code())
    _, st = until(ts, lambda e: e["event"] == "status")
    check(st["data"].get("step") == "queued" and st["data"]["position"] == 2,
          "the turn sent after the job is told position 2: the job waits before it (%s)" % st["data"])
    gone = "gone-" + secrets.token_hex(4)
    j3 = Call(cc.port, "/run-data", {"job_id": gone, "source": data_code(), "timeout_s": 30})
    wait_for(lambda: queued(db, gone), 30, "the job to cancel waits in the queue")
    st_c, body_c = request(b.port, "POST", "/render/%s/cancel" % gone, None, user="svc")
    check(st_c == 200 and body_c == {"cancelled": 1}, "its cancel on b (neither took it nor runs it): %s %s" % (st_c, body_c))
    s3, b3, _ = j3.result()
    check(s3 == 499 and b3 == {"detail": "cancelled"}, "the cancelled job's request on c answers 499 cancelled: %s %s" % (s3, b3))
    check(jobs_run(c, "data " + gone, at_least=0) == [], "the cancelled job never ran")
    check(ledger(db, gone) == [("refused", "cancelled")], "its ledger row: refused cancelled (%s)" % ledger(db, gone))

    s1, b1, _ = j1.result()
    check(s1 == 200 and b1["exit_code"] == 0 and b1["rows"] == 2, "the waiting job's request on a answers 200 with its table")
    ran = jobs_run(c, "data " + first)
    check(len(ran) == 1 and ran[0][1] == "ok", "it ran once, on %s (launcher log lines %s)" % (ran and ran[0][0], ran))
    check(ledger(db, first) == [("ok", None)], "one ledger row, ok")
    check(read_to_done(ts, []), "the turn behind it reads to done")
    order = [claims_of(c, first), c.claims(turn)]
    check(all(len(o) == 1 for o in order), "the job and the turn were each claimed once: %s" % order)
    starts = (c.claim_line(first)["started_ms"], c.claim_line(turn)["started_ms"])
    check(starts[0] <= starts[1] + 50, "the job started before the turn sent after it (start ms %s)" % (starts,))
    sh, bh, _ = held.result()
    check(sh == 200 and bh["outputs"]["light"]["exit_code"] == 0, "a's own job answered 200")
    # The same job id again, on another node: the kept answer, nothing run.
    again = request(cc.port, "POST", "/run-data", {"job_id": first, "source": data_code(), "timeout_s": 30}, user="svc")
    check(again == (200, b1), "sent again to c: the same answer")
    check(len(jobs_run(c, "data " + first)) == 1, "still one run")

    # A key a node claimed and then died with before enqueueing the job (a running key, no entry):
    # the next request for it takes it over and runs it, once.
    orphan = "orphan-" + secrets.token_hex(4)
    body = {"job_id": orphan, "source": data_code(), "timeout_s": 30}
    fingerprint = hashlib.sha256(json.dumps(body, separators=(",", ":"), sort_keys=True).encode()).hexdigest()
    db.execute("INSERT INTO idempotency(job_id, kind, fingerprint, state, created_at) "
               "VALUES (?, 'data', ?, 'running', '2026-01-01T00:00:00Z')", (orphan, fingerprint))
    st_o, body_o = request(b.port, "POST", "/run-data", body, user="svc", timeout=60)
    check(st_o == 200 and body_o["exit_code"] == 0, "a running key with no job in the queue is taken over and run: %s" % st_o)
    check(len(jobs_run(c, "data " + orphan)) == 1, "once")
    for s in blockers:
        s.close()


def case_kill(c, db):
    """kill -9 of the node running another node's job: the request answers node_lost, a retry too; it ran once."""
    a, b, cc = c.start("a"), c.start("b"), c.start("c")
    _, blocker, bs = send(a, "blocker", slow(30))
    wait_for(lambda: c.claims(blocker), 30, "a claims its blocker")
    check(c.claims(blocker) == ["a"], "a is busy with its own turn")
    victim = "victim-" + secrets.token_hex(4)
    body = sleeper(victim, 30)
    call = Call(a.port, "/render", body)
    runner = wait_for(lambda: claims_of(c, victim), 30, "someone claims the job")[0]
    check(runner in ("b", "c"), "the job sent to the busy a runs on %s" % runner)
    # (part of the scenario, not a wait for an event: the kill lands a second into the job's run,
    # which sleeps 30 s; the claim above is the event that it runs)
    time.sleep(1.0)
    t0 = time.monotonic()
    c.nodes[runner].kill()
    say("killed %s" % runner)
    st, got, _ = call.result()
    took = time.monotonic() - t0
    check(st == 503 and got == {"detail": "node_lost"}, "a answers the job 503 node_lost: %s %s" % (st, got))
    check(took <= LEASE_S + HEARTBEAT_S + 2.5, "within the lease, a heartbeat and a rescue round (%.2f s)" % took)
    survivor = c.nodes["b" if runner == "c" else "c"]
    again = request(survivor.port, "POST", "/render", body, user="svc", timeout=60)
    check(again == (503, {"detail": "node_lost"}), "the same job id sent again (to %s): node_lost, not run again: %s"
          % ("b" if runner == "c" else "c", again))
    check(claims_of(c, victim) == [runner], "claimed once, by the killed node")
    check(jobs_run(c, "render %s light" % victim, at_least=0) == [], "no node ran it to an end (the killed one never logged it)")
    rows = db.execute("SELECT outcome, reason, theme FROM runs WHERE job_id = ?", (victim,)).fetchall()
    check(rows == [("failed", "node_lost", "light")], "its ledger row: failed node_lost, light: %s" % rows)
    left = db.execute("SELECT count(*) FROM queue_entries WHERE job_id = ?", (victim,)).fetchone()[0]
    check(left == 0, "no queue entry of it left")
    counts = db.execute("SELECT waiting, running FROM queue_counts").fetchone()
    live = db.execute("SELECT count(*) FILTER (WHERE state = 'waiting'), count(*) FILTER (WHERE state = 'running') "
                      "FROM queue_entries").fetchone()
    check(tuple(counts) == tuple(live), "queue_counts agrees with the entries: %s vs %s" % (counts, live))
    # A job sent now runs on a survivor.
    fresh = "fresh-" + secrets.token_hex(4)
    st, got = request(a.port, "POST", "/run-data", {"job_id": fresh, "source": data_code(), "timeout_s": 30},
                      user="svc", timeout=60)
    check(st == 200 and got["exit_code"] == 0, "a new job sent to a runs (on %s)" % claims_of(c, fresh))
    bs.close()


CASES = {"queue": case_queue, "kill": case_kill}


def main():
    return run_case(CASES, "plotq-jobs-", dict(NO_CHROMIUM))


if __name__ == "__main__":
    sys.exit(main())
