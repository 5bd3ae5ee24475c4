#!/usr/bin/env python3
"""What each library adds to a zygote's start and memory (issue 36): the plot and figure zygotes'
preload (sandbox/harness/preload.py) replayed step by step, in its own order, in a fresh runtime
interpreter per run, each step's wall and CPU seconds and what it adds to the process's PSS and
RSS; the data zygote's preload as one step for scale. Medians over N runs of each mode.

    /usr/bin/python3 bench/zygote_libs.py [-n N] [--python PY]

CPU seconds are the figure to compare across machines (wall moves with the machine's load, which
is printed). The steps are preload.py's own functions and module lists (no copy of them here), so
the table follows the preload when it changes; a step this file does not know fails the run."""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(HERE, "sandbox", "harness")

# Runs inside the runtime's interpreter: one mode's preload as named steps, one JSON line each.
CHILD = r"""
import json, os, resource, sys, time, warnings
sys.path.insert(0, sys.argv[1])
mode = sys.argv[2]
warnings.simplefilter("ignore")

def mem():
    pss = rss = 0
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
            elif line.startswith("Rss:"):
                rss = int(line.split()[1])
    return pss / 1024.0, rss / 1024.0

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

def step(name, fn):
    p0, r0 = mem(); c0 = cpu(); t0 = time.monotonic()
    fn()
    t1 = time.monotonic(); c1 = cpu(); p1, r1 = mem()
    print(json.dumps({"step": name, "wall": t1 - t0, "cpu": c1 - c0, "pss": p1 - p0, "rss": r1 - r0}), flush=True)

p, r = mem()
print(json.dumps({"step": "interpreter", "wall": None, "cpu": cpu(), "pss": p, "rss": r}), flush=True)
import preload as P
import harness
imp = P._import

def modules(names):
    return lambda: [imp(n) for n in names]

def harness_own():
    import encodings.utf_8_sig  # noqa: F401
    import datamode  # noqa: F401

if mode == "data":
    step("harness modules", harness_own)
    step("data stack (numpy, pandas, scipy, time zones, warm-up)", P._preload_data)
else:
    step("harness modules", harness_own)
    step("data stack (numpy, pandas, scipy, time zones, warm-up)", P._preload_data)
    def base():
        for n in P.PLOT_HARNESS_MODULES:
            imp(n)
        m = imp("matplotlib")
        m.use("Agg")
    step("matplotlib on Agg + harness plot modules", base)
    if mode == "plot":
        step("matplotlib, seaborn, PIL (PLOT_MODULES)", modules(P.PLOT_MODULES))
        step("every matplotlib/seaborn submodule", P._import_plot_packages)
        step("builtin and frozen modules", P._import_builtin_and_frozen)
        step("matplotlib/seaborn warm-up draw", P._warm_up_plot)
        # Each library imported on its own before plotlibs.install (which imports them all), so
        # that its cost is its own; the sum is the same as preload's order.
        for name in P.PLOT_LIBRARY_MODULES:
            step("import " + name, modules((name,)))
        import plotlibs
        step("plotlibs.install (pre-arm parts)", lambda: plotlibs.install(None))
        step("plotnine/pygal draws, altair spec", P._warm_up_plot_libraries)
    else:
        step("matplotlib, seaborn, PIL + vector backends",
             modules(P.PLOT_MODULES + ("matplotlib.font_manager",) + P.FIGURE_PLOT_EXTRA))
        step("builtin and frozen modules", P._import_builtin_and_frozen)
        step("import plotly (FIGURE_MODULES)", modules(P.FIGURE_MODULES))
        step("import bokeh (FIGURE_BOKEH_MODULES)", modules(P.FIGURE_BOKEH_MODULES))
        import plotlibs
        step("plotlibs.install (pre-arm parts)", lambda: plotlibs.install(""))
        step("plotly warm-up (trace classes, validators)", P._warm_up_figure)
        step("bokeh warm-up document", P._warm_up_bokeh)
import guard
step("stub index", guard.index_stub_locations)
"""


def run_mode(python, mode):
    out = subprocess.run([python, "-B", "-c", CHILD, HARNESS, mode], capture_output=True, text=True,
                         env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"})
    if out.returncode != 0:
        raise SystemExit("%s zygote's steps failed:\n%s" % (mode, out.stderr[-3000:]))
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--python", default=os.path.join(HERE, "runtime", "venv", "bin", "python"))
    args = ap.parse_args()
    print("zygote preload by step, %d runs a mode, medians; load %.1f %.1f %.1f at the start"
          % ((args.n,) + os.getloadavg()))
    for mode in ("data", "plot", "figure"):
        runs = [run_mode(args.python, mode) for _ in range(args.n)]
        names = [s["step"] for s in runs[0]]
        print("\n%s zygote" % mode)
        print("  %-52s %8s %8s %9s %9s" % ("step (in preload order)", "wall s", "cpu s", "+PSS MiB", "+RSS MiB"))
        totals = {"wall": 0.0, "cpu": 0.0, "pss": 0.0, "rss": 0.0}
        for i, name in enumerate(names):
            med = {}
            for k in ("wall", "cpu", "pss", "rss"):
                vals = [r[i][k] for r in runs if r[i][k] is not None]
                med[k] = statistics.median(vals) if vals else None
                if med[k] is not None:
                    totals[k] += med[k]
            print("  %-52s %8s %8s %9s %9s" % (name[:52], fmt(med["wall"], ".3f"), fmt(med["cpu"], ".3f"),
                                               fmt(med["pss"], ".1f"), fmt(med["rss"], ".1f")))
        print("  %-52s %8.3f %8.3f %9.1f %9.1f" % ("total (interpreter included)", totals["wall"], totals["cpu"],
                                                   totals["pss"], totals["rss"]))
    print("\nload %.1f %.1f %.1f at the end" % os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
