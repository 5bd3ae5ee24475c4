"""Cluster benchmarks (issue 37, docs/scale-out.md): real plotqd nodes on one PostgreSQL.

  PLOTQ_TEST_PG=CONNINFO python3 bench/cluster_bench.py PLOTQD [--only NAMES] [--turns N] [--rounds R]
        [--plain-turns N] [--backlog-users N] [--pin] [--waiting N] [--broadcasts N] [--open N] [--profile]

  NAMES: a comma-separated choice of the benchmarks below (default: all of them, in this order).

  claim     claim-to-start: a turn admitted on node a (its one slot busy) is claimed by b or c; the
            figure is the database's own clock (the claim's started_ms - the entry's enqueued_ms), so
            it is the queue's latency alone. Twice in one command: with the hints (NOTIFY, the default)
            and poll only (PLOTQ_CLUSTER_NOTIFY_MS=0: PLOTQ_CLUSTER_POLL_MS bounds it).
  drain     queue throughput: N (--turns) users each send one trivial data turn at once to one node,
            or spread over three nodes; the time until every turn is done, 1 node vs 3 (ratio in the
            same run). On a 2-core machine the nodes share the CPUs: the sandbox's work does not grow
            with the nodes, so the ratio measures the queue's overhead, not capacity.
  plain     a plain turn (a chat message with no action), request to done over a new connection, on
            node a: first with node a alone and nothing queued (the baseline), then while nodes b and
            c drain a backlog of data turns (--backlog-users closed-loop clients in a process of
            their own, each sending its next data turn to b or c as soon as its last is done) and
            a's slot is held by a sleeping plot (so that a runs none of them: it only answers the
            plain turns, admits nothing else, and polls and reads the queue as every node does).
            --plain-turns turns after 100 warm-up, /healthz alternated (the HTTP floor); p50/p99
            and the loaded / baseline ratio (target: p99 <= 2x). With --pin, both phases run with
            node a and this process on CPU 0 and, in the loaded phase, b and c (every thread of
            them and of their sandboxes) and the backlog clients on the last CPU, PostgreSQL
            unpinned: what the ratio is when the other nodes' sandbox work is not on a's cores (as
            on machines of their own), the store still shared.
  positions --waiting turns wait (sleeping plots, their streams open and idle) spread over three
            nodes whose one slot each is held by a sleeping plot; then --broadcasts times the
            running turn of one node (in turn) is cancelled: its slot frees, it claims the oldest
            waiting turn, and every other waiting stream must hear its position move up by one.
            Figures: cancel -> last waiting stream told its new position (and p50 of all of them),
            and the CPU seconds of each node and of the PostgreSQL server per second and per
            PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S (0.5 s), idle with the turns waiting and during the
            broadcasts (/proc/PID/stat; the server: every postgres process of its data dir).
  open      --open waiting turns (data turns, each of its own user; streams held open, each read to
            its first status{queued}) opened on one cluster node (its slot held), then spread over
            three (round-robin; every slot held). Figure: first request sent -> last stream told
            queued (target: <= 10 s on one node), with the nodes' and the server's CPU seconds.
            With --profile, pg_stat_activity is sampled every few ms meanwhile: the share of
            samples in which one of the nodes' backends ran each statement, and their waits.

Medians over rounds (claim, drain, plain); each round and each scenario on a schema of its own.
The client side of open and positions is one Python thread on raw sockets and epoll (RLIMIT_NOFILE's
soft limit raised to the hard one: a node takes PLOTQ_HTTP_MAX_CONNECTIONS + 256 for itself).
"""
import json
import multiprocessing
import os
import resource
import select
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
sys.path.insert(0, os.path.join(ROOT, "tests", "crash"))
import pg  # noqa: E402
from cluster_test import Cluster, send, data_code, slow  # noqa: E402
from plotq_client import Stream, new_session, read_to_done, request  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")

