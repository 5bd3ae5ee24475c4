#!/usr/bin/env python3
"""R renders (issue 35): each R file type of tests/catalogue drawn N times bare (`Rscript`, one
fresh process and temp dir a run: the control) and in the sandbox (`plotq sandbox run FILE --mode r`,
the Launcher's own path: confine_job + exec filter + rharness.R), light theme, median wall and CPU
seconds of each and their ratio; plus, for the warm-start decision: R's library load alone (bare
`Rscript -e` of the six packages), the PSS of an R process that loaded them, and the wall of the file
run in a fork of such a process (parallel::mcparallel, no sandbox: what a zygote's job could reach).

    /usr/bin/python3 bench/r_bench.py [-n N] [-b BUILD_DIR]

One command, run on the machine as it is; the load average is printed with the figures."""
import argparse
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = 'invisible(lapply(c("ggplot2","ragg","dplyr","scales","tidyr","tibble"), library, character.only=TRUE))'


def bare(path, theme="light"):
    d = tempfile.mkdtemp(prefix="plotq-rbench-")
    try:
        shutil.copyfile(path, os.path.join(d, "plot.R"))
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": d, "TMPDIR": d, "ANYPLOT_THEME": theme}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        rc = subprocess.run(["/usr/bin/Rscript", "plot.R"], cwd=d, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL).returncode
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        ok = rc == 0 and os.path.exists(os.path.join(d, "plot-%s.png" % theme))
        return wall, cpu, ok
    finally:
        shutil.rmtree(d, ignore_errors=True)


def sandboxed(plotq, path):
    p = subprocess.run([plotq, "sandbox", "run", path, "--mode", "r", "--timeout", "120"], capture_output=True, text=True)
    j = json.loads(p.stdout.strip().splitlines()[-1])
    return j["wall_s"], j["cpu_s"], j["reason"] == "ok" and "plot-light.png" in j.get("outputs", {})


def libload():
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(["/usr/bin/Rscript", "-e", LIBS], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pss_after_load():
    """PSS and RSS (MiB) of an R process that loaded the six packages (what a zygote would hold)."""
    p = subprocess.Popen(["/usr/bin/Rscript", "-e", LIBS + '; cat("ready\\n"); invisible(readLines("stdin", n = 1))'],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdout.readline()
    pid = p.pid
    # Rscript execs R: the pid is R's own process by now.
    vals = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            k, _, rest = line.partition(":")
            if k in ("Pss", "Rss"):
                vals[k] = int(rest.split()[0]) / 1024
    p.stdin.write("\n")
    p.stdin.close()
    p.wait()
    return vals.get("Pss"), vals.get("Rss")


FORKED = r'''
invisible(lapply(c("ggplot2","ragg","dplyr","scales","tidyr","tibble"), library, character.only=TRUE))
args <- commandArgs(trailingOnly = TRUE)
n <- as.integer(args[[1]])
for (path in args[-1]) {
  walls <- numeric(0)
  for (i in seq_len(n)) {
    d <- tempfile("plotq-rbench-fork-"); dir.create(d)
    t0 <- proc.time()[["elapsed"]]
    job <- parallel::mcparallel({ setwd(d); Sys.setenv(ANYPLOT_THEME = "light"); source(path, local = new.env()); file.exists("plot-light.png") })
    ok <- isTRUE(parallel::mccollect(job)[[1]])
    walls <- c(walls, proc.time()[["elapsed"]] - t0)
    unlink(d, recursive = TRUE)
    if (!ok) walls <- c(walls, NA)
  }
  cat(sprintf("%s %.3f\n", path, median(walls)))
}
'''


def forked(files, n):
    """What a warm start could reach: the median wall of a fork of an R process that already loaded
    the six packages, running the file (no sandbox), per file."""
    p = subprocess.run(["/usr/bin/Rscript", "-e", FORKED, str(n)] + files, capture_output=True, text=True)
    out = {}
    for line in p.stdout.splitlines():
        path, _, wall = line.rpartition(" ")
        out[path] = float(wall) if wall != "NA" else None
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("-b", default=os.path.join(HERE, "build"))
    a = ap.parse_args()
    plotq = os.path.join(a.b, "plotq")
    files = sorted(glob.glob(os.path.join(HERE, "tests/catalogue/plots/*/implementations/r/ggplot2.R")))
    files = [f for f in files if "/fail-" not in f]
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print("r_bench: %s UTC, commit %s, n=%d, load %s, %d cores" % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), commit, a.n,
          open("/proc/loadavg").read().split()[:3], os.cpu_count()))
    lw, lc = zip(*[libload() for _ in range(a.n)])
    print("R + ggplot2, ragg, dplyr, scales, tidyr, tibble loaded, bare: wall %.2f s, CPU %.2f s (medians)" %
          (statistics.median(lw), statistics.median(lc)))
    pss, rss = pss_after_load()
    print("an R process that loaded them: PSS %.1f MiB, RSS %.1f MiB" % (pss, rss))
    fork_wall = forked(files, a.n)
    print("%-14s %9s %9s %9s %9s %7s %7s %10s %7s" % ("file", "bare wall", "bare cpu", "sbx wall", "sbx cpu", "wall x", "cpu x",
                                                 "fork wall", "fork x"))
    for path in files:
        spec = path.split(os.sep)[-4]
        b = [bare(path) for _ in range(a.n)]
        s = [sandboxed(plotq, path) for _ in range(a.n)]
        if not all(x[2] for x in b + s):
            print("%-14s a run did not render (bare %s, sandbox %s)" % (spec, [x[2] for x in b], [x[2] for x in s]))
            continue
        bw, bc = statistics.median(x[0] for x in b), statistics.median(x[1] for x in b)
        sw, sc = statistics.median(x[0] for x in s), statistics.median(x[1] for x in s)
        fw = fork_wall.get(path)
        print("%-14s %9.2f %9.2f %9.2f %9.2f %7.2f %7.2f %10s %7s" % (spec, bw, bc, sw, sc, sw / bw, sc / bc,
              "%.2f" % fw if fw else "-", "%.2f" % (fw / bw) if fw else "-"))


if __name__ == "__main__":
    main()
