"""Cluster benchmarks (issue 37, docs/scale-out.md): real plotqd nodes on one PostgreSQL.

  PLOTQ_TEST_PG=CONNINFO python3 bench/cluster_bench.py build/plotqd [--turns N] [--rounds R]

  claim   claim-to-start: a turn admitted on node a (its one slot busy) is claimed by b or c; the
          figure is the database's own clock (the claim's started_ms - the entry's enqueued_ms), so
          it is the queue's latency alone (PLOTQ_CLUSTER_POLL_MS bounds it; no NOTIFY).
  drain   queue throughput: N users each send one trivial data turn at once to one node, or spread
          over three nodes; the time until every turn is done, 1 node vs 3 (ratio in the same run).
          On a 2-core machine the nodes share the CPUs: the sandbox's work does not grow with the
          nodes, so the ratio measures the queue's overhead, not capacity.
Medians over rounds; each round on a schema of its own.
"""
import os
import statistics
import sys
import threading
import time
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "cluster"))
sys.path.insert(0, os.path.join(ROOT, "tests", "crash"))
import pg  # noqa: E402
from cluster_test import Cluster, send, data_code, slow  # noqa: E402
from plotq_client import read_to_done  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def claim_round(binary, server, n):
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix="plotq-cbench-")
    c = Cluster(binary, target, tmp)
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


def main():
    binary = sys.argv[1]
    args = sys.argv[2:]
    n = int(args[args.index("--turns") + 1]) if "--turns" in args else 40
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 3
    server = os.environ.get("PLOTQ_TEST_PG", "")
    if not server:
        print("cluster_bench: set PLOTQ_TEST_PG (tools/pg.sh run -- ...)")
        return 2
    waits = []
    for _ in range(rounds):
        waits += claim_round(binary, server, n)
    print("claim-to-start (another node's claim, poll only), %d turns: p50 %d ms, p90 %d ms, max %d ms"
          % (len(waits), statistics.median(waits), pct(waits, 90), max(waits)))
    one = [drain_round(binary, server, n, 1) for _ in range(rounds)]
    three = [drain_round(binary, server, n, 3) for _ in range(rounds)]
    m1, m3 = statistics.median(one), statistics.median(three)
    print("drain %d trivial data turns: 1 node %.2f s (%.1f turns/s), 3 nodes %.2f s (%.1f turns/s); 3/1 throughput %.2fx"
          % (n, m1, n / m1, m3, n / m3, m1 / m3))
    print("rounds: 1 node %s; 3 nodes %s" % (["%.2f" % x for x in one], ["%.2f" % x for x in three]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