# Limits out of the way: one turn per user, but users may send as fast as they like, the queue's
# capacity (live nodes x RUNS_PER_MINUTE x MAX_WAIT_S / 60) far above what waits, and no waiting
# turn expires or gets an unchanged position re-sent (HEARTBEAT_S) while it is measured.
OPEN_ENV = {
    "PLOTQ_RUNS_PER_MINUTE": "100000",
    "PLOTQ_USER_MESSAGES_PER_MINUTE": "1000000",
    "PLOTQ_USER_MESSAGES_PER_DAY": "100000000",
    "PLOTQ_DAILY_DATA_RUNS": "100000000",
    "PLOTQ_DAILY_PIPELINE_RUNS": "100000000",
    "PLOTQ_QUEUE_MAX_WAIT_S": "86400",
    "PLOTQ_HEARTBEAT_S": "3600",
    "PLOTQ_TURN_DEADLINE_S": "86400",
    "PLOTQ_SANDBOX_MAX_TIMEOUT_S": "3600",
    "PLOTQ_TURN_RENDER_TIMEOUT_S": "120",  # its most: a sleeping plot holds a slot at most 120 s
    "PLOTQ_LOG_REQUESTS": "0",
    "PLOTQ_SHUTDOWN_GRACE_S": "1",
}
# A sleeping plot holds a node's slot (it takes no CPU; a data snippet may not sleep). A theme's
# render timeout is at most 120 s (PLOTQ_TURN_RENDER_TIMEOUT_S), so each scenario that needs held
# slots is over within HOLD_S of holding them; a holder that ended before is reported.
HOLD_S = 115


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


# ---- CPU seconds from /proc ----

