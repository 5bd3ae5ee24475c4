#!/usr/bin/python3
"""Crash under load (issue 16, section 1): a real plotqd on a temp store, kept busy by client
threads, SIGKILLed at random moments and restarted on the same file; after every restart the
checks of checks.py. Standard library only.

  crash_driver.py PLOTQD [--engine sqlite|postgresql] [--cluster N] [--rounds N] [--seed S] [--keep DIR]
  --engine postgresql: the store is a schema of the run's own on PLOTQ_TEST_PG (tools/pg.sh run;
  without it PLOTQ-SKIP), read back through libpq (pg.py); the checks are the same, SQLite's file
  checks (integrity_check, one connection to the file) apart.
  --cluster N (implies --engine postgresql): N nodes with PLOTQ_CLUSTER=on on that one schema
  (a, b, c, ...; a 2 s lease, as tests/cluster's), the clients' requests spread over them at random;
  each round SIGKILLs one node chosen at random and starts it again with the same PLOTQ_NODE_ID, at
  once (its join ends what its old epoch held) or, every other round, once its lease ran out and a
  peer's rescue ended it. The checks below hold across the nodes (resumes and replays go to any
  node), plus: what the killed node ran or held ended error{node_lost} and was never claimed again,
  what it had admitted that waited in the queue ran elsewhere once, and no turn was claimed twice.
  PLOTQ_CRASH_ROUNDS=200 runs the soak (CI: 20); PLOTQ_CRASH_CLUSTER_ROUNDS=100 the cluster's (CI: 3);
  PLOTQ_CRASH_SEED repeats a run; PLOTQ_CRASH_MODES=chromium_up,in_job kills only at those moments,
  in turn.

Prints one "crash: ..." summary line (the figures of docs/reliability.md) and exits 1 when any check
failed, naming each failure. Kill moments: at a random time, while a sandbox job holds the render slot,
while turns wait behind it (their queue broadcasts), just after jobs were answered (so some finish
however slow the host), and while the figure renderer's Chromium runs; WAL checkpoints run every few
milliseconds, so kills land in them too. After each restart plotqd must hold one connection to its
store: SQLite's WAL-reset race (store/checkpoint.hpp) needs two, and the first version of this test
found it by the index rows it lost.
"""
import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import checks  # noqa: E402
import pg  # noqa: E402
import procs  # noqa: E402
from plotq_client import Plotqd, request  # noqa: E402
from workload import TRANSPORT, Record, Workers  # noqa: E402

SETTINGS = {
    # Limits wide open: the load is the point, not the caps.
    "PLOTQ_RUNS_PER_MINUTE": "100000",
    "PLOTQ_USER_MESSAGES_PER_MINUTE": "1000000",
    "PLOTQ_USER_MESSAGES_PER_DAY": "100000000",
    "PLOTQ_DAILY_DATA_RUNS": "100000000",
    "PLOTQ_DAILY_PIPELINE_RUNS": "100000000",
    "PLOTQ_QUEUE_STATUS_MIN_INTERVAL_S": "0",  # every queue change is a broadcast
    # Checkpoints all the time, the WAL starting over after each and its file cut back: kills land
    # in all three.
    "PLOTQ_DB_CHECKPOINT_INTERVAL_MS": "20",
    "PLOTQ_DB_WAL_KEEP_KIB": "64",
    # Two slots: a render in one, data jobs go on in the other. Only data jobs get a zygote: the plot
    # zygote's preload (every library) would take most of a round after each restart.
    "PLOTQ_SLOTS": "2",
    "PLOTQ_WARM_MODES": "data",
}


MODES = ("random", "in_job", "after_answers", "in_broadcast", "after_render", "chromium_up")

# --cluster: the lease, heartbeat and rescue of tests/cluster (a lost node's work ends within
# about 2.5 s). A /run-data or /render a killed node ran keeps node_lost as its answer; a key it
# claimed but never enqueued is taken over by a retry (cluster::take_over_key). 15 s bounds a job
# within a round (on 2 busy cores a cold matplotlib render takes 6-10 s; one past 15 s is answered
# timeout, which is an answer like any other here). One slot per node: three nodes' jobs share the
# machine's cores, and turns wait in the cluster's queue (positions broadcast by every node).
CLUSTER_SETTINGS = {
    "PLOTQ_CLUSTER": "on",
    "PLOTQ_NODE_LEASE_S": "2",
    "PLOTQ_NODE_HEARTBEAT_S": "0.4",
    "PLOTQ_CLUSTER_RESCUE_S": "0.2",
    "PLOTQ_SANDBOX_MAX_TIMEOUT_S": "15",
    "PLOTQ_SLOTS": "1",
}
LEASE_S = float(CLUSTER_SETTINGS["PLOTQ_NODE_LEASE_S"])


