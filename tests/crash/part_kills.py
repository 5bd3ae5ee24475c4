#!/usr/bin/python3
"""Kill one part of a running plotqd at a time while work runs (issue 16, section 1): a sandbox
job, the data zygote, the R zygote (harness/rzygote.R), the Chromium of the figure renderer. Each
time the request in flight is answered (never left hanging) with a clear error, or drawn again by a
restarted part; plotqd stays up, the part comes back, and the next job of the same kind succeeds.

  part_kills.py PLOTQD --part job|zygote|rzygote|chromium [--keep DIR]

Prints PLOTQ-SKIP (ctest: skipped) when the part cannot run here: no sandbox, no R, or no Chromium.
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import procs  # noqa: E402
from plotq_client import Plotqd, request  # noqa: E402
from workload import PLOTLY, data_code  # noqa: E402

# Runs until killed (well inside its timeout), in plain Python: the data profile admits no sleep.
BUSY = "import pandas as pd\ntotal = 0\nfor i in range(10 ** 9):\n    total += i\ndf = pd.DataFrame({'t': [total]})\n"
# An R plot that spins until killed (well inside its timeout), and one that renders.
R_BUSY = "library(ggplot2)\nrepeat {}\n"
R_PLAIN = ("library(ggplot2)\np <- ggplot(data.frame(x = 1:3, y = c(2, 1, 3)), aes(x, y)) + geom_point()\n"
           "ggsave(sprintf(\"plot-%s.png\", Sys.getenv(\"ANYPLOT_THEME\")), plot = p, device = ragg::agg_png, "
           "width = 4, height = 3, units = \"in\", dpi = 100)\n")
R_BINARY = "/usr/lib/R/bin/exec/R"
# A figure with enough points that Chromium is still drawing when it is killed.
BIG_PLOTLY = ("import plotly.graph_objects as go\nfig = go.Figure(go.Scatter(x=list(range(60000)), "
              "y=[(i * 7919) % 1000 for i in range(60000)], mode='markers'))\nfig.show()\n")
# The codes a job may be answered with when a part died under it (server/errors.hpp).
CLEAR = {"io", "sandbox_lost", "sandbox_unavailable", "renderer_failed", "internal", "unavailable", "stuck"}


class Call(threading.Thread):
    def __init__(self, port, path, body):
        super().__init__(daemon=True)
        self.args = (port, path, body)
        self.result = None

    def run(self):
        port, path, body = self.args
        try:
            self.result = request(port, "POST", path, body, user="svc", timeout=120)
        except OSError as e:
            self.result = (0, repr(e))


def busiest(pids_of, seconds=0.7):
    """The process among pids_of() whose CPU time grew most over a short look (the running job)."""
    first = {p["pid"]: p["cpu"] for p in pids_of()}
    time.sleep(seconds)
    best, grew = None, 0
    for p in pids_of():
        d = p["cpu"] - first.get(p["pid"], p["cpu"])
        if d > grew:
            best, grew = p, d
    return best


def clear_failure(status, body):
    """A job a part died under: a 200 that names what happened, or an error of the vocabulary."""
    if status == 200 and isinstance(body, dict):
        outs = body.get("outputs", {"": body})
        return all(o.get("exit_code") not in (0,) or o.get("reason") for o in outs.values())
    return status >= 500 and isinstance(body, dict) and body.get("detail") in CLEAR


def scrape(d):
    """GET /metrics (loopback: no token) as {"name{labels}": value}."""
    status, raw = request(d.port, "GET", "/metrics")
    if status != 200:
        raise RuntimeError("GET /metrics answered %d" % status)
    out = {}
    for line in raw.decode().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


# What each kill must move, by exactly this much (docs/metrics.md): the part's exits and the
# starts of the one that replaced it, and nothing else of the kind.
PART_METRICS = {
    "job": {'plotq_zygote_exits_total{mode="data"}': 0, 'plotq_zygote_starts_total{mode="data"}': 0,
            'plotq_sandbox_runs_total{kind="data",library="none",outcome="crashed"}': 1},
    "zygote": {'plotq_zygote_exits_total{mode="data"}': 1, 'plotq_zygote_starts_total{mode="data"}': 1},
    "rzygote": {'plotq_zygote_exits_total{mode="r"}': 1, 'plotq_zygote_starts_total{mode="r"}': 1,
                'plotq_zygote_exits_total{mode="data"}': 0},
    "chromium": {"plotq_chromium_exits_total": 1, "plotq_chromium_starts_total": 1},
}


def check_metrics(part, before, after, fail):
    for key, want in PART_METRICS[part].items():
        got = after.get(key, 0) - before.get(key, 0)
        print("parts: metrics %s moved by %g (want %g)" % (key, got, want))
        if got != want:
            fail.append("%s: %s moved by %g, not %g" % (part, key, got, want))


def zygotes(d):
    return [p for p in procs.tree(d.pid) if p["part"] == "zygote"]


def job_forked(d, timeout=30):
    """Waits until the data zygote has forked the busy job (a process below it); whether it has."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if [p for p in zygotes(d) if p["depth"] >= 3]:
            return True
        time.sleep(0.05)  # a poll's pace
    return False


