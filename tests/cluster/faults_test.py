"""Faults of many plotqd nodes on one PostgreSQL (issue 37, docs/scale-out.md), standard library only.

  faults_test.py PLOTQD CASE     CASE: idempotency | partition | pg_restart

idempotency runs on a schema of its own on PLOTQ_TEST_PG (PLOTQ-SKIP without it); partition and
pg_restart start a throwaway PostgreSQL of their own (tools/pg.sh start; PLOTQ-SKIP without the
server binaries), which partition reaches over TCP from a node in its own network namespace (root,
iproute2 and nsenter; else PLOTQ-SKIP) and pg_restart stops and starts again under load. Each case
reads as a transcript, as cluster_test.py's do (its helpers are shared); "ran once" is counted from
every node's log (`sandbox_job` lines: the launcher's own record of each job it ran, which model
code cannot write), the ledger (`runs`) and the turn's stored events.
"""
import http.client
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import cluster_test as ct
from cluster_test import LEASE_S, HEARTBEAT_S, Cluster, check, data_code, fail, ledger, message, slow
import pg
from plotq_client import Plotqd, Stream, read_to_done, request, request_h

TRANSPORT = (OSError, http.client.HTTPException)
T0 = time.monotonic()


def say(msg):
    """A line of the transcript that is not a check, with the case's clock."""
    print("[%5.1f s] %s" % (time.monotonic() - T0, msg), flush=True)


# partition and pg_restart: a statement the server does not answer fails after 2 s + 3 s (the
# driver's own deadline), a connect after 2 s, and /readyz reads a probe at most 250 ms old; with the
# defaults (10 s, 5 s, 1 s) a node stuck on a dead link takes longer than a CI budget to come back.
FAULT_ENV = {"PLOTQ_DB_STATEMENT_TIMEOUT_MS": "2000", "PLOTQ_DB_CONNECT_TIMEOUT_S": "2", "PLOTQ_DB_PROBE_MS": "250"}
# No figure renderer: these cases draw no figure, and a Chromium per node starting on 2 cores would
# only hold /readyz at 503 for many seconds (its check says "disabled" then).
NO_CHROMIUM = {"PLOTQ_CHROMIUM": "/nonexistent/chromium"}
FAULT_ENV.update(NO_CHROMIUM)


def aborted_statements(server):
    """Statements PostgreSQL refused because they ran inside a transaction that had already failed
    (25P02): a connection left in a failed transaction by its last user."""
    with open(os.path.join(server.dir, "log"), errors="replace") as f:
        lines = f.read().splitlines()
    return [lines[i] + " / " + (lines[i + 1] if i + 1 < len(lines) else "") for i, line in enumerate(lines)
            if "current transaction is aborted" in line]


def leftovers(c, server):
    """What a fenced node's refused transactions may leave on its connections, as checks."""
    return [(not sql_failures(c), "no store call of a node failed with an SQL error of no outage class: %s" % sql_failures(c)[:3]),
            (not aborted_statements(server), "no statement ran inside an already failed transaction (PostgreSQL's log): %s"
             % aborted_statements(server)[:3])]


def sql_failures(c):
    """Store calls of every node that failed with an SQL error of no outage class (code `postgresql`)."""
    out = []
    for name in c.nodes:
        with open(os.path.join(c.tmp, name + ".log"), "rb") as f:
            out += ["%s: %s" % (name, raw.decode(errors="replace").strip()) for raw in f if b'"code":"postgresql"' in raw]
    return out


def jobs_run(c, label, at_least=1):
    """(node, reason) of every sandbox job with this label, in every node's log file (the launcher
    logs a job as it ends, before its answer; a node's log file is written from its stderr by a
    thread of this test, so a line may lag an answer by a moment: up to 3 s is waited for
    `at_least` lines)."""
    end = time.monotonic() + 3
    while True:
        out = []
        for name in c.nodes:
            with open(os.path.join(c.tmp, name + ".log"), "rb") as f:
                for raw in f:
                    if b'"sandbox_job"' in raw and label.encode() in raw:
                        ev = json.loads(raw)
                        if ev.get("label") == label:
                            out.append((name, ev["reason"]))
        if len(out) >= at_least or time.monotonic() > end:
            return out
        time.sleep(0.05)


def check_all(items):
    """The last checks of a case, each (cond, msg), all printed before the verdict: the ones that
    catch what a fenced node leaves behind are independent of each other."""
    for cond, msg in items:
        print(("ok: " if cond else "FAIL: ") + msg)
    if not all(cond for cond, _ in items):
        fail("%d of the last %d checks failed" % (sum(1 for cond, _ in items if not cond), len(items)))


