"""Job entry shim: the code that runs in a job's first process after the kernel layers are in
place and before any user code.

1. Arms the exec filter (a second seccomp filter: execve/execveat -> EPERM, on every thread) and
   sets the process non-dumpable again (an exec resets that).
2. Writes the first and only line of the report pipe, `armed <state>` or `refused <state>`, and
   closes it. This line is the start marker of every mode: a job that never wrote it never
   reached its entry (a launcher failure, retried once by the host).
3. Runs the job: mode raw = the file as a Python program (as runpy.run_path with run_name
   "__main__", without importing runpy; the exit code comes from SystemExit, 1 on any other
   exception with the traceback on stderr), then flushes stdout/stderr; any other mode =
   harness.main(argv), after which nothing else runs.
4. Leaves with the os._exit bound before the job ran.

Cold path:  python3 -I -B entry.py --mode M --report-fd 3 --lib LIB [--filter-optional] -- ARGV...
            (LIB = libplotq_confine.so; the exec filter is armed by plotq_exec_arm.so, its
            sibling, a C extension: no ctypes and no C++ runtime in a cold job)
Warm path:  zygote.py calls run_job() in its forked child (the library is already loaded); an
            armed spare armed the filter while it waited and passes its state in.
Exit 3 (EXEC_DENY_EXIT) means "the exec filter could not be armed"; the host believes it only
after a `refused` line (a job can exit 3 by itself).
"""
import os
import sys

EXEC_DENY_EXIT = 3
HERE = os.path.dirname(os.path.abspath(__file__))

_lib = None


def set_lib(lib):
    """The zygote hands over the library it loaded before forking."""
    global _lib
    _lib = lib


def _load_arm_module(lib_path):
    """plotq_exec_arm.so, next to the confine library (sandbox/exec_arm_module.c), loaded the
    way importlib loads an extension but without importing importlib or ctypes: those imports
    and the C++ library were most of a cold job's cost over a bare interpreter."""
    import _frozen_importlib
    import _imp

    path = os.path.join(os.path.dirname(lib_path), "plotq_exec_arm.so")
    return _imp.create_dynamic(_frozen_importlib.ModuleSpec("plotq_exec_arm", None, origin=path))


def arm_exec_filter(lib_path=None):
    """Returns (armed, state). Warm path: the zygote's library (its program was built before the
    fork); cold path: plotq_exec_arm.so. Both install build_exec_filter()'s program."""
    if _lib is not None:
        import ctypes

        buf = ctypes.create_string_buffer(64)
        rc = _lib.plotq_arm_exec_filter(buf, ctypes.c_size_t(len(buf)))
        return rc == 0, buf.value.decode("ascii", "replace") or "unknown"
    try:
        module = _load_arm_module(lib_path)
    except (ImportError, OSError, TypeError):
        return False, "library"
    armed, state = module.arm()
    return bool(armed), str(state)


def _exit_code(code):
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def _run_path(path):
    """runpy.run_path(path, run_name="__main__") without importing runpy and pkgutil (a few ms of
    every cold start): the file runs as a fresh __main__ module; the old one is put back."""
    import builtins

    with open(path, "rb") as f:
        source = f.read()
    code = compile(source, path, "exec", dont_inherit=True)
    main = type(sys)("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __loader__=None, __package__=None,
                         __spec__=None, __builtins__=builtins)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _run_raw(argv):
    sys.argv = list(argv)
    try:
        _run_path(argv[0])
        return 0
    except SystemExit as e:
        return _exit_code(e.code)
    except BaseException:
        import traceback

        traceback.print_exc()
        return 1


def _run_harness(argv, exit_now):
    """Never returns. Nothing runs after harness.main(): in data mode its guard stays armed and
    the snippet may have replaced builtins or module globals (sandbox/harness/README.md, caller
    rule), so the real os._exit is bound before and called directly with main()'s code."""
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    import harness

    sys.argv = [os.path.join(HERE, "harness.py")] + list(argv)
    exit_now(harness.main(list(argv)))


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def run_job(mode, argv, report_fd, lib_path=None, require_filter=True, armed=None):
    """Never returns. `armed`: (armed, state) of an exec filter an armed spare installed before
    its job came (zygote.py); None = arm it now."""
    exit_now = os._exit
    armed, state = armed if armed is not None else arm_exec_filter(lib_path)
    line = ("armed " if armed else "refused ") + state + "\n"
    try:
        os.write(report_fd, line.encode("ascii", "replace"))
    finally:
        os.close(report_fd)
    if not armed and require_filter:
        exit_now(EXEC_DENY_EXIT)
    if mode != "raw":
        _run_harness(argv, exit_now)
    code = 1
    try:
        code = _run_raw(argv)
    finally:
        _flush()
        exit_now(code)


def main(args):
    mode, report_fd, lib_path, require = "raw", 3, None, True
    i = 0
    while i < len(args) and args[i] != "--":
        a = args[i]
        if a == "--mode":
            mode, i = args[i + 1], i + 2
        elif a == "--report-fd":
            report_fd, i = int(args[i + 1]), i + 2
        elif a == "--lib":
            lib_path, i = args[i + 1], i + 2
        elif a == "--filter-optional":
            require, i = False, i + 1
        else:
            print("entry.py: unknown option " + a, file=sys.stderr)
            os._exit(2)
    rest = args[i + 1 :]
    if (mode == "raw" and not rest) or lib_path is None:
        print("usage: entry.py --mode M --report-fd N --lib LIB -- ARGV...", file=sys.stderr)
        os._exit(2)
    run_job(mode, rest, report_fd, lib_path, require)


if __name__ == "__main__":
    main(sys.argv[1:])