def kill_job(d, fail, job_id, quick_data):
    """A sandbox job: a warm job is a fork of the zygote (a process below it)."""
    call = Call(d.port, "/run-data", {"job_id": job_id("busy"), "source": BUSY, "timeout_s": 25})
    call.start()
    job_forked(d)
    victim = busiest(lambda: [p for p in zygotes(d) if p["depth"] >= 3])
    if victim is None:
        fail.append("job: no running job process found under the zygote")
        return
    os.kill(victim["pid"], signal.SIGKILL)
    call.join(60)
    print("parts: job %d killed -> %r" % (victim["pid"], (call.result[0], str(call.result[1])[:160])))
    if call.result is None or not clear_failure(*call.result):
        fail.append("job: the killed job was not answered with a clear error: %r" % (call.result,))
    quick_data("job")


def kill_zygote(d, fail, job_id, quick_data):
    """The zygote itself while its job runs: the job goes with it, a new zygote comes."""
    call = Call(d.port, "/run-data", {"job_id": job_id("busy"), "source": BUSY, "timeout_s": 25})
    call.start()
    if not job_forked(d):
        fail.append("zygote: its job was never forked")
        return
    top = [p for p in zygotes(d) if p["depth"] == 2]
    if not top:
        fail.append("zygote: no data zygote found")
        return
    os.kill(top[0]["pid"], signal.SIGKILL)
    call.join(60)
    print("parts: zygote %d killed -> %r" % (top[0]["pid"], (call.result[0], str(call.result[1])[:160])))
    if call.result is None or not clear_failure(*call.result):
        fail.append("zygote: its job was not answered with a clear error: %r" % (call.result,))
    quick_data("zygote")
    # The next job may be sent before the zygote's exit is noticed (it then runs cold); the one
    # after it starts a new zygote.
    for _ in range(2):
        if d.wait_log("zygote_ready", 1, lambda ev: ev.get("pid") != top[0]["pid"]):
            break
        quick_data("zygote")
    if not d.wait_log("zygote_ready", 60, lambda ev: ev.get("pid") != top[0]["pid"]):
        fail.append("zygote: no new zygote came up after the next jobs")


def r_zygotes(d, depth):
    return [p for p in zygotes(d) if "rzygote.R" in p["cmd"] and (p["depth"] >= 3 if depth == 3 else p["depth"] == depth)]