def keep_log(server, tmp):
    """The own server's log, kept with the nodes' logs (tools/pg.sh stop removes its dir)."""
    try:
        shutil.copy(os.path.join(server.dir, "log"), os.path.join(tmp, "postgresql.log"))
    except OSError:
        pass


def post_at_once(calls):
    """Runs each (port, path, body) in its own thread, released together by a barrier."""
    barrier = threading.Barrier(len(calls))
    out = [None] * len(calls)

    def go(i, port, path, body):
        barrier.wait()
        t0 = time.monotonic()
        try:
            out[i] = request(port, "POST", path, body, user="svc", timeout=60) + (time.monotonic() - t0,)
        except TRANSPORT as e:
            out[i] = (None, repr(e), time.monotonic() - t0)

    ts = [threading.Thread(target=go, args=(i,) + call) for i, call in enumerate(calls)]
    [t.start() for t in ts]
    [t.join(90) for t in ts]
    return out


# ---- idempotency ----

def case_idempotency(c, db):
    """The same job id and payload sent to two nodes at the same moment runs once; both get its answer."""
    a, b = c.start("a"), c.start("b")
    jobs = []
    for k in range(3):
        jid = "idem-data-%d-%s" % (k, secrets.token_hex(4))
        body = {"job_id": jid, "source": data_code().replace("[3, 4]", "[%d, 4]" % (10 + k)), "timeout_s": 20}
        jobs.append(("/run-data", body, "data " + jid))
    jid = "idem-render-" + secrets.token_hex(4)
    # Sleeps 1 s first: the second request finds the key running on the other node and waits for it.
    # (A generous timeout: a cold matplotlib on a loaded 2-core machine has taken 20 s.)
    jobs.append(("/render", {"job_id": jid, "library": "matplotlib", "themes": ["light"], "timeout_s": 90,
                             "source": "import time\nimport matplotlib.pyplot as plt\ntime.sleep(1)\n"
                                       "fig, ax = plt.subplots(figsize=(16, 9), dpi=200)\nax.plot([1, 2], [3, 4])\n"
                                       "fig.savefig('plot-light.png', dpi=200)\n"},
                 "render %s light" % jid))
    for path, body, label in jobs:
        jid = body["job_id"]
        (sa, ra, ta), (sb, rb, tb) = post_at_once([(a.port, path, body), (b.port, path, body)])
        check(sa == 200 and sb == 200, "%s %s sent to a and b at once: both 200 (%s, %s)" % (path, jid, sa, sb))
        check(ra == rb, "both answers are equal")
        if path == "/render":
            check(min(ta, tb) >= 1.0, "both requests lasted the job's 1 s sleep and more (%.2f s, %.2f s): the node that "
                  "did not run it waited for the other's answer" % (ta, tb))
        out = ra if path == "/run-data" else ra["outputs"]["light"]
        check(out["exit_code"] == 0 and out["reason"] is None, "the answer is the job's own: exit_code %s, reason %s"
              % (out["exit_code"], out["reason"]))
        ran = jobs_run(c, label)
        check(len(ran) == 1 and ran[0][1] == "ok", "the sandbox ran it once (launcher log lines: %s)" % ran)
        rows = ledger(db, jid)
        check(rows == [("ok", None)], "one ledger row for it: %s" % rows)
        # Sent again, one node after the other: the kept answer, nothing run.
        again = [request(n.port, "POST", path, body, user="svc", timeout=60) for n in (b, a)]
        check(all(s == 200 and r == ra for s, r in again), "sent again to b, then a: the same answer from each")
        check(len(jobs_run(c, label)) == 1 and len(ledger(db, jid)) == 1, "still one run and one ledger row")


# ---- partition ----

class Netns:
    """A network namespace joined to the host by a veth pair: host side HOST/30, node side NODE/30."""

    def __init__(self):
        n = os.getpid() % 100000
        self.ns, self.host_if, self.node_if = "plotq-part-%d" % n, "pqh%d" % n, "pqn%d" % n
        self.host, self.node = "10.231.%d.1" % (n % 250), "10.231.%d.2" % (n % 250)
        self.made = False

    @staticmethod
    def ip(*args):
        r = subprocess.run(["ip"] + list(args), capture_output=True, text=True, timeout=20)
        if r.returncode != 0:
            raise RuntimeError("ip %s: %s" % (" ".join(args), r.stderr.strip()))

    def why_not(self):
        if os.geteuid() != 0:
            return "not root: ip netns needs CAP_SYS_ADMIN"
        for tool in ("ip", "nsenter"):
            if not shutil.which(tool):
                return "no %s on PATH (iproute2, util-linux)" % tool
        if not os.path.isdir("/sys/fs/cgroup"):
            return "no /sys/fs/cgroup"
        try:
            self.ip("netns", "add", self.ns)
        except RuntimeError as e:
            return str(e)
        self.made = True
        return None

    def up(self):
        self.ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.node_if)
        self.ip("link", "set", self.node_if, "netns", self.ns)
        self.ip("addr", "add", self.host + "/30", "dev", self.host_if)
        self.ip("link", "set", self.host_if, "up")
        for args in (("addr", "add", self.node + "/30", "dev", self.node_if), ("link", "set", self.node_if, "up"),
                     ("link", "set", "lo", "up")):
            self.ip("-n", self.ns, *args)

    def link(self, state):
        self.ip("link", "set", self.host_if, state)

    def remove(self):
        if not self.made:
            return
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)  # both ends go
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)


