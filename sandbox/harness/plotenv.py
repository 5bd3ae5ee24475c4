"""The plot's surroundings, as PlotGuard (plotguard.py) and plot mode see them: the install
prefixes (what may be read and imported with trust), the other read roots, and the library
settings made while arming (README.md, "PlotGuard").
"""

import os
import site
import sys
import sysconfig
import traceback
import types
import zoneinfo


def install_prefixes():
    """Directories of the installed Python packages, as the import system names them: the
    stdlib (and its zip), lib-dynload, site and dist packages. Never the work dir, the harness
    dir or anything the job can write."""
    found = []
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            found.append(paths[key])
    try:
        found.extend(site.getsitepackages())
    except AttributeError:
        pass
    for entry in sys.path:   # the stdlib zip and lib-dynload, when they are separate entries
        if isinstance(entry, str) and (entry.endswith(".zip") or entry.endswith("lib-dynload")):
            found.append(entry)
    out = []
    for path in found:
        # Also the real path: a venv reached through a link (a checkout under /tmp keeps its venv
        # elsewhere, tools/runtime.sh) is read by its real name wherever a library resolves a
        # path (matplotlib's get_font opens os.path.realpath(font)).
        for candidate in (os.path.normpath(path), os.path.realpath(path)):
            if os.path.isabs(candidate) and candidate != "/" and candidate not in out:
                out.append(candidate)
    return tuple(out)


# The cgroup CPU quota, which joblib's loky reads to size scikit-learn's workers (KMeans.fit,
# even at one job): a number, no secret.
CPU_QUOTA_FILES = ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                   "/sys/fs/cgroup/cpu/cpu.cfs_period_us")


def data_read_roots():
    """(prefixes, exact files) plot code may read besides the install and its work dir:
    matplotlib's data dir, the time zone database, the font files matplotlib's font manager
    lists, the CPU quota files. (The runtime's package data, plotly's templates and datasets
    included, lies under the install prefixes.)"""
    prefixes = []
    files = set(CPU_QUOTA_FILES)
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is not None:
        prefixes.append(os.path.normpath(matplotlib.get_data_path()))
        prefixes.append(os.path.realpath(matplotlib.get_data_path()))
    for path in zoneinfo.TZPATH:
        prefixes.append(os.path.normpath(path))
    font_manager = sys.modules.get("matplotlib.font_manager")
    manager = getattr(font_manager, "fontManager", None)
    for entry in list(getattr(manager, "ttflist", ())) + list(getattr(manager, "afmlist", ())):
        name = getattr(entry, "fname", None)
        if isinstance(name, str) and os.path.isabs(name):
            files.add(os.path.normpath(name))
            files.add(os.path.realpath(name))
    return tuple(p for p in prefixes if os.path.isabs(p) and p != "/"), frozenset(files)


def settle_libraries(work_dir):
    """Library settings for a run in the work dir, made while arming (never by merely building a
    policy): shutil.rmtree walks by descriptors and closes them with os.close, which stays
    stubbed (rule `fd`: the kept descriptors), so it walks by paths, whose events are judged
    here, and shutil.copyfile copies through file objects (its Linux fast path is os.sendfile,
    stubbed: a catalogue file's shutil.copy inside its work dir was refused); tempfile probes
    its directory once by writing with os.write (stubbed), so its directory, the work dir
    (TMPDIR), is named now (a zygote may have cached its own)."""
    import shutil       # loaded now, so that a plot importing it later finds it settled
    if getattr(shutil, "_use_fd_functions", False):
        shutil._use_fd_functions = False
    if getattr(shutil, "_USE_CP_SENDFILE", False):
        shutil._USE_CP_SENDFILE = False
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = work_dir     # also over a directory a zygote's preload cached
    core = sys.modules.get("pyparsing.core")
    if core is not None and getattr(core, "traceback", None) is traceback:
        core.traceback = _pyparsing_traceback(core)
    # scikit-learn sizes its workers with joblib's loky, which runs lscpu unless a user limit
    # below the CPU count is set, and asks threadpoolctl for the native thread pools, which it
    # finds in /proc/self/maps and drives through ctypes (both refused). The launcher already
    # pins BLAS and OpenMP to one thread: one loky worker, and a controller that finds no pools.
    os.environ.setdefault("LOKY_MAX_CPU_COUNT", "1")
    threadpoolctl = sys.modules.get("threadpoolctl")
    controller = getattr(threadpoolctl, "ThreadpoolController", None)
    if controller is not None and hasattr(controller, "_load_libraries"):
        controller._load_libraries = _no_thread_pools


def _no_thread_pools(self):
    return None


def _pyparsing_traceback(core):
    """pyparsing's view of the traceback module without frame reads (sys._getframe, tb_frame
    are refused): each Forward records its caller with extract_stack (matplotlib's mathtext
    parser, built on a cold job's first mathtext under the guard) for diagnostics that are off
    by default, and _trim_arity asks extract_tb whether a TypeError came from its own call of a
    parse action (one traceback entry) or from inside it (more): tb_next answers that."""
    view = types.SimpleNamespace(**vars(traceback))
    summary = traceback.FrameSummary

    def extract_stack(f=None, limit=None):
        count = limit if type(limit) is int and limit > 1 else 2
        return [summary("<pyparsing>", 0, "<caller>", lookup_line=False, line="")] * count

    def extract_tb(tb, limit=None):
        synth = getattr(core, "pa_call_line_synth", None) or ("<pyparsing>", 9)
        out = [summary(synth[0], synth[1], "wrapper", lookup_line=False, line="")]
        if isinstance(tb, types.TracebackType) and tb.tb_next is not None:
            out.append(summary("<parse action>", 0, "<action>", lookup_line=False, line=""))
        return out

    view.extract_stack = extract_stack
    view.extract_tb = extract_tb
    return view