def cpu_s(pid):
    """utime + stime of one process, seconds (0 when it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return 0.0
    fields = st[st.rfind(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def children_by_parent():
    """{parent pid: [child pids]} of every process now (from /proc/PID/stat's ppid)."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
            except OSError:
                continue
            kids.setdefault(int(st[st.rfind(")") + 2:].split()[1]), []).append(int(d))
    return kids


def postgres_pids():
    """Every process of the PostgreSQL server PLOTQ_TEST_PG names (its postmaster's children and itself)."""
    c = pg.Conn(os.environ["PLOTQ_TEST_PG"])
    try:
        data_dir = c.execute("SHOW data_directory").fetchone()[0]
    finally:
        c.close()
    with open(os.path.join(data_dir, "postmaster.pid")) as f:
        master = int(f.readline())
    return [master] + children_by_parent().get(master, [])


class CpuMeter:
    """CPU seconds of each node and of the PostgreSQL server between start() and stop()."""

    def __init__(self, nodes):
        self.nodes = dict(nodes)  # name -> pid

    def _now(self):
        out = {name: cpu_s(pid) for name, pid in self.nodes.items()}
        out["postgres"] = sum(cpu_s(p) for p in postgres_pids())
        return out

    def start(self):
        self.t0, self.c0 = time.monotonic(), self._now()
        return self

    def stop(self):
        self.wall = time.monotonic() - self.t0
        c1 = self._now()
        # a postgres backend that ended in between takes its seconds with it: never below 0
        self.used = {k: max(0.0, c1[k] - self.c0.get(k, 0.0)) for k in c1}
        return self

    def line(self, per=None):
        parts = []
        for k, v in self.used.items():
            s = "%s %.2f s (%.0f%% of a core" % (k, v, 100 * v / self.wall)
            if per:
                s += ", %.3f s per %g s" % (v / self.wall * per, per)
            parts.append(s + ")")
        return "; ".join(parts) + " over %.1f s" % self.wall


# ---- many open streams on raw sockets, read by one epoll thread ----

def _connect(port):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _message_bytes(port, session, user, body):
    data = json.dumps(body).encode()
    head = ("POST /v1/sessions/%s/messages HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Plotq-User: %s\r\n"
            "Accept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
            "Connection: close\r\n\r\n" % (session, port, user, len(data)))
    return head.encode() + data


class Streams:
    """Turn streams opened on raw sockets; one thread reads them all. For each stream: when it was
    first told queued, and every status{queued} frame after that as (time, position, waiting)."""

    def __init__(self):
        self.ep = select.epoll()
        self.socks = {}   # fd -> socket
        self.info = {}    # fd -> dict
        self.lock = threading.Lock()
        self.told = 0
        self.closed = 0  # streams that closed before they were told queued
        self.stop_ = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def open(self, port, session, user, body, key):
        s = _connect(port)
        s.sendall(_message_bytes(port, session, user, body))
        s.setblocking(False)
        fd = s.fileno()
        with self.lock:
            self.socks[fd] = s
            self.info[fd] = {"key": key, "buf": b"", "told_at": None, "statuses": [], "turn": None, "closed": False,
                             "events": []}
        self.ep.register(fd, select.EPOLLIN)
        return fd

    def _loop(self):
        while not self.stop_:
            for fd, _ in self.ep.poll(0.05):
                now = time.monotonic()
                s = self.socks.get(fd)
                if s is None:
                    continue
                inf = self.info[fd]
                try:
                    while True:
                        chunk = s.recv(65536)
                        if not chunk:
                            raise ConnectionResetError
                        inf["buf"] += chunk
                except BlockingIOError:
                    pass
                except OSError:
                    if not inf["closed"]:
                        inf["closed"] = True
                        if inf["told_at"] is None:
                            self.closed += 1  # closed before it was told queued
                    try:
                        self.ep.unregister(fd)
                    except OSError:
                        pass
                buf = inf["buf"]
                if inf["turn"] is None and b"\r\n\r\n" in buf:
                    head, _, buf = buf.partition(b"\r\n\r\n")
                    for line in head.split(b"\r\n"):
                        if line.lower().startswith(b"x-plotq-turn:"):
                            inf["turn"] = line.split(b":", 1)[1].strip().decode()
                    if inf["turn"] is None:
                        inf["turn"] = ""
                        inf["error"] = head.split(b"\r\n")[0].decode()
                while b"\n\n" in buf:
                    frame, _, buf = buf.partition(b"\n\n")
                    ev, data = None, None
                    for line in frame.split(b"\n"):
                        if line.startswith(b"event: "):
                            ev = line[7:].decode()
                        elif line.startswith(b"data: "):
                            data = line[6:]
                    if ev is None:
                        continue
                    inf["events"].append(ev)
                    if ev == "status" and data and b'"queued"' in data:
                        d = json.loads(data)
                        inf["statuses"].append((now, d.get("position"), d.get("waiting")))
                        if inf["told_at"] is None:
                            inf["told_at"] = now
                            self.told += 1
                inf["buf"] = buf

    def close(self):
        self.stop_ = True
        self.thread.join()
        for s in self.socks.values():
            s.close()
        self.ep.close()


def make_sessions(ports, users, threads=6):
    """{user: session id}, users' sessions made over keep-alive connections spread over the nodes."""
    import http.client
    out = {}
    lock = threading.Lock()
    chunks = [users[i::threads] for i in range(threads)]

    def work(i, chunk):
        port = ports[i % len(ports)]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for u in chunk:
            conn.request("POST", "/v1/sessions", headers={"X-Plotq-User": u})
            r = conn.getresponse()
            body = r.read()
            if r.status != 201:
                raise RuntimeError("session for %s: %d %s" % (u, r.status, body[:100]))
            with lock:
                out[u] = json.loads(body)["id"]
        conn.close()

    ts = [threading.Thread(target=work, args=(i, c)) for i, c in enumerate(chunks)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    return out


def hold(c, node, user):
    """A sleeping plot in the node's slot; returns (session, turn, stream) once it runs there."""
    sid, turn, s = send(node, user, slow(HOLD_S))
    c.runner(turn, timeout=60)
    return sid, turn, s


# ---- claim, drain (as before) ----

def claim_round(binary, server, n, env=None):
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix="plotq-cbench-")
    c = Cluster(binary, target, tmp, env)
    try:
        a = c.start("a")
        _, blocker, bs = send(a, "blocker", slow(25))
        c.runner(blocker)
        c.start("b")
        c.start("c")
        waits = []
        for i in range(n):
            _, turn, s = send(a, "u%d" % i, data_code())
            read_to_done(s, [])
            waits.append(c.claim_line(turn)["waited_ms"])
        bs.close()
        return waits
    finally:
        c.stop()
        drop()
        shutil.rmtree(tmp, ignore_errors=True)


def drain_round(binary, server, n, nodes):
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix="plotq-cbench-")
    c = Cluster(binary, target, tmp, {"PLOTQ_RUNS_PER_MINUTE": "100000", "PLOTQ_QUEUE_MAX_WAIT_S": "600"})
    try:
        started = [c.start(name) for name in "abc"[:nodes]]
        done = []

        def one(i):
            _, _, s = send(started[i % nodes], "d%d" % i, data_code())
            read_to_done(s, [])
            done.append(i)

        t0 = time.monotonic()
        ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        took = time.monotonic() - t0
        assert len(done) == n
        return took
    finally:
        c.stop()
        drop()
        shutil.rmtree(tmp, ignore_errors=True)


