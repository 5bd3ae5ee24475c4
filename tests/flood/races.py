"""flood.races: 200 requests released at once against one cap (issue 16, section 3) admit exactly
the cap, and every other one is refused with the cap's own code:

- messages per minute, one user over two sessions: the cap answered, the rest refusal{rate_limited}
  (a user has one turn in flight, a plain one too until its done is stored: a 409 run_active is
  sent again, so that every request reaches the cap);
- messages per day, likewise: refusal{daily_limit};
- daily data runs of chat turns, one user over two sessions (409 run_active sent again, likewise):
  the cap run, the rest refusal{data_runs_exhausted};
- /run-data against the queue's capacity (distinct job ids): 1 started + capacity queued, the rest
  503 capacity; and one job id sent 200 times: one run (one ledger row), 200 equal answers; with 200
  different payloads: one answer, 199 409 job_conflict.

The sandbox parts print PLOTQ-SKIP when the sandbox cannot run here. Minute and day boundaries
(UTC) are waited out so one race never straddles two windows."""
import json
import random
import sqlite3
import sys
import threading
import time
from collections import Counter

from flood_lib import Stream, new_session, report, request, start, still_serving

N = 200
DATA = "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2, 3]})\n"


def away_from_boundaries(span_s=25, minute=True):
    """Sleeps until the next span_s seconds lie inside one UTC day (and one UTC minute)."""
    while True:
        t = time.time()
        if (not minute or t % 60 < 60 - span_s - 1) and t % 86400 < 86400 - span_s - 1:
            return
        time.sleep(0.5)


def in_parallel(n, fn):
    """Runs fn(i) for i < n on n threads released together; the list of their results."""
    out = [None] * n
    gate = threading.Barrier(n)

    def one(i):
        gate.wait()
        try:
            out[i] = fn(i)
        except Exception as e:  # noqa: BLE001 - a transport failure is an outcome to count
            out[i] = "raised %s" % type(e).__name__

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def turn_outcome(port, sid, user, body, retry_active_s=0):
    """'ok', 'refusal:<code>', 'error:<code>', or 'http:<code>' of one message read to done."""
    end = time.monotonic() + retry_active_s
    while True:
        s = Stream(port, "POST", "/v1/sessions/%s/messages" % sid, body, user=user, timeout=60)
        if s.status == 409 and s.error == "run_active" and time.monotonic() < end:
            time.sleep(random.uniform(0.1, 0.3))
            continue
        break
    if s.status != 200:
        return "http:%s" % s.error
    names, what = [], None
    while True:
        ev = s.next()
        if ev is None:
            break
        names.append(ev["event"])
        if ev["event"] in ("refusal", "error") and what is None:
            what = "%s:%s" % (ev["event"], ev["data"]["code"])
        if ev["event"] == "done":
            break
    s.close()
    if names[-1:] != ["done"]:
        return "no done"
    return what or "ok"


def expect(fail, name, got, want):
    c = Counter(got)
    print("race %-40s %s" % (name, dict(c)), flush=True)
    if c != Counter(want):
        fail.append("%s: wanted %s, got %s" % (name, dict(Counter(want)), dict(c)))


def message_race(d, fail, user, name, cap, refusal):
    """N messages of one user over two sessions at once: exactly cap answer, the rest are refused."""
    sids = [new_session(d.port, user), new_session(d.port, user)]
    away_from_boundaries()
    got = in_parallel(N, lambda i: turn_outcome(d.port, sids[i % 2], user, {"text": "%s%d" % (user[0], i)},
                                                retry_active_s=30))
    expect(fail, "%s (cap %d)" % (name, cap), got, ["ok"] * cap + ["refusal:" + refusal] * (N - cap))


def message_races(binary, fail):
    cap = 10
    d, _ = start(binary, {"PLOTQ_USER_MESSAGES_PER_MINUTE": str(cap), "PLOTQ_RUNS_PER_MINUTE": "1",
                          "PLOTQ_RATE_WINDOW_S": "600", "PLOTQ_QUEUE_MAX_WAIT_S": "6000"}, "races1")
    try:
        message_race(d, fail, "minute", "messages per minute", cap, "rate_limited")
        run_data_capacity(d, fail)
        still_serving(d, fail, "after the minute race")
    finally:
        d.stop()
    cap = 7
    d, _ = start(binary, {"PLOTQ_USER_MESSAGES_PER_MINUTE": "100000", "PLOTQ_USER_MESSAGES_PER_DAY": str(cap)}, "races2")
    try:
        message_race(d, fail, "day", "messages per day", cap, "daily_limit")
        still_serving(d, fail, "after the day race")
    finally:
        d.stop()


