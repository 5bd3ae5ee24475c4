"""R renders through a real plotqd (issue 35): every R file of tests/catalogue in both themes via
POST /render with language "r", each theme's outcome as the catalogue's README says (size,
canvas, not one flat colour, light and dark different; the fail files' class and line); a chat
turn's plot action with ggplot2; a Julia
file is runtime_unavailable and booked; GET /status names the R runtime.

    runtime/venv/bin/python tests/rlang/test_r_render.py <plotqd binary>
"""
import glob
import os
import sys

from rtest_util import (SOURCE, Checks, dump, off_background_share, r_cold, render, request, skip_without_r, start_plotqd,
                        theme_png)
from plotq_client import Stream, new_session, read_to_done  # noqa: E402 (rtest_util puts tests/crash on the path)

CAT = os.path.join(SOURCE, "tests", "catalogue", "plots")
# spec -> (width, height, canvas) for renders; fail specs -> (reason, class, line)
RENDERS = {"bar-basic": (3200, 1800, "exact"), "scatter-basic": (3200, 1800, "exact"),
           "box-square": (2400, 2400, "exact"), "canvas-off": (1050, 750, "off")}
FAILS = {"fail-r-error": ("plot_error", "simpleError", 11), "fail-no-output": ("no_output", None, None)}


def main():
    skip_without_r()
    d, _ = start_plotqd(sys.argv[1])
    check = Checks()
    failures = check.failures

    try:
        status, st = request(d.port, "GET", "/status")
        rt = st.get("r_runtime", {}) if status == 200 else {}
        check(status == 200 and rt.get("id") and rt.get("r") == "4.2.2" and rt["packages"].get("ggplot2") == "3.4.1",
              "GET /status names the R runtime: %s" % dump(rt)[:200])
        files = sorted(glob.glob(os.path.join(CAT, "*", "implementations", "r", "ggplot2.R")))
        check(len(files) >= 5, "the catalogue holds R files: %d" % len(files))
        for path in files:
            spec = path.split(os.sep)[-4]
            with open(path, encoding="utf-8") as f:
                source = f.read()
            status, ans = render(d.port, "r-" + spec, source, themes=("light", "dark"), timeout_s=90)
            if status != 200:
                check(False, "%s: POST /render answered %s %s" % (spec, status, dump(ans)))
                continue
            pngs = {}
            for theme in ("light", "dark"):
                out = ans["outputs"][theme]
                label = "%s %s: %s" % (spec, theme, dump({k: out[k] for k in ("reason", "error", "width", "height", "canvas", "wall_s")}))
                if spec in RENDERS:
                    w, h, canvas = RENDERS[spec]
                    png = theme_png(ans, theme)
                    ok = out["reason"] is None and png is not None and (out["width"], out["height"]) == (w, h) and out["canvas"] == canvas
                    if ok:
                        share, bg, size = off_background_share(png)
                        ok = size == (w, h) and share >= 0.005 and len(png) > 1000
                        label += " off-background %.3f bg %s" % (share, bg)
                        pngs[theme] = (png, bg)
                    check(ok, label)
                else:
                    reason, cls, line = FAILS[spec]
                    err = out.get("error") or {}
                    check(out["reason"] == reason and err.get("class") == cls and err.get("line") == line and out["png_base64"] is None,
                          label)
            if len(pngs) == 2:
                check(pngs["light"][0] != pngs["dark"][0] and pngs["light"][1] != pngs["dark"][1],
                      "%s: light and dark differ (backgrounds %s / %s)" % (spec, pngs["light"][1], pngs["dark"][1]))
        # The harness's own cases: a parse error (class parseError, its line), quit(status = 3)
        # (plot_exit), a plot that shadows the functions the harness calls and moves away from the
        # work dir, then saves nothing (no_output: the record still came back).
        cases = [
            ("r-parse", "x <- 1\ny <- (2 +\n", "plot_error", "parseError", 3),
            ("r-quit", "x <- 1\nquit(status = 3)\n", "plot_exit", "quit", 2),
            ("r-shadow", "sprintf <- function(...) stop('x')\nwriteLines <- function(...) stop('x')\nsetwd('/')\n",
             "no_output", None, None),
        ]
        for job, src, reason, cls, line in cases:
            status, ans = render(d.port, job, src)
            out = ans["outputs"]["light"] if status == 200 else {}
            err = out.get("error") or {}
            check(status == 200 and out.get("reason") == reason and err.get("class") == cls and err.get("line") == line,
                  "%s: %s %s" % (job, status, dump(out)[:300]))
        # A chat turn's plot action with ggplot2: the same R job, its plot event with the canvas.
        sid = new_session(d.port, "rtest")
        with open(os.path.join(CAT, "bar-basic", "implementations", "r", "ggplot2.R"), encoding="utf-8") as f:
            bar = f.read()
        st = Stream(d.port, "POST", "/v1/sessions/%s/messages" % sid,
                    {"text": "plot it", "action": {"kind": "plot", "code": bar, "library": "ggplot2", "language": "r",
                                                   "themes": ["light"]}}, user="rtest", timeout=180)
        seen = []
        done = st.status == 200 and read_to_done(st, seen)
        st.close()
        plot = next((e["data"] for e in seen if e["event"] == "plot"), None)
        light = (plot or {}).get("themes", {}).get("light", {})
        check(done and light.get("width") == 3200 and light.get("height") == 1800 and light.get("canvas") == "exact",
              "chat turn plot action (ggplot2): %s %s" % (st.status, dump([(e["event"], e["data"]) for e in seen])[:400]))
        # Julia: no runtime here, answered runtime_unavailable (503), never run and never a plot error.
        status, ans = render(d.port, "julia-1", "using CairoMakie\n", language="julia", library="makie")
        check(status == 503 and ans.get("detail") == "runtime_unavailable", "julia: %s %s" % (status, dump(ans)[:200]))
        # The language must match the library: an R file named python is refused.
        status, ans = render(d.port, "r-mismatch", "library(ggplot2)\n", language="python")
        check(status == 422 and ans.get("detail") == "invalid_library", "r library with language python: %s %s" % (status, dump(ans)[:200]))
        # The path these renders took: forks of the R zygote by default, fresh R processes with
        # PLOTQ_TEST_R_COLD=1 (rtest_util.start_plotqd). The first may wait for the zygote: still warm.
        r_jobs = [ev for ev in d.events("sandbox_job") if ev.get("mode") == "r"]
        want = not r_cold()
        check(r_jobs and all(ev.get("warm") is want for ev in r_jobs),
              "every R job ran %s: %s" % ("warm" if want else "cold", [ev.get("warm") for ev in r_jobs]))
    finally:
        d.stop()
    # The ledger books R renders with the R runtime's id (read from the store after plotqd stopped).
    import sqlite3

    db = sqlite3.connect(d.db_path)
    ids = {row[0] for row in db.execute("SELECT runtime_id FROM runs WHERE job_id LIKE 'r-%' AND job_id != 'r-mismatch'")}
    db.close()
    check(ids == {rt.get("id")}, "ledger rows of ggplot2 carry the R runtime id: %s" % ids)
    print("%d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
