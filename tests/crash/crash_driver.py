#!/usr/bin/python3
"""Crash under load (issue 16, section 1): a real plotqd on a temp store, kept busy by client
threads, SIGKILLed at random moments and restarted on the same file; after every restart the
checks of checks.py. Standard library only.

  crash_driver.py PLOTQD [--engine sqlite|postgresql] [--rounds N] [--seed S] [--keep DIR]
  --engine postgresql: the store is a schema of the run's own on PLOTQ_TEST_PG (tools/pg.sh run;
  without it PLOTQ-SKIP), read back through libpq (pg.py); the checks are the same, SQLite's file
  checks (integrity_check, one connection to the file) apart.
  PLOTQ_CRASH_ROUNDS=200 runs the soak (CI: 20); PLOTQ_CRASH_SEED repeats a run;
  PLOTQ_CRASH_MODES=chromium_up,in_job kills only at those moments, in turn.

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


def kill_moment(mode, port, pid, rng, rec):
    """Waits for the round's moment; returns what it waited for."""
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
    need = 1 if mode == "in_job" else 2
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            status, body = request(port, "GET", "/v1/status", timeout=5)
            if status == 200 and body.get(key, 0) >= need:
                time.sleep(rng.uniform(0, 0.3))
                return mode
        except TRANSPORT:
            pass
        time.sleep(0.05)
    return mode + "(not reached)"


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # plotqd is stopped on the way out
    ap = argparse.ArgumentParser()
    ap.add_argument("plotqd")
    ap.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("PLOTQ_CRASH_ROUNDS", "20")))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("PLOTQ_CRASH_SEED", str(random.randrange(1 << 30)))))
    ap.add_argument("--keep", help="work here and keep the store and logs")
    args = ap.parse_args()
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
    print("crash: seed %d, %d rounds, %s, work dir %s" % (args.seed, args.rounds, args.engine, work), flush=True)

    rec = Record()
    sessions = {}
    alive_at_kill = {}  # part -> kills that found it running
    fail = []
    stats = {"kills": 0, "turns": 0, "interrupted": 0, "run_data": 0, "render": 0, "datasets": 0,
             "checked": 0, "lost": 0, "ran_twice": 0, "survivors": 0}
    modes = ["random", "in_job", "after_answers", "in_broadcast", "after_render",
             "random", "in_job", "after_answers", "in_broadcast", "chromium_up"]
    if os.environ.get("PLOTQ_CRASH_MODES"):  # to repeat one moment, e.g. chromium_up
        modes = os.environ["PLOTQ_CRASH_MODES"].split(",")
        unknown = set(modes) - set(MODES)
        if unknown:
            ap.error("unknown PLOTQ_CRASH_MODES: %s" % ",".join(sorted(unknown)))
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
    stats.update(turns=len(rec.turns), interrupted=len(rec.interrupted), run_data=len(rec.run_data),
                 render=len(rec.render), datasets=len(rec.versions))
    print("crash: kills=%(kills)d acknowledged: turns=%(turns)d run_data=%(run_data)d render=%(render)d "
          "datasets=%(datasets)d interrupted_turns_resumed=%(interrupted)d answers_checked=%(checked)d "
          "rows_lost=%(lost)d jobs_run_twice=%(ran_twice)d survivors=%(survivors)d" % stats
          + " seconds=%d" % (time.monotonic() - started), flush=True)
    print("crash: kills with each part running: %s" % " ".join(
        "%s=%d" % kv for kv in sorted(alive_at_kill.items())), flush=True)
    for f in fail:
        print("FAIL " + f)
    if not args.keep and not fail:
        shutil.rmtree(work, ignore_errors=True)
    elif fail:
        print("crash: store and logs kept in %s" % work)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