def finish(args, work, fail, alive_at_kill):
    """The run's last lines and exit code; its store and logs kept when it failed (or --keep)."""
    print("crash: kills with each part running: %s" % " ".join(
        "%s=%d" % kv for kv in sorted(alive_at_kill.items())), flush=True)
    for f in fail:
        print("FAIL " + f)
    if not args.keep and not fail:
        shutil.rmtree(work, ignore_errors=True)
    elif fail:
        print("crash: store and logs kept in %s" % work)
    return 1 if fail else 0


def report_totals(stats, rec, started):
    """The run's one summary line (one node or a cluster): what was acknowledged, checked, lost."""
    stats.update(turns=len(rec.turns), interrupted=len(rec.interrupted), run_data=len(rec.run_data),
                 render=len(rec.render), datasets=len(rec.versions))
    print("crash: kills=%(kills)d acknowledged: turns=%(turns)d run_data=%(run_data)d render=%(render)d "
          "datasets=%(datasets)d interrupted_turns_resumed=%(interrupted)d answers_checked=%(checked)d "
          "rows_lost=%(lost)d jobs_run_twice=%(ran_twice)d survivors=%(survivors)d" % stats
          + " seconds=%d" % (time.monotonic() - started), flush=True)


def answers(rec, renders_only=False):
    """Acknowledged answers that needed a sandbox job (or, renders_only, a render)."""
    with rec.lock:
        drawn = len(rec.render) + sum(1 for t in rec.turns if t["action"] == "plot")
        if renders_only:
            return drawn
        return drawn + len(rec.run_data) + sum(1 for t in rec.turns if t["action"] == "data")


def store_connections(pid, db_path):
    """How many descriptors of plotqd's own process are open on the database file itself (one per
    SQLite connection; the -wal and -shm files are not counted)."""
    real = os.path.realpath(db_path)
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)) == real
        except OSError:
            pass
    return n


def kill_moment(mode, port, pid, rng, rec, cluster=False):
    """Waits for the round's moment; returns what it waited for. In a cluster, turns wait in the
    cluster's queue (its totals in /v1/status, refreshed each rescue round), not in the node's own:
    in_broadcast waits for one of them while the node holds the stream of a turn."""
    if mode == "random":
        time.sleep(rng.uniform(0.3, 4.0))
        return mode
    if mode in ("after_answers", "after_render"):
        # However slow the host, jobs finish between two kills: wait for some more answers.
        renders = mode == "after_render"
        want = answers(rec, renders) + (1 if renders else 3)
        end = time.monotonic() + 40
        while answers(rec, renders) < want and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(rng.uniform(0, 1.0))
        return mode if answers(rec, renders) >= want else mode + "(not reached)"
    if mode == "chromium_up":
        # The figure renderer starts after a plotly job's Python part: wait until its browser runs.
        end = time.monotonic() + 45
        while time.monotonic() < end:
            if any(p["part"] == "chromium" for p in procs.tree(pid)):
                time.sleep(rng.uniform(0, 1.5))
                return mode
            time.sleep(0.2)
        return mode + "(not reached)"
    key = "in_flight" if mode == "in_job" else "waiting"
    need = 1 if mode == "in_job" or cluster else 2
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            status, body = request(port, "GET", "/v1/status", timeout=5)
            if status == 200 and cluster and key == "waiting":
                c = body.get("cluster", {})
                if c.get("queue", {}).get("waiting", 0) >= need and c.get("followed", 0) >= 1:
                    time.sleep(rng.uniform(0, 0.3))
                    return mode
            elif status == 200 and body.get(key, 0) >= need:
                time.sleep(rng.uniform(0, 0.3))
                return mode
        except TRANSPORT:
            pass
        time.sleep(0.05)
    return mode + "(not reached)"


def wait_settled(db, timeout):
    """Seconds until every turn has ended and the cluster's queue holds nothing waiting or running;
    None if not within timeout. (A turn whose client was cut when its node died may still run on
    another node. An ended single job's verdict whose node was killed stays until the rescue's
    kVerdictKeepMs.)"""
    t0 = time.monotonic()
    while True:
        n = db.execute("SELECT (SELECT count(*) FROM turns WHERE status <> 'done') + "
                       "(SELECT count(*) FROM queue_entries WHERE state <> 'ended')").fetchone()[0]
        if n == 0:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            return None
        time.sleep(0.1)