def run_data_capacity(d, fail):
    """Capacity floor(1 x 6000 / 600) = 10 behind the one started; the admitted wait until their
    clients leave (which cancels them), the refused are answered at once."""
    st, status = request(d.port, "GET", "/v1/status")
    cap = status.get("capacity") if st == 200 else None
    conns = [None] * N

    def one(i):
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", d.port, timeout=8)
        conns[i] = c
        c.request("POST", "/run-data", json.dumps({"job_id": "cap-%d" % i, "source": DATA, "timeout_s": 5}),
                  {"Content-Type": "application/json", "X-Plotq-User": "svc"})
        try:
            r = c.getresponse()
            body = r.read()
            return "%d:%s" % (r.status, json.loads(body).get("detail", "answer") if r.status != 200 else "answer")
        except OSError:
            return "waiting"  # still queued (or running) when the client gave up: admitted

    got = in_parallel(N, one)
    for c in conns:
        if c:
            c.close()
    # The started one may end within the wait (a quick job, or no sandbox here): admitted either way.
    got = ["admitted" if g == "waiting" or g.startswith("200:") or g.startswith("503:sandbox") else g for g in got]
    expect(fail, "/run-data at the queue's capacity (%s)" % cap, got,
           ["admitted"] * (1 + (cap or 0)) + ["503:capacity"] * (N - 1 - (cap or 0)))


def data_races(binary, fail):
    cap = 3
    d, _ = start(binary, {"PLOTQ_USER_MESSAGES_PER_MINUTE": "100000", "PLOTQ_DAILY_DATA_RUNS": str(cap),
                          "PLOTQ_RUNS_PER_MINUTE": "100000", "PLOTQ_WARM_MODES": "data"}, "races3")
    try:
        if not d.wait_log("sandbox", 10, lambda ev: ev.get("ready") is True):
            print("PLOTQ-SKIP: the sandbox cannot run here: the data-run and /run-data races need it", flush=True)
            sys.exit(0)
        sids = [new_session(d.port, "runs"), new_session(d.port, "runs")]
        away_from_boundaries(120, minute=False)
        body = {"text": "t", "action": {"kind": "data", "code": DATA, "source_language": "python"}}
        got = in_parallel(N, lambda i: turn_outcome(d.port, sids[i % 2], "runs", body, retry_active_s=90))
        expect(fail, "daily data runs (cap %d)" % cap, got, ["ok"] * cap + ["refusal:data_runs_exhausted"] * (N - cap))

        def same(i):
            return request(d.port, "POST", "/run-data", {"job_id": "same", "source": DATA, "timeout_s": 10},
                           user="svc", timeout=60)
        answers = in_parallel(N, same)
        codes = [a[0] if isinstance(a, tuple) else a for a in answers]
        expect(fail, "/run-data one job id, one payload", codes, [200] * N)
        bodies = {json.dumps(a[1], sort_keys=True) for a in answers if isinstance(a, tuple) and a[0] == 200}
        if len(bodies) != 1:
            fail.append("/run-data one job id: %d different answers" % len(bodies))

        def different(i):
            st, b = request(d.port, "POST", "/run-data", {"job_id": "other", "source": DATA + "# %d\n" % i,
                                                           "timeout_s": 10}, user="svc", timeout=60)
            return "%d:%s" % (st, b.get("detail", "answer") if isinstance(b, dict) else "?")
        got = in_parallel(N, different)
        got = ["%d:answer" % 200 if g == "200:answer" else g for g in got]
        expect(fail, "/run-data one job id, 200 payloads", got, ["200:answer"] + ["409:job_conflict"] * (N - 1))
        still_serving(d, fail, "after the data races")
    finally:
        d.stop()
    db = sqlite3.connect(d.db_path)
    rows = dict(db.execute("SELECT job_id, count(*) FROM runs WHERE job_id IN ('same', 'other') GROUP BY job_id"))
    db.close()
    if rows != {"same": 1, "other": 1}:
        fail.append("ledger rows of the raced job ids: wanted one each, got %r" % rows)


def main():
    # Two ctests (messages, runs): the runs part may skip (no sandbox) without hiding the other.
    fail = []
    if sys.argv[2] == "messages":
        message_races(sys.argv[1], fail)
    else:
        data_races(sys.argv[1], fail)
    return report("races " + sys.argv[2], fail, "every cap admitted exactly its count, the rest refused with its code")


if __name__ == "__main__":
    sys.exit(main())
