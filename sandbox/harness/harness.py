"""plotq harness: the Python that runs inside the sandbox child (see README.md).

  harness.main(argv) -> int     argv = ["--data", "snippet.py"], ["--plot", "plot.py"] or
                                ["--figure", "plot.py"] (plot/figure: ANYPLOT_THEME=light|dark)
  harness.preload(mode) -> None "data", "plot", "figure" or "raw": import what the mode needs
                                (warm zygote)
  harness.warm_spare(mode, job_waiting) -> int   a zygote's spare, before its job arrives

main() is called in the job process, cwd = a fresh work dir, after the kernel layers are in place.
It prints `HARNESS {"event": "start"}` first and `HARNESS {"event": "end", ...}` last, and returns
the exit code; the snippet never chooses it. After main() returns in data mode the guard is still
armed and os._exit is a refusing stub: a caller must have bound os._exit before calling main,
e.g. `os._exit(harness.main(argv))` (the callee expression is evaluated before the argument).

Also runnable as a script for tests: /usr/bin/python3 -I harness.py --data snippet.py
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)    # `-I` leaves the script's directory off sys.path
sys.dont_write_bytecode = True   # `-I` ignores PYTHONDONTWRITEBYTECODE; never write beside the code

import exits  # noqa: E402
import preload as _preload  # noqa: E402
import records  # noqa: E402

USAGE_TEXT = ("usage: harness.py --data snippet.py | --plot plot.py | --figure plot.py"
              " (ANYPLOT_THEME=light|dark)\n")
SKIP_VALIDATION_VARIABLE = "PLOTQ_HARNESS_SKIP_VALIDATION"
# A plot spare starts vl-convert's engine (a step of a few hundred ms of CPU) only after waiting
# this long for a job (warm_spare).
VL_WARM_AFTER_IDLE_S = 0.5


def preload(mode):
    """Imports everything `mode` needs ("data": numpy, pandas with every module of pandas.core,
    pandas.tseries and pandas.api, every time zone, scipy's computing submodules and the admitted
    standard modules; "plot": that plus every module of matplotlib (Agg) and seaborn, the
    builtin and frozen modules, and a warm-up draw; "figure": the data stack, what the cold
    path's prepare("figure") imports, plotly's trace classes and validators, not plot mode's
    walk nor its draw (preload._preload_figure); "raw": nothing).

    Every mode but raw also imports data mode's own modules and the codec read_snippet decodes
    with (utf-8-sig), first, so that the stub index built at the end of preload knows their
    namespaces: in a warm child they would otherwise be found and compiled from source, and
    the codec looked up on disk, on every job."""
    if mode != "raw":
        import encodings.utf_8_sig  # noqa: F401
        import datamode  # noqa: F401  (runclosure, table, errors, guard, validator, records)
    _preload.preload(mode)


# Spares warmed for one library (the host's spare_warm_ups names them): the step such a spare runs
# at once instead of after VL_WARM_AFTER_IDLE_S, because the job before it is running meanwhile.
SPARE_WARM_UPS = {"plot": ("altair",)}


def warm_spare(mode, job_waiting=None, warm_for=""):
    """What a warm zygote's spare (a fresh fork waiting for its one job) runs before the job
    arrives, off the job's latency: the reads arming does (guard.warm_stub_index); in data
    mode, the harness's own pre-arm steps on a constant frame (datamode.warm_spare_steps); in
    plot mode, vl-convert's engine start (plotlibs.warm_vl_convert: its threads cannot cross the
    zygote's fork). They change nothing a job can observe; they take the copy-on-write faults of
    the zygote's shared pages (and the engine's start) that the job would otherwise take. A plot
    spare armed for altair (`warm_for`, SPARE_WARM_UPS) starts the engine first and at once.
    Stops before the next step once job_waiting() says a job is waiting, and at the first step
    that fails (an optimisation only); job_waiting(s) waits up to s seconds for one. Returns the
    number of steps run. Never arms anything."""
    if mode == "raw":
        return 0
    import guard
    steps = [lambda: guard.warm_stub_index(job_waiting)]
    if mode == "data":
        import datamode
        steps.extend(datamode.warm_spare_steps())
    if mode == "plot":
        import plotlibs

        def vl_convert_after_a_pause():
            # A long step a job cannot interrupt: only once no job came for a while (jobs back
            # to back never wait for it).
            if job_waiting is None or not job_waiting(VL_WARM_AFTER_IDLE_S):
                plotlibs.warm_vl_convert()
        if warm_for in SPARE_WARM_UPS.get(mode, ()):
            # Armed for altair: the engine first, without the pause (the altair job it is for
            # would otherwise start it itself).
            steps.insert(0, plotlibs.warm_vl_convert)
        else:
            steps.append(vl_convert_after_a_pause)
    done = 0
    for step in steps:
        if job_waiting is not None and job_waiting():
            break
        try:
            step()
        except Exception:
            break
        done += 1
    return done


def _main(argv, validate):
    try:
        sys.stdout.flush()
    except Exception:
        pass
    records.write_start_line()
    if len(argv) == 2 and argv[0] == "--data" and argv[1]:
        import datamode
        return datamode.run_data(argv[1], validate=validate, preload=preload)
    if len(argv) == 2 and argv[0] in ("--plot", "--figure") and argv[1]:
        import plotmode
        return plotmode.run_plot(argv[0][2:], argv[1], prepare=_preload.prepare)
    os.write(2, USAGE_TEXT.encode("ascii"))
    return exits.USAGE


def main(argv):
    """The launcher's entry point: validation always runs."""
    return _main(list(argv), validate=True)


def _script():
    # Bound before anything runs: after the run os._exit is a refusing stub, and this module's
    # globals are reachable by the snippet (import __main__), a local of this frame is not.
    exit_now = os._exit
    validate = os.environ.get(SKIP_VALIDATION_VARIABLE) != "1"
    code = _main(sys.argv[1:], validate)
    exit_now(code)


if __name__ == "__main__":
    _script()