# ---- plain: a plain turn on one node while two others drain a backlog ----

def descendants(root):
    kids = children_by_parent()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def pin_tree(root, cpus):
    """Every thread of root and of its descendants on `cpus` (children forked later inherit it)."""
    for pid in descendants(root):
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:
                pass


class Pinner:
    """Keeps trees pinned (sandbox jobs and zygotes come and go) until stopped."""

    def __init__(self, plan):
        self.plan = plan  # [(pid, cpus)]
        self.stop_ = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self.stop_.is_set():
            for pid, cpus in self.plan:
                pin_tree(pid, cpus)
            self.stop_.wait(0.2)

    def start(self):
        for pid, cpus in self.plan:
            pin_tree(pid, cpus)
        self.thread.start()
        return self

    def stop(self):
        self.stop_.set()
        self.thread.join()

def plain_turns(port, sessions, n, warm=100):
    """(turn ms, /healthz ms) of n plain turns after `warm`, each on a new connection, /healthz
    alternated; users in turn (each has one turn at a time)."""
    users = sorted(sessions)
    turns, floor = [], []
    health = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    for i in range(n + warm):
        u = users[i % len(users)]
        req = _message_bytes(port, sessions[u], u, {"text": "what can you plot?"})
        for what, data, marker, out in (("turn", req, b"event: done", turns), ("health", health, b'"ok"', floor)):
            s = _connect(port)
            t0 = time.perf_counter()
            s.sendall(data)
            buf = b""
            while marker not in buf:
                chunk = s.recv(65536)
                if not chunk:
                    raise RuntimeError("%s: no %r in %r" % (what, marker, buf[:200]))
                buf += chunk
            ms = (time.perf_counter() - t0) * 1000
            s.close()
            if i >= warm:
                out.append(ms)
    return turns, floor


def _backlog_main(ports, sessions, stop, done, cpus=None):
    """The backlog clients (a process of their own): each user sends a data turn to its node and,
    once it is done, the next, until stop is set."""
    if cpus:
        os.sched_setaffinity(0, cpus)
    def loop(user, port):
        while not stop.is_set():
            try:
                s = Stream(port, "POST", "/v1/sessions/%s/messages" % sessions[user],
                           {"text": "make data", "action": {"kind": "data", "source_language": "python",
                                                            "code": data_code()}}, user=user, timeout=120)
                if s.status == 200:
                    seen = []
                    if read_to_done(s, seen):
                        with done.get_lock():
                            done.value += 1
                    s.close()
                else:
                    time.sleep(0.05)
            except OSError:
                time.sleep(0.05)

    users = sorted(sessions)
    ts = [threading.Thread(target=loop, args=(u, ports[i % len(ports)]), daemon=True) for i, u in enumerate(users)]
    [t.start() for t in ts]
    stop.wait()
    for t in ts:
        t.join(130)


