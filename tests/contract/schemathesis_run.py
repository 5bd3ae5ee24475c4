"""contract.schemathesis: schemathesis (runtime/tools.lock) against a real plotqd, from the document
plotqd serves at /openapi.json. Checks: no 5xx (not_a_server_error), every status is one the
operation documents, every answer's content type and JSON body match its schema, documented headers
are there, and every answer comes within its limit (schemathesis.toml: 10 s, 90 s for the routes that run code). Phases: the documented examples, fuzzing
of each operation, and the stateful phase along the document's links (a session -> a message ->
its events -> cancel; a session -> a paste -> the version -> confirm). The example budget is fixed
for CI (PLOTQ_SCHEMATHESIS_EXAMPLES, default 8 per operation; the seed PLOTQ_SCHEMATHESIS_SEED)
and larger on demand, e.g. PLOTQ_SCHEMATHESIS_EXAMPLES=200. Zero failures or the test fails.

Usage: schemathesis_run.py PLOTQD [--keep DIR]"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "crash"))
from plotq_client import Plotqd  # noqa: E402

SCHEMATHESIS = os.path.join(ROOT, "runtime", "tools", "bin", "schemathesis")
MAX_RESPONSE_S = 90  # the response-time limits are in schemathesis.toml; this is the transport's
CHECKS = ",".join(["not_a_server_error", "status_code_conformance", "content_type_conformance",
                   "response_headers_conformance", "response_schema_conformance", "negative_data_rejection"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("plotqd")
    ap.add_argument("--keep", help="work here and keep the store, the log and the report")
    args = ap.parse_args()
    if not os.access(SCHEMATHESIS, os.X_OK):
        print("PLOTQ-SKIP: no runtime/tools/bin/schemathesis (tools/runtime.sh installs runtime/tools.lock)")
        return 0
    examples = int(os.environ.get("PLOTQ_SCHEMATHESIS_EXAMPLES", "8"))
    seed = os.environ.get("PLOTQ_SCHEMATHESIS_SEED", "17")
    work = args.keep or tempfile.mkdtemp(prefix="plotq-contract-")
    os.makedirs(work, exist_ok=True)
    # Daily caps low: every turn past them is a quick refusal, so the budget is spent on the wire
    # contract and not on sandbox runs of generated code (each still ran, up to the caps).
    env = {"PLOTQ_DAILY_DATA_RUNS": "6", "PLOTQ_DAILY_PIPELINE_RUNS": "6", "PLOTQ_RUNS_PER_MINUTE": "10000",
           "PLOTQ_USER_MESSAGES_PER_MINUTE": "10000", "PLOTQ_USER_MESSAGES_PER_DAY": "100000",
           "PLOTQ_TURN_DATA_TIMEOUT_S": "5", "PLOTQ_TURN_RENDER_TIMEOUT_S": "5"}
    d = Plotqd(args.plotqd, os.path.join(work, "plotq.db"), os.path.join(work, "plotqd.log"), env).start()
    url = "http://127.0.0.1:%d" % d.port
    cmd = [SCHEMATHESIS, "--config-file", os.path.join(HERE, "schemathesis.toml"), "run", url + "/openapi.json", "--url", url, "--checks", CHECKS,
           "--phases", os.environ.get("PLOTQ_SCHEMATHESIS_PHASES", "examples,fuzzing,stateful"),
           "--mode", os.environ.get("PLOTQ_SCHEMATHESIS_MODE", "all"), "--max-examples", str(examples), "--seed", seed, "--workers", "1",
           "--generation-database", "none", "--no-color", "--request-timeout", str(MAX_RESPONSE_S + 10),
           "--suppress-health-check", "all", "-H", "X-Plotq-User: contract",
           "--report", "junit", "--report-dir", os.path.join(work, "report")]
    t0 = time.monotonic()
    env_st = dict(os.environ, SCHEMATHESIS_HOOKS="", PYTHONDONTWRITEBYTECODE="1")
    rc = subprocess.call(cmd, env=env_st, cwd=work)
    took = time.monotonic() - t0
    alive = d.proc.poll() is None
    d.stop()
    print("schemathesis rc=%d in %.1f s (%d examples per operation, seed %s); plotqd %s; work %s"
          % (rc, took, examples, seed, "alive" if alive else "DEAD", work))
    return 0 if rc == 0 and alive else 1


if __name__ == "__main__":
    sys.exit(main())