def http_at(host, port, method, path, body=None, headers=None, timeout=30):
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        h = dict(headers or {})
        if body is not None:
            h["Content-Type"] = "application/json"
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=h)
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, json.loads(raw) if resp.getheader("Content-Type", "").startswith("application/json") else raw
    finally:
        conn.close()


class StreamAt(Stream):
    """plotq_client's Stream to a node off loopback (its address and a bearer token)."""

    def __init__(self, host, port, path, body, headers, timeout=30):
        self.conn = http.client.HTTPConnection(host, port, timeout=timeout)
        self.conn.request("POST", path, body=json.dumps(body), headers=dict(headers, **{
            "Accept": "text/event-stream", "Content-Type": "application/json"}))
        self.resp = self.conn.getresponse()
        self.status, self.headers, self.error = self.resp.status, dict(self.resp.getheaders()), None
        if self.status != 200:
            self.error = self.resp.read()[:200]
            self.close()


def sandbox_jobs(pid):
    """The processes in the slot cgroups of plotqd `pid` other than its own slot helpers, each
    checked to descend from it: its sandbox jobs."""
    root = "/sys/fs/cgroup/pids/plotq-%d" % pid
    out = []
    for dirpath, _, files in os.walk(root):
        if "cgroup.procs" in files and dirpath != root:
            with open(os.path.join(dirpath, "cgroup.procs")) as f:
                out += [int(x) for x in f.read().split()]
    return [q for q in out if parent(q) != pid and descends(q, pid)]