def plain_round(binary, server, n, backlog_users, pin=False):
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix="plotq-cbench-")
    c = Cluster(binary, target, tmp, OPEN_ENV)
    ncpu = os.cpu_count()
    mine, theirs = {0}, {ncpu - 1}
    own = os.sched_getaffinity(0)
    pinner = None
    try:
        a = c.start("a")
        if pin:
            os.sched_setaffinity(0, mine)
            pinner = Pinner([(a.pid, mine)]).start()
        sessions = make_sessions([a.port], ["p%d" % i for i in range(16)])
        base, base_floor = plain_turns(a.port, sessions, n)
        base_load = loadavg()
        # a's slot held (it claims nothing), then b and c and the backlog they drain.
        holder = hold(c, a, "holder")
        b, cc = c.start("b"), c.start("c")
        if pin:
            pinner.stop()
            pinner = Pinner([(a.pid, mine), (b.pid, theirs), (cc.pid, theirs)]).start()
        blog = make_sessions([b.port, cc.port], ["bl%d" % i for i in range(backlog_users)])
        ctx = multiprocessing.get_context("fork")
        stop, done = ctx.Event(), ctx.Value("i", 0)
        proc = ctx.Process(target=_backlog_main, args=([b.port, cc.port], blog, stop, done, theirs if pin else None))
        proc.start()
        try:
            # until the backlog drains steadily: some turns done and the queue never empty
            db = pg.Conn(target)
            t_end = time.monotonic() + 60
            while done.value < backlog_users and time.monotonic() < t_end:
                time.sleep(0.2)
            meter = CpuMeter({"a": a.pid, "b": b.pid, "c": cc.pid}).start()
            d0, t0 = done.value, time.monotonic()
            waiting = []
            sampling = threading.Event()

            def sample():
                while not sampling.is_set():
                    waiting.append(db.execute("SELECT count(*) FROM queue_entries WHERE state = 'waiting'").fetchone()[0])
                    sampling.wait(0.5)

            st = threading.Thread(target=sample)
            st.start()
            loaded, loaded_floor = plain_turns(a.port, sessions, n)
            sampling.set()
            st.join()
            drained = (done.value - d0) / (time.monotonic() - t0)
            meter.stop()
            load = loadavg()
            db.close()
        finally:
            stop.set()
            proc.join(150)
        holder[2].close()
        if pinner:
            pinner.stop()
            pinner = None
        return {"base": base, "base_floor": base_floor, "loaded": loaded, "loaded_floor": loaded_floor,
                "drained_per_s": drained, "waiting_median": statistics.median(waiting) if waiting else 0,
                "waiting_min": min(waiting) if waiting else 0, "cpu": meter.line(), "load": (base_load, load)}
    finally:
        if pinner:
            pinner.stop()
        os.sched_setaffinity(0, own)
        c.stop()
        drop()
        shutil.rmtree(tmp, ignore_errors=True)


# ---- positions: 1,000 waiting over three nodes, a slot frees ----

def open_waiting(streams, ports, sessions, users, body_for, wave=250):
    """Opens a waiting turn per user (round-robin over ports); returns seconds from the first request
    to the last stream told queued. At most `wave` streams at a time not yet told."""
    t0 = time.monotonic()
    for i, u in enumerate(users):
        port = ports[i % len(ports)]
        streams.open(port, sessions[u], u, body_for(u), key=u)
        while i + 1 - streams.told - streams.closed > wave:
            time.sleep(0.002)
    end = time.monotonic() + 600
    while streams.told + streams.closed < len(users) and time.monotonic() < end:
        time.sleep(0.005)
    if streams.closed:
        bad = [inf for inf in streams.info.values() if inf["closed"] and inf["told_at"] is None][:3]
        raise RuntimeError("%d streams closed before they were told queued: %r" % (
            streams.closed, [(b.get("error"), b["events"]) for b in bad]))
    if streams.told < len(users):
        raise RuntimeError("only %d of %d streams told queued in 600 s" % (streams.told, len(users)))
    last = max(inf["told_at"] for inf in streams.info.values() if inf["told_at"] is not None)
    return last - t0


def wait_quiet(streams, quiet_s):
    while True:
        with streams.lock:
            infos = list(streams.info.values())
        last = max((inf["statuses"][-1][0] for inf in infos if inf["statuses"]), default=0)
        if time.monotonic() - last >= quiet_s:
            return
        time.sleep(0.1)