def kill_rzygote(d, fail, job_id, quick_r):
    """The R zygote while its job spins: the job goes with it (answered as a Python zygote's job
    is), a new R zygote comes, the next R render succeeds."""
    call = Call(d.port, "/render", {"job_id": job_id("rbusy"), "source": R_BUSY, "library": "ggplot2", "language": "r",
                                    "themes": ["light"], "timeout_s": 25})
    call.start()
    end = time.monotonic() + 30
    while not r_zygotes(d, 3) and time.monotonic() < end:
        time.sleep(0.05)  # a poll's pace
    top = r_zygotes(d, 2)
    if not r_zygotes(d, 3) or not top:
        fail.append("rzygote: no R job forked from an R zygote found")
        return
    time.sleep(0.5)  # into the plot (its entry reported)
    os.kill(top[0]["pid"], signal.SIGKILL)
    call.join(60)
    print("parts: R zygote %d killed -> %r" % (top[0]["pid"], (call.result[0], str(call.result[1])[:200])))
    if call.result is None or not clear_failure(*call.result):
        fail.append("rzygote: its job was not answered with a clear error: %r" % (call.result,))
    for _ in range(2):  # the first may run cold, if sent before the zygote's exit is noticed
        quick_r("rzygote")
        if d.wait_log("zygote_ready", 1, lambda ev: ev.get("mode") == "r" and ev.get("pid") != top[0]["pid"]):
            break
    if not d.wait_log("zygote_ready", 60, lambda ev: ev.get("mode") == "r" and ev.get("pid") != top[0]["pid"]):
        fail.append("rzygote: no new R zygote came up after the next renders")


def kill_chromium(d, fail, job_id, plotly):
    """Chromium while it draws a figure: answered, a fresh renderer draws the next one."""
    call = Call(d.port, "/render", {"job_id": job_id("big"), "source": BIG_PLOTLY, "library": "plotly",
                                    "themes": ["light"], "timeout_s": 60})
    call.start()
    label = "render %s light" % call.args[2]["job_id"]
    d.wait_log("sandbox_job", 60, lambda ev: ev.get("label") == label)  # the figure JSON is made
    browser = [p for p in procs.tree(d.pid) if p["comm"] == "chromium" and "--type=" not in p["cmd"]]
    if not browser:
        fail.append("chromium: no browser process of the figure renderer found")
        return
    os.kill(browser[0]["pid"], signal.SIGKILL)
    call.join(90)
    print("parts: chromium %d killed -> %r" % (browser[0]["pid"], (call.result[0], str(call.result[1])[:160])))
    status, body = call.result or (0, None)
    out = body.get("outputs", {}).get("light", {}) if status == 200 and isinstance(body, dict) else {}
    drawn_again = status == 200 and out.get("reason") is None and out.get("width")
    if not drawn_again and not clear_failure(status, body):
        fail.append("chromium: the figure in flight was neither drawn again nor answered with a clear error: %r"
                    % (str(call.result)[:200],))
    if not d.wait_log("figure_renderer_exit", 5):
        fail.append("chromium: the renderer was not seen to exit after its browser was killed")
    plotly("chromium")


