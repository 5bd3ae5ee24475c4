"""A catalogue sweep against a cluster (issue 37, docs/scale-out.md "Sweeps"), standard library only.

  sweep_test.py PLOTQD      (PLOTQ_TEST_PG: a server's conninfo; without it PLOTQ-SKIP)

`plotq sweep run --server URL` is given node a's URL only. It reads the live nodes from a's
GET /status and sends each file to the node with the most free slots: every node renders some of
the files, each file is rendered once (the nodes' logs and the ledger count the renders), and the
sweep records every file's outcome once.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "crash"))
sys.path.insert(0, HERE)
import pg  # noqa: E402
from cluster_test import Cluster, check, fail  # noqa: E402
from plotq_client import request  # noqa: E402

TOKEN = "cluster-sweep-token-0123456789"
CATALOGUE = os.path.join(ROOT, "tests", "catalogue")


def renders(c, name):
    """Job ids node `name` rendered (its log's render lines)."""
    out = []
    with open(os.path.join(c.tmp, name + ".log"), "rb") as f:
        for raw in f:
            if b'"event":"render"' in raw:
                out.append(json.loads(raw)["job_id"])
    return out


def main():
    plotqd = sys.argv[1]
    plotq = os.path.join(os.path.dirname(plotqd), "plotq")
    server = pg.test_server()
    if server is None:
        return 0
    target, drop = pg.own_schema(server)
    tmp = tempfile.mkdtemp(prefix="plotq-cluster-sweep-")
    c = Cluster(plotqd, target, tmp, {"PLOTQ_TOKENS": TOKEN + "=sweeper:assistant", "PLOTQ_SLOTS": "1"})
    db = pg.Conn(target)
    try:
        nodes = [c.start(n) for n in "abc"]
        auth = {"Authorization": "Bearer " + TOKEN}
        end = time.monotonic() + 10
        live = []
        while time.monotonic() < end:
            st, body = request(nodes[0].port, "GET", "/status", headers=auth)
            live = [n for n in body.get("cluster", {}).get("nodes", []) if n["state"] == "live" and n["lease_valid"]]
            if st == 200 and len(live) == 3:
                break
            time.sleep(0.1)
        check(len(live) == 3, "a's GET /status names three live nodes: %s" % [(n["id"], n["address"]) for n in live])
        check(all(n["address"].endswith(":%d" % p.port) for n, p in zip(sorted(live, key=lambda n: n["id"]), nodes)),
              "each node's row names the port it listens on (bound on port 0)")

        st, text = request(nodes[0].port, "GET", "/metrics")
        text = text.decode() if isinstance(text, bytes) else str(text)
        check(st == 200 and 'plotq_cluster_node{node="a",epoch="1"} 1' in text and "plotq_cluster_live_nodes 3" in text
              and "plotq_cluster_fenced 0" in text,
              "a's /metrics names it (node a, epoch 1), three live nodes, not fenced")

        url = "http://127.0.0.1:%d" % nodes[0].port
        env = {k: v for k, v in os.environ.items() if not k.startswith("PLOTQ_")}
        env["PLOTQ_TOKEN"] = TOKEN
        cmd = [plotq, "--db", os.path.join(tmp, "sweep.db"), "sweep", "run", CATALOGUE, "--server", url,
               "--glob", "plots/[a-c]*/implementations/python/*.py", "--library", "matplotlib", "--themes", "light", "--jobs", "3", "--label", "spread"]
        t0 = time.monotonic()
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
        print("plotq sweep run ... --server %s --jobs 3: rc %d in %.1f s" % (url, run.returncode, time.monotonic() - t0))
        if run.returncode != 0:
            fail("the sweep failed: " + run.stdout[-2000:] + run.stderr[-2000:])
        report = subprocess.run([plotq, "--db", os.path.join(tmp, "sweep.db"), "sweep", "report", "spread", "--json"],
                                env=env, capture_output=True, text=True, timeout=60)
        n_files = json.loads(report.stdout)["files"]["done"]
        check(n_files == 3, "the sweep recorded its 3 files once each (%d)" % n_files)

        per_node = {name: renders(c, name) for name in "abc"}
        print("renders per node: %s" % {k: len(v) for k, v in per_node.items()})
        every = sum(per_node.values(), [])
        check(all(len(per_node[n]) == 1 for n in "abc"), "each node rendered one of the three files (spread over the cluster's slots)")
        check(len(every) == len(set(every)) == n_files, "each file rendered once, on one node (%d renders)" % len(every))
        ledger = db.execute("SELECT job_id, count(*) FROM runs WHERE kind = 'render' GROUP BY job_id").fetchall()
        check(len(ledger) == n_files and all(int(n) == 1 for _, n in ledger),
              "the ledger holds one render row per file (%d)" % len(ledger))
    finally:
        c.stop()
        db.close()
        drop()
    print("PASS: sweep (logs in " + tmp + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