def positions_round(binary, server, waiting, broadcasts):
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix="plotq-cbench-")
    c = Cluster(binary, target, tmp, OPEN_ENV)
    streams = None
    holders = {}
    try:
        nodes = [c.start(n) for n in "abc"]
        users = ["w%d" % i for i in range(waiting)]
        sessions = make_sessions([n.port for n in nodes], users)
        holders = {n.port: hold(c, n, "hold%d" % i) for i, n in enumerate(nodes)}
        t_held = time.monotonic()
        streams = Streams()
        opened = open_waiting(streams, [n.port for n in nodes], sessions, users, lambda u: slow(HOLD_S))
        wait_quiet(streams, 1.5)
        db = pg.Conn(target)
        pids = {n: node.pid for n, node in zip("abc", nodes)}
        idle = CpuMeter(pids).start()
        time.sleep(10)
        idle.stop()
        interval = 0.5
        by_turn = {inf["turn"]: inf for inf in streams.info.values()}
        # who runs what: turn -> (node name, session, user) for cancels
        owner = {t: ("?", sessions[inf["key"]], inf["key"]) for t, inf in by_turn.items()}
        for i, n in enumerate(nodes):
            sid, turn, _ = holders[n.port]
            owner[turn] = ("abc"[i], sid, "hold%d" % i)
        results = []
        busy = CpuMeter(pids).start()
        for b in range(broadcasts):
            node_i = b % 3
            name = "abc"[node_i]
            running = db.execute("SELECT turn_id FROM queue_entries WHERE state = 'running' AND node = ?", (name,)).fetchall()
            if len(running) != 1:
                raise RuntimeError("node %s runs %r" % (name, running))
            victim = running[0][0]
            _, sid, user = owner[victim]
            before = {t: (inf["statuses"][-1][1] if inf["statuses"] else None) for t, inf in by_turn.items()}
            count_before = {t: len(inf["statuses"]) for t, inf in by_turn.items()}
            t0 = time.monotonic()
            st, body = request(nodes[node_i].port, "POST", "/v1/sessions/%s/turns/%s/cancel" % (sid, victim), user=user)
            if st != 200:
                raise RuntimeError("cancel: %d %r" % (st, body))
            # the one it claims: the oldest waiting entry, now running on that node
            claimed = None
            end = time.monotonic() + 20
            while claimed is None and time.monotonic() < end:
                r = db.execute("SELECT turn_id, started_ms FROM queue_entries WHERE state = 'running' AND node = ?",
                               (name,)).fetchall()
                if r and r[0][0] != victim:
                    claimed = r[0][0]
                time.sleep(0.01)
            t_claim = time.monotonic() - t0
            want = [t for t in by_turn if t != claimed and before.get(t) is not None and t not in (victim,)]
            heard = {}
            end = time.monotonic() + 30
            while len(heard) < len(want) and time.monotonic() < end:
                for t in want:
                    if t in heard:
                        continue
                    inf = by_turn[t]
                    for (ts, pos, _) in inf["statuses"][count_before[t]:]:
                        if pos is not None and pos < before[t]:
                            heard[t] = ts - t0
                            break
                time.sleep(0.01)
            lat = sorted(heard.values())
            results.append({"node": name, "claim_s": t_claim, "heard": len(heard), "want": len(want),
                            "p50": pct(lat, 50) if lat else None, "last": lat[-1] if lat else None})
            print("  positions: cancel on %s: claimed after %.3f s; %d/%d waiting streams told their new place: "
                  "p50 %.3f s, last %.3f s" % (name, t_claim, len(heard), len(want), results[-1]["p50"] or -1,
                                                 results[-1]["last"] or -1), flush=True)
            # drop the claimed turn from the waiting set (it runs now)
            by_turn.pop(claimed, None)
            time.sleep(interval * 2)
        busy.stop()
        db.close()
        if time.monotonic() - t_held > HOLD_S:
            print("  positions: WARNING the holders' sleep ran out before the end (%.0f s)" % (time.monotonic() - t_held))
        return {"opened": opened, "idle": idle.line(per=interval), "busy": busy.line(per=interval),
                "results": results, "idle_used": idle.used, "idle_wall": idle.wall, "load": loadavg()}
    finally:
        if streams:
            streams.close()
        for h in holders.values():
            h[2].close()
        c.stop()
        drop()
        shutil.rmtree(tmp, ignore_errors=True)


# ---- open: 10,000 waiting turns on one node, then over three ----

class ActivitySampler:
    """pg_stat_activity sampled every few ms: what the backends in `pids` run (a poor man's
    pg_stat_statements, which needs a server restart to load)."""

    def __init__(self, server, pids):
        self.conn = pg.Conn(server)
        self.pids = set(pids)
        self.samples, self.waits = {}, {}
        self.n = 0
        self.stop_ = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self.stop_.is_set():
            rows = self.conn.execute("SELECT pid, state, wait_event_type, wait_event, "
                                     "left(regexp_replace(query, '\\s+', ' ', 'g'), 100) FROM pg_stat_activity")
            self.n += 1
            for pid, state, wt, we, q in rows:
                if pid in self.pids and state == "active":
                    self.samples[q] = self.samples.get(q, 0) + 1
                    w = "%s:%s" % (wt, we)
                    self.waits[w] = self.waits.get(w, 0) + 1
            time.sleep(0.003)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_.set()
        self.thread.join()
        self.conn.close()
        lines = ["  %6.1f%%  %s" % (100.0 * k / self.n, q)
                 for q, k in sorted(self.samples.items(), key=lambda kv: -kv[1])[:12]]
        waits = ", ".join("%s %.0f%%" % (w, 100.0 * k / self.n)
                          for w, k in sorted(self.waits.items(), key=lambda kv: -kv[1])[:6])
        return "%d samples; statements:\n%s\n  waits: %s" % (self.n, "\n".join(lines), waits)