def kill_part(d, part, fail, job_id, quick_data, plotly, quick_r):
    """Kills `part` while work runs and checks what follows (fail grows); returns why the part
    cannot be checked here, or None."""
    # A job killed under the zygote needs the zygote: before it is ready, jobs run cold (a loaded
    # CI host once took longer than the first data job to preload it).
    if part in ("job", "zygote") and d.wait_log("zygote_ready", 180, lambda ev: ev.get("mode") == "data") is None:
        fail.append("the data zygote never said it was ready")
        return None
    if part == "rzygote":
        quick_r("warm-up")  # waits for the R zygote (its first job starts it)
        if d.wait_log("zygote_ready", 120, lambda ev: ev.get("mode") == "r") is None:
            fail.append("the R zygote never said it was ready")
            return None
    if part == "chromium":
        plotly("warm-up")  # the renderer is up before the scrape: its start is not the kill's
    before = scrape(d)
    if part == "job":
        kill_job(d, fail, job_id, quick_data)
    elif part == "zygote":
        kill_zygote(d, fail, job_id, quick_data)
    elif part == "rzygote":
        kill_rzygote(d, fail, job_id, quick_r)
    elif d.events("figures_unavailable"):
        return "no figure renderer here: %s" % d.events("figures_unavailable")[0].get("reason")
    else:
        kill_chromium(d, fail, job_id, plotly)
    if d.proc.poll() is not None:
        fail.append("plotqd exited during the part kill")
    else:
        check_metrics(part, before, scrape(d), fail)
    return None


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # plotqd is stopped on the way out
    ap = argparse.ArgumentParser()
    ap.add_argument("plotqd")
    ap.add_argument("--part", choices=["job", "zygote", "rzygote", "chromium"], required=True)
    ap.add_argument("--keep")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="plotq-parts-")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o711)  # the figure renderer's dir is made here: Chromium's uid must reach it
    manifest = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                            "runtime", "r", "plotq-r-runtime.json")
    if args.part == "rzygote" and not (os.path.exists(R_BINARY) and os.path.exists(manifest)):
        print("PLOTQ-SKIP: no R here (%s) or no R runtime manifest (%s); tools/setup.sh installs both" % (R_BINARY, manifest))
        return 0
    warm = "data,r" if args.part == "rzygote" else "data"
    env = {"PLOTQ_RUNS_PER_MINUTE": "100000", "PLOTQ_WARM_MODES": warm, "PLOTQ_SLOTS": "2",
           "PLOTQ_FIGURE_TMP_ROOT": work}
    d = Plotqd(args.plotqd, os.path.join(work, "plotq.db"), os.path.join(work, "plotqd.log"), env).start()
    fail = []
    n = [0]

    def job_id(kind):
        n[0] += 1
        return "%s-%d" % (kind, n[0])

    def quick_data(why):
        # The point is that it succeeds, not how fast: after a zygote kill it runs cold beside the
        # new zygote's preload, which on a loaded CI host took more than 20 s. So the route's own
        # cap (runs::kMaxDataTimeoutS); more is refused as invalid_job.
        status, body = request(d.port, "POST", "/run-data", {"job_id": job_id("next"), "source": data_code(3),
                                                             "timeout_s": 30}, user="svc", timeout=120)
        if status != 200 or body.get("exit_code") != 0 or body.get("csv_text", "").count("\n") != 4:
            fail.append("%s: the next data job did not succeed: %d %r" % (why, status, str(body)[:200]))

    def plotly(why, source=PLOTLY % 1):
        status, body = request(d.port, "POST", "/render", {"job_id": job_id("fig"), "source": source,
                                                           "library": "plotly", "themes": ["light"],
                                                           "timeout_s": 60}, user="svc", timeout=120)
        out = body.get("outputs", {}).get("light", {}) if isinstance(body, dict) else {}
        if status != 200 or out.get("reason") is not None or out.get("width") is None:
            fail.append("%s: the next plotly render did not succeed: %d %r" % (why, status, str(body)[:200]))

    def quick_r(why):
        status, body = request(d.port, "POST", "/render", {"job_id": job_id("r"), "source": R_PLAIN, "library": "ggplot2",
                                                           "language": "r", "themes": ["light"], "timeout_s": 60},
                               user="svc", timeout=180)
        out = body.get("outputs", {}).get("light", {}) if isinstance(body, dict) else {}
        if status != 200 or out.get("reason") is not None or out.get("width") is None:
            fail.append("%s: the next R render did not succeed: %d %r" % (why, status, str(body)[:300]))

    try:
        if not d.wait_log("sandbox", 5, lambda ev: ev.get("ready") is True):
            print("PLOTQ-SKIP: the sandbox cannot run here (plotqd --check-sandbox)")
            return 0
        quick_data("start")
        skip = kill_part(d, args.part, fail, job_id, quick_data, plotly, quick_r)
        if skip:
            print("PLOTQ-SKIP: " + skip)
            return 0
    finally:
        d.stop()
    for f in fail:
        print("FAIL " + f)
    print("parts: %s killed while work ran: %s" % (args.part, "FAILED" if fail else "answered, restarted, next job ok"))
    if not fail and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