def wait_rescued(db, node, since, timeout):
    """Seconds from `since` until a peer's rescue marked the killed node lost; None if not in time."""
    while True:
        row = db.execute("SELECT state FROM nodes WHERE id = ?", (node,)).fetchone()
        if row and row[0] == "lost":
            return time.monotonic() - since
        if time.monotonic() - since > timeout:
            return None
        time.sleep(0.05)


def fenced_nodes(logs, count=False):
    """The nodes that fenced themselves (node_fenced: a lease lost without a kill); count: one entry
    per time."""
    out = []
    for n, path in logs.items():
        with open(path, "rb") as f:
            out += [n for line in f if b'"event":"node_fenced"' in line]
    return out if count else set(out)


def run_cluster(args, rng, modes, target, drop_schema, env, work):
    """--cluster N: the rounds against N nodes on one schema; one node killed and restarted a round."""
    names = [chr(ord("a") + i) for i in range(args.cluster)]
    logs = {n: os.path.join(work, "plotqd-%s.log" % n) for n in names}
    nodes = {}
    rec = Record()
    sessions = {}
    alive_at_kill = {}
    fail = []
    stats = {"kills": 0, "checked": 0, "lost": 0, "ran_twice": 0, "survivors": 0}
    lost = {"running": 0, "bare": 0, "waiting": 0}
    killed = []      # (node, {turn: (how, job)}) of every kill
    orphans = set()  # job ids sent to a node that was later killed (their keys may stay running)
    restarts = {"at_once": 0, "after_rescue": 0}
    rescue_s, settle_s = [], []
    kept_running, taken_over = set(), set()  # keys a killed node left running; of those, run since by a retry
    db = None
    started = time.monotonic()
    try:
        for n in names:
            nodes[n] = Plotqd(args.plotqd, target, logs[n], dict(env, PLOTQ_NODE_ID=n)).start()
        if not nodes[names[0]].wait_log("sandbox", 5, lambda ev: ev.get("ready") is True):
            print("PLOTQ-SKIP: the sandbox cannot run here (plotqd --check-sandbox): no jobs to kill")
            return 0
        db = checks.open_db(target)

        def any_port():  # a load balancer's pick: resumes and replays go to any node
            return nodes[rng.choice(names)].port

        def ports():
            return [nodes[n].port for n in names]

        for rnd in range(1, args.rounds + 1):
            before = len(fail)
            t_round = time.monotonic()
            w = Workers(ports(), rec, rng, rnd, sessions)
            w.start()
            victim = rng.choice(names)
            d = nodes[victim]
            mode = kill_moment(modes[(rnd - 1) % len(modes)], d.port, d.pid, rng, rec, cluster=True)
            snapshot = procs.tree(d.pid)
            old_pid, old_port = d.pid, d.port
            d.kill()
            t_kill = time.monotonic()
            stats["kills"] += 1
            w.ports = [nodes[n].port for n in names if n != victim]  # the balancer stops sending there
            with rec.lock:
                orphans |= rec.sent_to.get(old_port, set())
            time.sleep(0.2)  # the server ends the dead node's sessions (a transaction in flight rolls back)
            owned = checks.owned_at_kill(db, victim)
            killed.append((victim, owned))
            for how, _ in owned.values():
                lost[how] += 1
            left = procs.wait_gone(snapshot, 15)
            if left:
                stats["survivors"] += len(left)
                fail.append("round %d: %d processes of the killed node %s still alive: %s" % (
                    rnd, len(left), victim, ", ".join("%d %s" % (p["pid"], p["part"]) for p in left[:6])))
            parts = sorted({p["part"] for p in snapshot})
            for part in parts:
                alive_at_kill[part] = alive_at_kill.get(part, 0) + 1
            # Every other round the node stays down until a peer's rescue has found its lease run out
            # (the survivors still serve the clients meanwhile); else it is back at once and its own
            # join ends what its old epoch held.
            late = rnd % 2 == 0
            how_back = "at once"
            if late:
                took = wait_rescued(db, victim, t_kill, LEASE_S + 15)
                if took is None:
                    fail.append("round %d: no peer marked %s lost within %.0f s of its kill" % (rnd, victim, LEASE_S + 15))
                else:
                    rescue_s.append(took)
                    how_back = "after a peer's rescue (%.2f s)" % took
                restarts["after_rescue"] += 1
            else:
                restarts["at_once"] += 1
            d.start()
            w.ports = ports()
            t_join = time.monotonic()
            stuck = w.join()
            t_joined = time.monotonic()
            if stuck:
                fail.append("round %d: %d client threads never returned after the kill" % (rnd, len(stuck)))
            if procs.cgroup_dirs(old_pid):
                fail.append("round %d: the killed node's cgroups are still there: %r" % (rnd, procs.cgroup_dirs(old_pid)))
            settled = wait_settled(db, 60)
            if settled is None:
                fail.append("round %d: turns still not ended, or entries still queued, 60 s after the clients stopped" % rnd)
            else:
                settle_s.append(settled)

            checks.nothing_stuck(db, fail, orphans)
            running_keys = {r[0] for r in db.execute("SELECT job_id FROM idempotency WHERE state = 'running'")}
            taken_over |= kept_running - running_keys
            kept_running |= running_keys
            kept_running -= taken_over
            claimed = checks.claimed_once(logs, fail)
            stats["checked"] += checks.killed_work(db, [(victim, owned)], claimed, fail)
            stats["checked"] += checks.node_lost_only_where_killed(db, killed, fenced_nodes(logs), fail, claimed)
            stats["checked"] += checks.turns_kept(db, rec, fail, None if len(rec.turns) <= 2000 else (
                lambda ts: ts[-200:] + rng.sample(ts[:-200], 200)))
            stats["checked"] += checks.turns_replayed(any_port, rec, rnd, fail)
            stats["checked"] += checks.interrupted_resumed(db, any_port, rec, rnd, fail)
            stats["checked"] += checks.versions_kept(db, None, rec, rnd, fail)
            sample = None if len(rec.run_data) + len(rec.render) <= 400 else (
                lambda ids: ids[-50:] + rng.sample(ids[:-50], min(50, len(ids[:-50]))))
            lost_before = sum(1 for f in fail if "replay answered" in f)
            stats["checked"] += checks.answers_kept(any_port, rec, "run_data", fail, sample)
            stats["checked"] += checks.answers_kept(any_port, rec, "render", fail, sample)
            twice, missing = checks.ledger_once(db, rec, fail)
            stats["ran_twice"] = max(stats["ran_twice"], twice)
            stats["lost"] += missing + sum(1 for f in fail if "replay answered" in f) - lost_before
            checks.users_free(any_port, rec, sessions, fail, ports=ports())
            fail.extend("round %d: %s" % (rnd, m) for m in rec.mismatch)
            rec.mismatch.clear()
            held = {h: sum(1 for x, _ in owned.values() if x == h) for h in ("running", "bare", "waiting")}
            slowest = ", ".join("%s %.0f s" % (name, t) for t, name in sorted(w.tail, reverse=True)[:2])
            print("crash: round %d killed node %s at %s (%s alive; it held %d running, %d bare, %d waiting), back %s; "
                  "round %.1f s (kill after %.1f, clients stopped in %.1f (slowest: %s), settled in %s, checks %.1f) - %d turns, "
                  "%d interrupted, %d run-data, %d renders, %d dataset versions acknowledged so far%s" % (
                      rnd, victim, mode, "+".join(parts) or "plotqd alone", held["running"], held["bare"],
                      held["waiting"], how_back, time.monotonic() - t_round, t_kill - t_round, t_joined - t_join, slowest,
                      "%.1f s" % settled if settled is not None else "-", time.monotonic() - t_joined - (settled or 0),
                      len(rec.turns), len(rec.interrupted), len(rec.run_data), len(rec.render), len(rec.versions),
                      "" if len(fail) == before else " - %d FAILURES" % (len(fail) - before)), flush=True)
            if len(fail) > before:
                break
        # The last pass: every acknowledged answer and every kill, not a sample.
        if not fail:
            claimed = checks.claimed_once(logs, fail)
            stats["checked"] += checks.killed_work(db, killed, claimed, fail)
            stats["checked"] += checks.turns_kept(db, rec, fail)
            stats["checked"] += checks.answers_kept(any_port, rec, "run_data", fail)
            stats["checked"] += checks.answers_kept(any_port, rec, "render", fail)
            twice, _ = checks.ledger_once(db, rec, fail)
            stats["ran_twice"] = max(stats["ran_twice"], twice)
    finally:
        for n in nodes.values():
            n.stop()
        if db is not None:
            db.close()
        if drop_schema:
            drop_schema()
    report_totals(stats, rec, started)
    print("crash: cluster of %d: killed nodes held %d running jobs and %d bare turns (each ended node_lost, "
          "none claimed again) and %d waiting turns (each ran elsewhere once); restarts at once %d, after a "
          "peer's rescue %d (kill to lost: %s s); settled after the clients stopped in max %.1f s" % (
              args.cluster, lost["running"], lost["bare"], lost["waiting"], restarts["at_once"],
              restarts["after_rescue"], ", ".join("%.2f" % x for x in rescue_s) or "-",
              max(settle_s) if settle_s else 0), flush=True)
    fenced = len(fenced_nodes(logs, count=True))
    print("crash: /run-data and /render keys a killed node left running: %d; taken over by a retry since: %d; "
          "nodes that fenced themselves (lease lost without a kill): %d"
          % (len(kept_running) + len(taken_over), len(taken_over), fenced), flush=True)
    return finish(args, work, fail, alive_at_kill)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # plotqd is stopped on the way out
    ap = argparse.ArgumentParser()
    ap.add_argument("plotqd")
    ap.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--cluster", type=int, default=0, metavar="N", help="N nodes on one PostgreSQL schema")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("PLOTQ_CRASH_SEED", str(random.randrange(1 << 30)))))
    ap.add_argument("--keep", help="work here and keep the store and logs")
    args = ap.parse_args()
    if args.cluster:
        args.engine = "postgresql"
    if args.rounds is None:
        args.rounds = int(os.environ.get("PLOTQ_CRASH_CLUSTER_ROUNDS", "3") if args.cluster
                          else os.environ.get("PLOTQ_CRASH_ROUNDS", "20"))
    rng = random.Random(args.seed)
    server = os.environ.get("PLOTQ_TEST_PG", "")
    if args.engine == "postgresql" and (not server or pg.libpq() is None):
        print("PLOTQ-SKIP: --engine postgresql needs PLOTQ_TEST_PG (tools/pg.sh run) and libpq")
        return 0
    work = args.keep or tempfile.mkdtemp(prefix="plotq-crash-")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o711)  # the figure renderer's dir is made here: Chromium's uid must reach it
    db_path = os.path.join(work, "plotq.db")
    drop_schema = None
    if args.engine == "postgresql":
        db_path, drop_schema = pg.own_schema(server)
    env = dict(SETTINGS, PLOTQ_FIGURE_TMP_ROOT=work)
    if args.cluster:
        env.update(CLUSTER_SETTINGS)
    print("crash: seed %d, %d rounds, %s%s, work dir %s" % (
        args.seed, args.rounds, args.engine, ", %d nodes" % args.cluster if args.cluster else "", work), flush=True)

    rec = Record()
    sessions = {}
    alive_at_kill = {}  # part -> kills that found it running
    fail = []
    stats = {"kills": 0, "turns": 0, "interrupted": 0, "run_data": 0, "render": 0, "datasets": 0,
             "checked": 0, "lost": 0, "ran_twice": 0, "survivors": 0}
    modes = ["random", "in_job", "after_answers", "in_broadcast", "after_render",
             "random", "in_job", "after_answers", "in_broadcast", "chromium_up"]
    if args.cluster:
        # CI's three rounds: a running job killed (restart at once: the join ends it), turns waiting in
        # the cluster's queue (restart after a peer's rescue), and a moment at random.
        modes = ["in_job", "in_broadcast", "random", "after_answers", "after_render",
                 "in_job", "in_broadcast", "random", "after_answers", "chromium_up"]
    if os.environ.get("PLOTQ_CRASH_MODES"):  # to repeat one moment, e.g. chromium_up
        modes = os.environ["PLOTQ_CRASH_MODES"].split(",")
        unknown = set(modes) - set(MODES)
        if unknown:
            ap.error("unknown PLOTQ_CRASH_MODES: %s" % ",".join(sorted(unknown)))
    if args.cluster:
        return run_cluster(args, rng, modes, db_path, drop_schema, env, work)
    d = Plotqd(args.plotqd, db_path, os.path.join(work, "plotqd.log"), env).start()
    if not d.wait_log("sandbox", 5, lambda ev: ev.get("ready") is True):
        d.stop()
        if drop_schema:
            drop_schema()
        print("PLOTQ-SKIP: the sandbox cannot run here (plotqd --check-sandbox): no jobs to kill")
        return 0
    started = time.monotonic()
    try:
        for rnd in range(1, args.rounds + 1):
            before = len(fail)
            w = Workers(d.port, rec, rng, rnd, sessions)
            w.start()
            mode = kill_moment(modes[(rnd - 1) % len(modes)], d.port, d.pid, rng, rec)
            snapshot = procs.tree(d.pid)
            old_pid = d.pid
            d.kill()
            stats["kills"] += 1
            stuck = w.join()
            if stuck:
                fail.append("round %d: %d client threads never returned after the kill" % (rnd, len(stuck)))
            left = procs.wait_gone(snapshot, 15)
            if left:
                stats["survivors"] += len(left)
                fail.append("round %d: %d processes of the killed plotqd still alive: %s" % (
                    rnd, len(left), ", ".join("%d %s" % (p["pid"], p["part"]) for p in left[:6])))
            parts = sorted({p["part"] for p in snapshot})
            for part in parts:
                alive_at_kill[part] = alive_at_kill.get(part, 0) + 1
            d.start()
            conns = store_connections(d.pid, db_path) if args.engine == "sqlite" else 1
            if conns != 1:
                fail.append("round %d: plotqd holds %d connections to its store, not one" % (rnd, conns))
            if procs.cgroup_dirs(old_pid):
                fail.append("round %d: the killed plotqd's cgroups are still there: %r" % (rnd, procs.cgroup_dirs(old_pid)))

            db = checks.open_db(db_path)
            try:
                checks.store_whole(db, fail)
                checks.nothing_stuck(db, fail)
                # Every finished turn each round while they are few; then the newest and a sample.
                stats["checked"] += checks.turns_kept(db, rec, fail, None if len(rec.turns) <= 2000 else (
                    lambda ts: ts[-200:] + rng.sample(ts[:-200], 200)))
                stats["checked"] += checks.turns_replayed(d.port, rec, rnd, fail)
                stats["checked"] += checks.interrupted_resumed(db, d.port, rec, rnd, fail)
                stats["checked"] += checks.versions_kept(db, d.port, rec, rnd, fail)
                # Every answer each round while they are few; then the newest and a sample (the soak).
                sample = None if len(rec.run_data) + len(rec.render) <= 400 else (
                    lambda ids: ids[-50:] + rng.sample(ids[:-50], min(50, len(ids[:-50]))))
                lost_before = sum(1 for f in fail if "replay answered" in f)
                stats["checked"] += checks.answers_kept(d.port, rec, "run_data", fail, sample)
                stats["checked"] += checks.answers_kept(d.port, rec, "render", fail, sample)
                twice, missing = checks.ledger_once(db, rec, fail)
                stats["ran_twice"] = max(stats["ran_twice"], twice)
                stats["lost"] += missing + sum(1 for f in fail if "replay answered" in f) - lost_before
                checks.users_free(d.port, rec, sessions, fail)
            finally:
                db.close()
            fail.extend("round %d: %s" % (rnd, m) for m in rec.mismatch)
            rec.mismatch.clear()
            print("crash: round %d killed at %s (%s alive) - %d turns, %d interrupted, %d run-data, %d renders, "
                  "%d dataset versions acknowledged so far%s" % (
                      rnd, mode, "+".join(parts) or "plotqd alone", len(rec.turns), len(rec.interrupted),
                      len(rec.run_data), len(rec.render), len(rec.versions),
                      "" if len(fail) == before else " - %d FAILURES" % (len(fail) - before)), flush=True)
            if len(fail) > before:
                break
        # The last pass: every acknowledged answer, not a sample.
        if not fail:
            db = checks.open_db(db_path)
            try:
                stats["checked"] += checks.turns_kept(db, rec, fail)
                stats["checked"] += checks.answers_kept(d.port, rec, "run_data", fail)
                stats["checked"] += checks.answers_kept(d.port, rec, "render", fail)
                twice, _ = checks.ledger_once(db, rec, fail)
                stats["ran_twice"] = max(stats["ran_twice"], twice)
            finally:
                db.close()
    finally:
        d.stop()
        if drop_schema:
            drop_schema()
    report_totals(stats, rec, started)
    return finish(args, work, fail, alive_at_kill)


if __name__ == "__main__":
    sys.exit(main())