def backend_pids(server):
    c = pg.Conn(server)
    try:
        return {r[0] for r in c.execute("SELECT pid FROM pg_stat_activity")}
    finally:
        c.close()


def open_round(binary, server, n, nodes_n, profile=False):
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix="plotq-cbench-")
    c = Cluster(binary, target, tmp, OPEN_ENV)
    streams = None
    holders = []
    before = backend_pids(server) if profile else set()
    try:
        nodes = [c.start(name) for name in "abc"[:nodes_n]]
        users = ["w%d" % i for i in range(n)]
        sessions = make_sessions([node.port for node in nodes], users)
        holders = [hold(c, node, "hold%d" % i) for i, node in enumerate(nodes)]
        t_held = time.monotonic()
        streams = Streams()
        # (the nodes' backends: those that appeared since they started; another test's could slip in)
        sampler = ActivitySampler(server, backend_pids(server) - before).start() if profile else None
        meter = CpuMeter({name: node.pid for name, node in zip("abc", nodes)}).start()
        body = {"text": "bench", "action": {"kind": "data", "source_language": "python", "code": data_code()}}
        took = open_waiting(streams, [node.port for node in nodes], sessions, users, lambda u: body)
        meter.stop()
        profile_text = sampler.stop() if sampler else None
        if time.monotonic() - t_held > HOLD_S:
            print("  open: WARNING the holders' sleep ran out before the last stream was told (%.0f s): the nodes "
                  "began running the waiting turns" % (time.monotonic() - t_held))
        db = pg.Conn(target)
        waiting = db.execute("SELECT count(*) FROM queue_entries WHERE state = 'waiting'").fetchone()[0]
        db.close()
        rss = {name: _rss_kib(node.pid) for name, node in zip("abc", nodes)}
        return {"took": took, "cpu": meter.line(), "used": meter.used, "waiting": waiting, "rss": rss,
                "load": loadavg(), "profile": profile_text}
    finally:
        if streams:
            streams.close()
        for h in holders:
            h[2].close()
        c.stop()
        drop()
        shutil.rmtree(tmp, ignore_errors=True)


def _rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


# ---- main ----

def arg(args, name, default):
    return int(args[args.index(name) + 1]) if name in args else default