def parent(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descends(pid, ancestor):
    while pid and pid > 1:
        pid = parent(pid)
        if pid == ancestor:
            return True
    return False


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kept_events(db, turn):
    """The turn's stored events: (seq, name, data parsed)."""
    return [(q, e, json.loads(d)) for q, e, d in db.execute(
        "SELECT seq, event, data FROM turn_events WHERE turn_id = ? ORDER BY seq", (turn,)).fetchall()]


def node_row(db, node):
    return db.execute("SELECT epoch, state FROM nodes WHERE id = ?", (node,)).fetchone()


def case_partition(binary, tmp):
    """A node cut off from PostgreSQL by a network partition fences itself, claims nothing, is
    rescued by the others, and rejoins with a new epoch; its late writes change nothing."""
    net = Netns()
    why = net.why_not() or pg.server_binaries()
    if why:
        net.remove()
        print("PLOTQ-SKIP: " + why)
        return False
    server = c = db = None
    try:
        net.up()
        os.environ["PLOTQ_PG_LISTEN"] = net.host  # tools/pg.sh: listen on the veth's host side too
        server = pg.Server(tmp).start()
        with open(os.path.join(server.dir, "data", "pg_hba.conf"), "a") as f:
            f.write("host all all %s/32 trust\n" % net.node)
        db = pg.Conn(server.conninfo)
        db.execute("SELECT pg_reload_conf()")
        say("PostgreSQL on %s:5432 (TCP, the veth's host side); node p in netns %s at %s; a and b on its "
              "Unix socket; lease %.1f s, heartbeat %.1f s; settings %s" % (net.host, net.ns, net.node, LEASE_S, HEARTBEAT_S, FAULT_ENV))
        c = Cluster(binary, server.conninfo, tmp, FAULT_ENV)
        # p off loopback: production mode, bearer tokens. nsenter --net (not `ip netns exec`, which
        # mounts a fresh /sys without the cgroup hierarchies the sandbox's slots live in).
        tok = {u: "tok-%s-%s" % (u, secrets.token_hex(12)) for u in ("part", "svc", "after")}
        auth = {u: {"Authorization": "Bearer " + t} for u, t in tok.items()}
        wrapper = os.path.join(tmp, "plotqd-in-netns")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\nexec nsenter --net=/run/netns/%s -- %s\n" % (net.ns, os.path.abspath(binary)))
        os.chmod(wrapper, 0o755)
        env = dict(c.env, PLOTQ_NODE_ID="p", PLOTQ_LISTEN=net.node + ":0", PLOTQ_ENVIRONMENT="production",
                   PLOTQ_TOKENS="%s=part,%s=svc:assistant,%s=after" % (tok["part"], tok["svc"], tok["after"]))
        p = c.nodes["p"] = Plotqd(wrapper, "host=%s port=5432 user=postgres dbname=postgres" % net.host,
                                  os.path.join(tmp, "p.log"), env).start()
        check(descends(p.pid, os.getpid()) and os.readlink("/proc/%d/ns/net" % p.pid) != os.readlink("/proc/self/ns/net"),
              "p (pid %d) runs in a network namespace of its own" % p.pid)
        st, body = http_at(net.node, p.port, "POST", "/v1/sessions", headers=auth["part"])
        check(st == 201, "p answers over the veth with a bearer token: a session (%s)" % st)
        sid = body["id"]
        ps = StreamAt(net.node, p.port, "/v1/sessions/%s/messages" % sid, slow(30), auth["part"], timeout=20)
        turn = ps.headers.get("X-Plotq-Turn")
        check(ps.status == 200 and c.runner(turn) == "p", "p alone admits and claims a plot turn that sleeps 30 s")
        a, b = c.start("a"), c.start("b")
        job_label = "render %s-plot light" % turn
        end = time.monotonic() + 10
        while not sandbox_jobs(p.pid) and time.monotonic() < end:
            time.sleep(0.05)
        kids = sandbox_jobs(p.pid)
        check(kids, "its sandbox job runs: pids %s in p's slot cgroups, descendants of p" % kids)
        watcher = ct.resume(a, "part", sid, turn, 0)

        net.link("down")
        t_down = time.monotonic()
        say("link %s down" % net.host_if)
        fenced = p.wait_log("node_fenced", LEASE_S + 5)
        took = time.monotonic() - t_down
        check(fenced is not None and fenced["epoch"] == 1, "p's log says fenced: %s" % fenced)
        check(took <= LEASE_S + 1.0, "within its lease: %.2f s after the link went down" % took)
        end = time.monotonic() + 3
        while any(alive(k) for k in kids) and time.monotonic() < end:
            time.sleep(0.05)
        check(not any(alive(k) for k in kids) and not sandbox_jobs(p.pid),
              "its sandbox job is gone (pids %s, p's slot cgroups hold no job)" % kids)
        seen = []
        check(read_to_done(watcher, seen), "the turn's stream, followed on a, reads to done")
        lost_after = time.monotonic() - t_down
        errs = [e["data"]["code"] for e in seen if e["event"] == "error"]
        check(errs == ["node_lost"], "the others' rescue ended it error{node_lost}: %s (%.2f s after the link went down)"
              % (errs, lost_after))
        check(ledger(db, turn + "-plot") == [("failed", "node_lost")], "its ledger row: failed/node_lost")
        check(node_row(db, "p") == (1, "lost"), "nodes: p is lost at epoch 1: %s" % (node_row(db, "p"),))
        _, mid, ms = ct.send(b, "mid", data_code())
        mseen = []
        check(read_to_done(ms, mseen) and mseen[-1]["data"]["state"] == "ok", "a data turn sent to b meanwhile runs to done")
        check(c.claims(mid) in (["a"], ["b"]), "it ran on %s, not on the partitioned p" % c.claims(mid))
        check([e["turn"] for e in p.events("cluster_claimed")] == [turn], "p claimed nothing while fenced")
        events, rows = kept_events(db, turn), ledger(db, turn + "-plot")

        net.link("up")
        t_up = time.monotonic()
        say("link %s up after %.1f s" % (net.host_if, t_up - t_down))
        rejoin = p.wait_log("node_rejoined", 20)
        check(rejoin is not None and rejoin["epoch"] == 2, "p rejoins with epoch 2 (%.2f s after the link came back): %s"
              % (time.monotonic() - t_up, rejoin))
        check(node_row(db, "p") == (2, "live"), "nodes: p is live at epoch 2: %s" % (node_row(db, "p"),))
        tail = []
        try:
            while True:
                ev = ps.next()
                if ev is None:
                    break
                tail.append(ev)
        except TRANSPORT as e:
            tail.append({"event": "transport", "data": repr(e)})
        check(tail and tail[-1]["event"] == "closing" and tail[-1]["data"]["reason"] == "node_fenced",
              "p's own stream of the turn, delivered once the link is back, ends closing{node_fenced}: %s"
              % [e["event"] for e in tail])
        time.sleep(1)
        check(kept_events(db, turn) == events, "the turn's stored events are unchanged: %s" % [e[:2] for e in events])
        check(ledger(db, turn + "-plot") == rows, "its ledger row is unchanged: %s" % rows)
        check(jobs_run(c, job_label) == [("p", "cancelled")] and c.claims(turn) == ["p"],
              "its job ran once, on p, and was killed there: %s" % jobs_run(c, job_label))

        st, body = http_at(net.node, p.port, "GET", "/readyz")
        check(body["checks"]["cluster"]["ok"], "p's /readyz cluster check is ok again: %s" % body["checks"]["cluster"])
        jid = "after-" + secrets.token_hex(4)
        st, body = http_at(net.node, p.port, "POST", "/run-data", {"job_id": jid, "source": data_code(), "timeout_s": 20},
                           headers=auth["svc"], timeout=60)
        ran = jobs_run(c, "data " + jid)
        check(st == 200 and body["exit_code"] == 0 and ran == [("p", "ok")] and ledger(db, jid) == [("ok", None)],
              "a /run-data sent to p runs in p's sandbox (%s: %s), its ledger row ok (%s)" % (st, ran, ledger(db, jid)))
        st, body = http_at(net.node, p.port, "POST", "/v1/sessions", headers=auth["after"])
        s2 = StreamAt(net.node, p.port, "/v1/sessions/%s/messages" % body["id"], message(data_code()), auth["after"])
        aseen = []
        check(read_to_done(s2, aseen) and aseen[-1]["data"]["state"] == "ok", "a data turn sent to p runs to done")
        check(all(n.proc.poll() is None for n in (p, a, b)), "p, a and b are alive")
        claims = [(e["turn"], e["started_ms"]) for e in p.events("cluster_claimed")]
        check(all(t == turn or ms >= rejoin["ts"] * 1000 for t, ms in claims),
              "p claimed nothing between its fence and its rejoin (its claims: %s)" % claims)
        late = [e for e in p.events("ledger_write_failed") if e["job_id"] == turn + "-plot"]
        # (docs/scale-out.md: a lost node's running work ends within the lease and a rescue round of its
        # last renewal; the margin is cluster.kill's)
        check_all([(lost_after <= LEASE_S + HEARTBEAT_S + 1.5, "the rescue came within the lease, a heartbeat and 1.5 s "
                    "of the cut: %.2f s" % lost_after),
                   ([e["code"] for e in late] == ["fenced"], "p's late ledger write for the killed job was refused by the "
                    "fence: %s" % late)] + leftovers(c, server))
    finally:
        if c:
            c.stop()
        if db:
            db.close()
        if server:
            keep_log(server, tmp)
            server.stop()
        net.remove()
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        say("cleaned up: netns %s %s, veth %s %s" % (
            net.ns, "LEFT" if net.ns in left else "removed", net.host_if,
            "LEFT" if os.path.exists("/sys/class/net/" + net.host_if) else "removed"))


# ---- pg_restart ----

DOWN_S = 4.0     # the server stays down twice the lease: every node's lease runs out, each must fence and rejoin
LOAD_S = 2.5     # load before the stop (after it: BACKOFF_S + 2 s)
ANSWER_S = 12.0  # any answer or stream read, also while the server is down
READY_S = 20.0   # every /readyz 200 again after the start
BACKOFF_S = 5.0  # a pool connection's longest reconnect step (store/pg_driver.cpp, docs/store.md): a call inside
                 # a step fails at once, so failures may trail the start (and /readyz 200) by this much
ERRORS = {"node_lost", "store_unavailable"}  # how a turn the outage cut may end (docs/api.md)
REFUSALS = {(503, "store_unavailable"), (503, "unavailable"), (409, "run_active")}


class Load:
    """Client threads, one user each, sending data turns to the nodes round-robin and reading each
    to done (resuming on the next node with Last-Event-ID when a stream ends early)."""

    def __init__(self, nodes, n):
        self.nodes, self.n = nodes, n
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.turns = []    # {user, turn, node, t0, t_done, events: [(id, name, data)], idless, resumes, done}
        self.answers = []  # (what, node, t0, took, status, code, retry_after)
        self.broken = []   # (what, node, t0, error): no answer, or none in time
        self.threads = [threading.Thread(target=self.user, args=(i,), daemon=True) for i in range(n)]

    def answer(self, what, node, t0, status, code, headers):
        with self.lock:
            self.answers.append((what, node, t0, time.monotonic() - t0, status, code, (headers or {}).get("Retry-After")))

    def user(self, i):
        user, k, sid = "load%d" % i, i, None
        while not self.stop.is_set():
            name, node = self.nodes[k % len(self.nodes)]
            k += 1
            t0 = time.monotonic()
            try:
                if sid is None:
                    status, body, h = request_h(node.port, "POST", "/v1/sessions", user=user, timeout=ANSWER_S)
                    detail = body.get("detail") if isinstance(body, dict) and status != 201 else None
                    self.answer("session", name, t0, status, detail, h)
                    sid = body["id"] if status == 201 else None
                    if sid is None:
                        self.stop.wait(0.2)
                    continue
                s = Stream(node.port, "POST", "/v1/sessions/%s/messages" % sid, message(data_code()), user=user, timeout=ANSWER_S)
            except TRANSPORT as e:
                with self.lock:
                    self.broken.append(("request", name, t0, repr(e)))
                continue
            self.answer("message", name, t0, s.status, s.error, s.headers)
            if s.status != 200:
                self.stop.wait(0.2)
                continue
            rec = {"user": user, "turn": s.headers["X-Plotq-Turn"], "node": name, "t0": t0, "t_done": None,
                   "events": [], "idless": [], "resumes": [], "done": None}
            with self.lock:
                self.turns.append(rec)
            self.follow(rec, s, sid, k)
            self.stop.wait(0.15)

    def follow(self, rec, s, sid, k):
        while True:
            try:
                while True:
                    ev = s.next()
                    if ev is None:
                        break
                    if ev["id"] is None:
                        rec["idless"].append((ev["event"], ev["data"]))
                    else:
                        rec["events"].append((ev["id"], ev["event"], ev["data"]))
                    if ev["event"] == "done":
                        rec["done"], rec["t_done"] = ev["data"], time.monotonic()
                        return s.close()
            except TRANSPORT as e:
                with self.lock:
                    self.broken.append(("stream", rec["node"], rec["t0"], repr(e)))
                return
            s.close()
            # Closed before done (closing{node_fenced}, or its node could not go on): resume on the next
            # node, after the last event read, until one serves it.
            while True:
                if time.monotonic() - rec["t0"] > ANSWER_S + DOWN_S + READY_S:
                    with self.lock:
                        self.broken.append(("turn", rec["node"], rec["t0"], "not done after its resumes %s" % rec["resumes"]))
                    return
                name, node = self.nodes[k % len(self.nodes)]
                k += 1
                after = rec["events"][-1][0] if rec["events"] else 0
                t0 = time.monotonic()
                try:
                    s = Stream(node.port, "GET", "/v1/sessions/%s/turns/%s/events" % (sid, rec["turn"]), user=rec["user"],
                               headers={"Last-Event-ID": str(after)}, timeout=ANSWER_S)
                except TRANSPORT as e:
                    with self.lock:
                        self.broken.append(("resume", name, t0, repr(e)))
                    return
                self.answer("resume", name, t0, s.status, s.error, s.headers)
                rec["resumes"].append((name, s.status))
                if s.status == 200:
                    break
                time.sleep(0.25)


def readyz_all(nodes, want, within):
    """{name: (seconds, wall clock)} of each node's first /readyz `want` within `within` s."""
    t0, got, last = time.monotonic(), {}, {}
    while len(got) < len(nodes) and time.monotonic() - t0 < within:
        for name, n in nodes:
            if name in got:
                continue
            try:
                status, body = request(n.port, "GET", "/readyz", timeout=5)
            except TRANSPORT as e:
                status, body = None, repr(e)
            last[name] = (status, body.get("failing") if isinstance(body, dict) else body)
            if status == want:
                got[name] = (time.monotonic() - t0, time.time())
        time.sleep(0.05)
    return got, last


def case_pg_restart(binary, tmp):
    """The cluster's PostgreSQL stopped (longer than the lease) and started again under load."""
    why = pg.server_binaries()
    if why:
        print("PLOTQ-SKIP: " + why)
        return False
    server = pg.Server(tmp).start()
    # Limits out of the way: the load sends some 100 data turns per user.
    c = Cluster(binary, server.conninfo, tmp, dict(FAULT_ENV, PLOTQ_DAILY_DATA_RUNS="100000000",
                                                   PLOTQ_USER_MESSAGES_PER_DAY="100000000"))
    db = None
    try:
        nodes = [(n, c.start(n)) for n in ("a", "b", "c")]
        say("a, b and c started on the own server")
        got, last = readyz_all(nodes, 200, 60)
        check(len(got) == 3, "a, b and c: /readyz 200 before the load (%s)" % (last if len(got) < 3 else
              ", ".join("%s %.1f s" % (k, v[0]) for k, v in sorted(got.items()))))
        say("outage %.1f s, lease %.1f s: every node's lease runs out while the server is down" % (DOWN_S, LEASE_S))
        load = Load(nodes, 3)
        [t.start() for t in load.threads]
        time.sleep(LOAD_S)
        server.down("fast")
        t_down, w_down = time.monotonic(), time.time()
        down, last = readyz_all(nodes, 503, DOWN_S)
        check(len(down) == 3, "server stopped: /readyz 503 on every node (%s)" % (last if len(down) < 3 else
              ", ".join("%s after %.2f s" % (k, v[0]) for k, v in sorted(down.items()))))
        ready_while_down = []
        while time.monotonic() - t_down < DOWN_S:
            for name, n in nodes:
                if request(n.port, "GET", "/readyz", timeout=5)[0] != 503:
                    ready_while_down.append((name, round(time.monotonic() - t_down, 2)))
            time.sleep(0.1)
        check(not ready_while_down, "and stays 503 as long as the server is down: %s" % ready_while_down)
        fenced = {name: n.wait_log("node_fenced", 0.1, lambda e: e["ts"] >= w_down) for name, n in nodes}
        check(all(fenced.values()), "while it is down each node fences itself: %s" % {
            k: v and v["reason"] for k, v in fenced.items()})
        server.up()
        t_up = time.monotonic()
        say("server started again after %.1f s down" % (t_up - t_down))
        back, last = readyz_all(nodes, 200, READY_S)
        check(len(back) == 3, "every node's /readyz is 200 again (%s)" % (last if len(back) < 3 else
              ", ".join("%s %.2f s after the start" % (k, v[0]) for k, v in sorted(back.items()))))
        for name, n in nodes:
            r = n.wait_log("node_rejoined", 0.1, lambda e: e["ts"] >= w_down)  # (pg_ctl -w returns after the server accepts)
            check(r is not None and r["epoch"] == 2 and r["ts"] <= back[name][1],
                  "%s rejoined with epoch 2 before its /readyz said 200: %s" % (name, r))
        db = pg.Conn(server.conninfo)
        rows = db.execute("SELECT id, epoch, state FROM nodes ORDER BY id").fetchall()
        check(rows == [("a", 2, "live"), ("b", 2, "live"), ("c", 2, "live")], "nodes: %s" % rows)
        while time.monotonic() < t_up + BACKOFF_S + 2.5:
            time.sleep(0.05)
        load.stop.set()
        [t.join(ANSWER_S + 5) for t in load.threads]
        check(not any(t.is_alive() for t in load.threads), "every client thread returned")
        check(all(n.proc.poll() is None for _, n in nodes), "a, b and c are alive")

        # Answers: each in time, each failure in the vocabulary and within the outage.
        check(not load.broken, "every request and stream answered, none past %.0f s: %s" % (ANSWER_S, load.broken[:5]))
        slow_ones = [a for a in load.answers if a[3] > ANSWER_S]
        check(not slow_ones, "no answer took longer than %.0f s: %s" % (ANSWER_S, slow_ones[:5]))
        bad = [a for a in load.answers if not 200 <= a[4] < 300 and not (
            (a[4], a[5]) in REFUSALS and (a[4] != 503 or a[6]) and t_down - 1 <= a[2] <= t_up + BACKOFF_S)]
        check(not bad, "every refusal is 503 store_unavailable/unavailable (with Retry-After) or 409 run_active, "
              "from the stop to %.0f s after the start: %d refused, %s" % (BACKOFF_S, sum(1 for a in load.answers
                                                                                   if not 200 <= a[4] < 300), bad[:5]))
        before = [t for t in load.turns if t["t_done"] is not None and t["t_done"] < t_down]
        after = [t for t in load.turns if t["t0"] > t_up + BACKOFF_S]
        cut = [t for t in load.turns if t not in before and t not in after]
        ends = {}
        for t in cut:
            key = "%s%s" % (t["done"]["state"] if t["done"] else "no done", "".join(
                " " + n + ("{%s}" % (d.get("code") or d.get("reason")) if n in ("error", "closing") else "")
                for n, d in t["idless"]) + (" resumed" if t["resumes"] else ""))
            ends[key] = ends.get(key, 0) + 1
        say("turns: %d read to done before the stop; %d sent after it and within %.0f s of the start, ended: %s; "
              "%d sent later" % (len(before), len(cut), BACKOFF_S, ends, len(after)))
        check(len(before) >= 3 and all(t["done"]["state"] == "ok" for t in before), "before the stop %d turns, each ok"
              % len(before))
        check(all(t["done"] for t in load.turns), "every turn read to done, the cut ones by resuming")
        errs = {d["code"] for t in load.turns for _, n, d in t["events"] if n == "error"} | {
            d["code"] for t in load.turns for n, d in t["idless"] if n == "error"}
        check(errs <= ERRORS and all(t["done"]["state"] in ("ok", "error") for t in load.turns),
              "every turn ended ok or error, the errors in the vocabulary: %s" % sorted(errs))
        closing = {d["reason"] for t in load.turns for n, d in t["idless"] if n == "closing"}
        check(closing <= {"node_fenced"}, "streams closed early said node_fenced: %s" % sorted(closing))
        check(after and all(t["done"]["state"] == "ok" for t in after), "after: %d turns, each ok %s" % (
            len(after), [(t["node"], t["done"], [n for n, _ in t["idless"]]) for t in after if t["done"]["state"] != "ok"][:3]))

        say("load stopped")
        # The store: every event a client read is stored as read; nothing ran twice.
        end = time.monotonic() + 15
        while time.monotonic() < end and db.execute("SELECT count(*) FROM turns WHERE status <> 'done'").fetchone()[0]:
            time.sleep(0.2)
        left = db.execute("SELECT id, status, node, node_epoch FROM turns WHERE status <> 'done'").fetchall()
        check(not left, "no turn left open: %s" % left)
        lost = []
        for t in load.turns:
            kept = kept_events(db, t["turn"])
            if kept != t["events"]:
                lost.append((t["turn"], [e[:2] for e in t["events"]], [e[:2] for e in kept]))
        check(not lost, "every turn's events are stored exactly as its client read them (%d acknowledged before the "
              "stop, %d in all): %s" % (len(before), len(load.turns), lost[:3]))
        twice, booked = [], []
        for t in load.turns:
            runs_ = jobs_run(c, "data %s-data-1" % t["turn"], 1 if t["done"]["state"] == "ok" else 0)
            rows = ledger(db, t["turn"] + "-data-1")
            claims = c.claims(t["turn"])
            if len(runs_) > 1 or len(claims) > 1 or (t["done"]["state"] == "ok" and len(runs_) != 1):
                twice.append((t["turn"], runs_, claims))
            if len(rows) > 1:
                booked.append((t["turn"], "ran: %s, claimed by %s" % (runs_, claims), "ledger: %s" % rows))
        check(not twice, "no turn ran twice: its job in one sandbox, claimed once (%d turns: %s)" % (len(load.turns), twice[:3]))

        say("store checked")
        # Each node serves again: a turn sent to it runs to done, a /run-data runs in its sandbox.
        for name, n in nodes:
            _, turn, s = ct.send(n, "again-" + name, data_code())
            seen = []
            check(read_to_done(s, seen) and seen[-1]["data"]["state"] == "ok", "a turn sent to %s runs to done" % name)
            jid = "again-%s-%s" % (name, secrets.token_hex(4))
            st, body = request(n.port, "POST", "/run-data", {"job_id": jid, "source": data_code(), "timeout_s": 20},
                               user="svc", timeout=60)
            ran = jobs_run(c, "data " + jid)
            check(st == 200 and ran == [(name, "ok")] and ledger(db, jid) == [("ok", None)],
                  "a /run-data sent to %s runs in its sandbox, once, its ledger row ok (%s: %s)" % (name, st, ran))
        # Last, each on its own: what the outage left behind in the store and on the connections.
        entries = db.execute("SELECT turn_id, state, node, epoch FROM queue_entries").fetchall()
        check_all([(not entries, "no queue entry is left, every turn being done: %s" % entries),
                   (not booked, "no job has more than one ledger row (%s)" % booked[:3])]
                  + leftovers(c, server))
    finally:
        c.stop()
        if db:
            db.close()
        keep_log(server, tmp)
        server.stop()


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    binary, case = sys.argv[1], sys.argv[2]
    if case not in ("idempotency", "partition", "pg_restart"):
        sys.exit("usage: faults_test.py PLOTQD idempotency|partition|pg_restart")
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="plotq-faults-")
    os.chmod(tmp, 0o711)  # the own server runs as postgres and must reach its dir under tmp
    say("%s: logs in %s" % (case, tmp))
    if case == "idempotency":
        server = pg.test_server()
        if server is None:
            shutil.rmtree(tmp)
            return 0
        target, drop = pg.own_schema(server)
        c, db = Cluster(binary, target, tmp, NO_CHROMIUM), pg.Conn(target)
        try:
            case_idempotency(c, db)
        finally:
            c.stop()
            db.close()
            drop()
    elif (case_partition if case == "partition" else case_pg_restart)(binary, tmp) is False:
        shutil.rmtree(tmp)
        return 0  # skipped
    print("PASS: %s in %.1f s (logs in %s)" % (case, time.monotonic() - started, tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
