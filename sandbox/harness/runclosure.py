"""The run-and-record closure shared by data mode and plot mode.

After the guard is armed a mode only calls `run(code, namespace, handle)`: it executes the user's
code, catches everything (SystemExit too), stops collections, asks the mode for its verdict,
applies a guard refusal, lets the mode build its record (data mode writes out.csv there), writes
result.json through the descriptor opened before arming, checks that nothing else wrote to it,
prints the stderr summary and the end line, and releases the real exit. Closure discipline: every
function made here uses only names bound when it is made (no global or builtin lookup after
arming); tests/harness checks that for this factory and each mode's hooks.

Before arming, `pre_arm_exit` records a run that never started (plain calls are fine there).
"""

import os
import resource
import sys

import records


def summary_line(exit_code, reason, error, refusal):
    """The harness's one stderr line: its exit, the error class and line, the refused rule."""
    line = "plotq-harness: exit " + str(exit_code) + " " + reason
    if error is not None:
        line = line + " (" + error["class"] + (
            " at line " + str(error["line"]) if error["line"] is not None else "") + ")"
    if refusal is not None:
        line = line + " (refused: " + refusal["rule"] + ")"
    return line


def make_run(result_fd, writer, reasons, codes, outcome, compose, after=None):
    """run(code, namespace, handle) -> exit code, for a guard handle from guard.arm.

    reasons: exit code -> reason; codes: (OK, GUARD_REFUSED, INTERNAL) of the mode.
    outcome(error, namespace, traceback_line) -> (exit_code, error_record, extra): the mode's
      verdict on what the code did (error is the exception it raised, or None).
    compose(exit_code, error_record, refusal_record, extra) -> (exit_code, record): the record to
      write (it may change the code, e.g. data mode's out.csv check).
    after(): runs last, before the real exit is released (plot mode restores __main__)."""
    encode, write_all, write_at_start, encode_line = writer
    _exec = exec
    _str = str
    _round = round
    _len = len
    _base_exception = BaseException
    _fstat = os.fstat
    _getrusage = resource.getrusage
    _rusage_self = resource.RUSAGE_SELF
    _flush_stdout = sys.stdout.flush
    _encode_text = str.encode
    reasons = dict(reasons)
    OK, GUARD_REFUSED, INTERNAL = codes

    def finish(exit_code, error_record, refusal_record, extra):
        exit_code, record = compose(exit_code, error_record, refusal_record, extra)
        data = _encode_text(encode(record) + "\n", "ascii")
        write_at_start(result_fd, data)
        if _fstat(result_fd)[6] != _len(data):
            exit_code = GUARD_REFUSED       # st_size: something else wrote to result.json
        error = record["error"]
        refusal = record["refusal"]
        line = "plotq-harness: exit " + _str(exit_code) + " " + reasons[exit_code]
        if error is not None:
            line = line + " (" + error["class"] + (
                " at line " + _str(error["line"]) if error["line"] is not None else "") + ")"
        if refusal is not None:
            line = line + " (refused: " + refusal["rule"] + ")"
        try:
            write_all(2, _encode_text(line + "\n", "ascii", "replace"))
        except _base_exception:
            pass    # stderr is advisory; the code may have closed it
        return exit_code

    def end_line():
        try:
            _flush_stdout()
        except _base_exception:
            pass
        try:
            usage = _getrusage(_rusage_self)
            write_all(1, encode_line("HARNESS ", {
                "event": "end", "max_rss_mb": _round(usage[2] / 1024, 1),
                "cpu_s": _round(usage[0] + usage[1], 3)}))
        except _base_exception:
            pass    # advisory; the code may have closed fd 1

    def body(code, namespace, refusal, traceback_line, suspend_gc):
        error = None
        try:
            _exec(code, namespace)
        except _base_exception as exc:
            error = exc
        # From here on no collection runs the code's finalizers or gc callbacks.
        suspend_gc()
        exit_code, error_record, extra = outcome(error, namespace, traceback_line)
        refusal_record = None
        refused = refusal()
        if refused is not None:
            exit_code = GUARD_REFUSED
            refusal_record = {"rule": refused[0], "line": refused[1]}
        exit_code = finish(exit_code, error_record, refusal_record, extra)
        refused = refusal()
        if refused is not None and exit_code != GUARD_REFUSED:
            exit_code = GUARD_REFUSED      # a refusal while writing (should never happen)
        end_line()
        return exit_code

    def run(code, namespace, handle):
        refusal, traceback_line, suspend_gc, release_exit = handle
        try:
            exit_code = body(code, namespace, refusal, traceback_line, suspend_gc)
        except _base_exception:
            exit_code = INTERNAL
            end_line()
        if after is not None:
            after()
        # The run is over: the caller exits with exit_code through the real os._exit (bound before
        # main; result.json's exit_code lets the host cross-check).
        release_exit()
        return exit_code

    return run


def pre_arm_exit(writer, record, reasons):
    """A run that ends before the guard is armed: result.json, the stderr line and the end line,
    written normally. Returns record["exit_code"]."""
    encode, write_all, write_at_start, encode_line = writer
    fd = os.open(records.RESULT_FILE, records.CREATE_FLAGS, records.CREATE_MODE)
    try:
        write_all(fd, (encode(record) + "\n").encode("ascii"))
    finally:
        os.close(fd)
    exit_code = record["exit_code"]
    line = summary_line(exit_code, reasons[exit_code], record.get("error"), None)
    write_all(2, (line + "\n").encode("ascii"))
    sys.stdout.flush()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    write_all(1, encode_line("HARNESS ", {
        "event": "end", "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}))
    return exit_code