def main():
    binary = sys.argv[1]
    args = sys.argv[2:]
    n = arg(args, "--turns", 40)
    rounds = arg(args, "--rounds", 3)
    only = args[args.index("--only") + 1].split(",") if "--only" in args else ["claim", "drain", "plain", "positions", "open"]
    server = os.environ.get("PLOTQ_TEST_PG", "")
    if not server:
        print("cluster_bench: set PLOTQ_TEST_PG (tools/pg.sh run -- ...)")
        return 2
    hard = raise_nofile()
    print("cluster_bench: %s, load %s, RLIMIT_NOFILE %d" % (time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                                                            loadavg(), hard), flush=True)
    if "claim" in only:
        for label, env in (("with hints", {}), ("poll only", {"PLOTQ_CLUSTER_NOTIFY_MS": "0"})):
            waits = []
            for _ in range(rounds):
                waits += claim_round(binary, server, n, env)
            print("claim-to-start (another node's claim, %s), %d turns: p50 %d ms, p90 %d ms, max %d ms"
                  % (label, len(waits), statistics.median(waits), pct(waits, 90), max(waits)), flush=True)
    if "drain" in only:
        one = [drain_round(binary, server, n, 1) for _ in range(rounds)]
        three = [drain_round(binary, server, n, 3) for _ in range(rounds)]
        m1, m3 = statistics.median(one), statistics.median(three)
        print("drain %d trivial data turns: 1 node %.2f s (%.1f turns/s), 3 nodes %.2f s (%.1f turns/s); 3/1 throughput %.2fx"
              % (n, m1, n / m1, m3, n / m3, m1 / m3))
        print("rounds: 1 node %s; 3 nodes %s" % (["%.2f" % x for x in one], ["%.2f" % x for x in three]), flush=True)
    if "plain" in only:
        pn = arg(args, "--plain-turns", 1000)
        bu = arg(args, "--backlog-users", 40)
        pin = "--pin" in args
        if pin:
            print("plain: pinned: node a and this process on CPU 0; b, c, their sandboxes and the backlog clients "
                  "on CPU %d; PostgreSQL unpinned" % (os.cpu_count() - 1))
        rs = []
        for r in range(rounds):
            x = plain_round(binary, server, pn, bu, pin)
            rs.append(x)
            print("plain round %d: baseline (a alone, nothing queued) p50 %.3f p99 %.3f ms, /healthz p50 %.3f p99 %.3f ms; "
                  "loaded (b, c draining %.1f turns/s, %d-%d waiting) p50 %.3f p99 %.3f ms, /healthz p50 %.3f p99 %.3f ms; "
                  "p99 ratio %.2fx; load %s / %s; CPU: %s" % (
                      r + 1, pct(x["base"], 50), pct(x["base"], 99), pct(x["base_floor"], 50), pct(x["base_floor"], 99),
                      x["drained_per_s"], x["waiting_min"], x["waiting_median"], pct(x["loaded"], 50),
                      pct(x["loaded"], 99), pct(x["loaded_floor"], 50), pct(x["loaded_floor"], 99),
                      pct(x["loaded"], 99) / pct(x["base"], 99), x["load"][0], x["load"][1], x["cpu"]), flush=True)
        med = lambda key, p: statistics.median([pct(x[key], p) for x in rs])  # noqa: E731
        print("plain turn on node a, %d turns x %d rounds, medians of rounds: baseline p50 %.3f ms p99 %.3f ms; "
              "while b and c drain a backlog (%d clients): p50 %.3f ms p99 %.3f ms; ratio p50 %.2fx p99 %.2fx "
              "(per round p99: %s) (target: p99 <= 2x)" % (
                  pn, rounds, med("base", 50), med("base", 99), bu, med("loaded", 50), med("loaded", 99),
                  med("loaded", 50) / med("base", 50), med("loaded", 99) / med("base", 99),
                  " ".join("%.2fx" % (pct(x["loaded"], 99) / pct(x["base"], 99)) for x in rs)), flush=True)
    if "positions" in only:
        w = arg(args, "--waiting", 1000)
        nb = arg(args, "--broadcasts", 6)
        x = positions_round(binary, server, w, nb)
        lasts = [r["last"] for r in x["results"] if r["last"] is not None]
        p50s = [r["p50"] for r in x["results"] if r["p50"] is not None]
        claims = [r["claim_s"] for r in x["results"]]
        print("positions, %d waiting over 3 nodes (opened in %.1f s), %d slot frees: cancel -> claimed median %.3f s; "
              "cancel -> last waiting stream told its new place median %.3f s (max %.3f s), p50 of streams median %.3f s; "
              "complete %d/%d" % (w, x["opened"], nb, statistics.median(claims), statistics.median(lasts), max(lasts),
                                  statistics.median(p50s), sum(1 for r in x["results"] if r["heard"] == r["want"]), nb))
        print("positions CPU, idle with %d waiting: %s" % (w, x["idle"]))
        print("positions CPU, during the slot frees: %s; load %s" % (x["busy"], x["load"]), flush=True)
    if "open" in only:
        on = arg(args, "--open", 10000)
        for k in (1, 3):
            x = open_round(binary, server, on, k, "--profile" in args)
            print("open %d waiting turns on %d node(s): %.1f s (target <= 10 s on one node); %d waiting in the queue; "
                  "CPU %s; RSS KiB %s; load %s" % (on, k, x["took"], x["waiting"], x["cpu"], x["rss"], x["load"]), flush=True)
            if x["profile"]:
                print("  pg_stat_activity during the open: " + x["profile"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
