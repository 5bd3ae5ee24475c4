#!/usr/bin/env python3
"""R renders (issue 35): each R file type of tests/catalogue drawn N times bare (`Rscript`, one
fresh process and temp dir a run: the control), in the sandbox cold (`plotq sandbox run FILE --mode r
--cold`: confine_job + exec filter + rharness.R in a fresh R) and warm (`plotq sandbox run FILE --mode
r --repeat N`: N jobs forked from the R zygote of one launcher, ready before the first), light theme;
median wall and CPU seconds of each and the ratios to bare. Plus R's library load alone (bare
`Rscript -e` of the six packages) and the PSS of the R zygote (harness/rzygote.R as the host starts
it, idle after its preload, no job running).

    /usr/bin/python3 bench/r_bench.py [-n N] [-b BUILD_DIR]

One command, run on the machine as it is; the load average is printed with the figures (before and
after). Under load only ratios within one run compare. Sandbox jobs run at nice 0 here, as bare
`Rscript` does (PLOTQ_SANDBOX_NICE=0; plotqd's default is 10)."""
import argparse
import glob
import json
import os
import resource
import shutil
import socket
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


def sandboxed(plotq, path, n, cold):
    """(wall, cpu, ok) of each of n sandbox runs: cold, one launcher (and fresh R) per run; warm,
    n jobs on one launcher whose R zygote is ready before the first."""
    cmd = [plotq, "sandbox", "run", path, "--mode", "r", "--timeout", "120"]
    # Not niced (plotqd's default is 10): bare Rscript is not, and on a shared machine a niced job
    # waits for every other build's compiler.
    env = dict(os.environ, PLOTQ_SANDBOX_NICE="0")
    if cold:
        runs = [subprocess.run(cmd + ["--cold"], capture_output=True, text=True, env=env).stdout for _ in range(n)]
    else:
        runs = [subprocess.run(cmd + ["--repeat", str(n)], capture_output=True, text=True, env=env).stdout]
    out = []
    for line in "".join(runs).splitlines():
        j = json.loads(line)
        out.append((j["wall_s"], j["cpu_s"], j["reason"] == "ok" and "plot-light.png" in j.get("outputs", {})
                    and j.get("warm") is (not cold)))
    return out or [(0, 0, False)]


def libload():
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(["/usr/bin/Rscript", "-e", LIBS], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def zygote_pss(build):
    """PSS and RSS (MiB) of the R zygote, idle after its preload: harness/rzygote.R started as the
    host starts it (sandbox/zygote.cpp, minus the namespaces, which change no memory), its control
    socket ours; closing it ends the zygote."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    scratch = tempfile.mkdtemp(prefix="plotq-rbench-zygote-")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/job", "TMPDIR": scratch, "LANG": "C.UTF-8",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "R_HOME": "/usr/lib/R",
           "R_SHARE_DIR": "/usr/share/R/share", "R_INCLUDE_DIR": "/usr/share/R/include", "R_DOC_DIR": "/usr/share/R/doc",
           "R_LIBS_USER": "/tmp/job/.R-library-none"}
    lib = os.path.join(build, "sandbox")
    p = subprocess.Popen(["/usr/lib/R/bin/exec/R", "--vanilla", "--no-echo", "--no-readline", "-f",
                          os.path.join(HERE, "sandbox/harness/rzygote.R"), "--args", "--ctl-fd", str(theirs.fileno()),
                          "--lib", os.path.join(lib, "libplotq_confine.so"), "--zygote-lib", os.path.join(lib, "plotq_r_zygote.so"),
                          "--arm-lib", os.path.join(lib, "plotq_r_arm.so")],
                         env=env, pass_fds=[theirs.fileno()], stdout=subprocess.DEVNULL)
    theirs.close()
    try:
        ready = json.loads(ours.recv(4096))
        vals = {}
        with open("/proc/%d/smaps_rollup" % p.pid) as f:
            for line in f:
                k, _, rest = line.partition(":")
                if k in ("Pss", "Rss"):
                    vals[k] = int(rest.split()[0]) / 1024
        return vals.get("Pss"), vals.get("Rss"), ready.get("preload_s")
    finally:
        ours.close()
        p.wait()
        shutil.rmtree(scratch, ignore_errors=True)


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
    pss, rss, preload_s = zygote_pss(a.b)
    print("the R zygote, idle after its preload (%.2f s): PSS %.1f MiB, RSS %.1f MiB" % (preload_s, pss, rss))
    print("%-14s %9s %9s %9s %9s %9s %9s %7s %7s %7s" % ("file", "bare wall", "bare cpu", "cold wall", "cold cpu",
                                                        "warm wall", "warm cpu", "cold x", "warm x", "warm cpu x"))
    for path in files:
        spec = path.split(os.sep)[-4]
        b = [bare(path) for _ in range(a.n)]
        c = sandboxed(plotq, path, a.n, True)
        w = sandboxed(plotq, path, a.n, False)
        if not all(x[2] for x in b + c + w):
            print("%-14s a run did not render (bare %s, cold %s, warm %s)" % (spec, [x[2] for x in b], [x[2] for x in c],
                                                                             [x[2] for x in w]))
            continue
        med = lambda runs, i: statistics.median(x[i] for x in runs)
        bw, bc, cw, cc, ww, wc = med(b, 0), med(b, 1), med(c, 0), med(c, 1), med(w, 0), med(w, 1)
        print("%-14s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %7.2f %7.2f %7.2f" % (spec, bw, bc, cw, cc, ww, wc, cw / bw, ww / bw,
                                                                             wc / bc))
    print("load after: %s" % open("/proc/loadavg").read().split()[:3])


if __name__ == "__main__":
    main()
