"""Data mode: `harness.py --data snippet.py` runs a data-generating snippet and writes out.csv.

Order of operations (README.md explains each choice):
 1. read snippet.py (no links, regular file, capped), decode UTF-8;
 2. validate it (DATA profile) -- before preload, so a refused snippet costs no imports and no
    name from the snippet is ever imported; findings -> validation.json, exit 10, nothing runs;
 3. preload("data") (a no-op in a warm zygote child);
 4. open out.csv and result.json for writing (handles kept, no links followed);
 5. compile the validated tree (what runs is exactly what was checked);
 6. build the post-run closure (everything it uses bound now), arm DataGuard, exec the snippet in a
    fresh globals dict, catch everything (SystemExit too), take df, write the CSV and result.json
    through the kept handles, print the end line, return the exit code.
"""

import ast
import builtins
import hashlib
import os
import resource
import stat
import sys

import records
from errors import make_classifier
from exits import DATA_EXIT, DATA_REASONS
from guard import DATA_POLICY, arm
from table import TableLimits, make_converter
from validator import Finding, FINDING_CODES, MAX_CODE_CHARS, prepare_data_code, strip_main_guard

OUT_FILE = "out.csv"
# snippet.py is read up to this many bytes (4 UTF-8 bytes per character of the 48 KiB limit);
# the data route's 6,000-character cap is the validator's size finding.
MAX_SNIPPET_BYTES = 4 * MAX_CODE_CHARS


def read_snippet(path):
    """(text, None) or (None, exit code / finding). Never follows a link, reads at most the cap."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None, DATA_EXIT.SNIPPET_MISSING
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, DATA_EXIT.SNIPPET_MISSING
        chunks = []
        total = 0
        while total <= MAX_SNIPPET_BYTES:
            chunk = os.read(fd, MAX_SNIPPET_BYTES + 1 - total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError:
        return None, DATA_EXIT.SNIPPET_MISSING
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_SNIPPET_BYTES:
        return None, Finding("size", 0, FINDING_CODES["size"].format(limit="6,000"))
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return None, Finding("encoding", 0, FINDING_CODES["encoding"])


def parse_unvalidated(text):
    """Test-only path (PLOTQ_HARNESS_SKIP_VALIDATION, honoured only by the script entry): parse
    and strip the main guard, nothing else, so the guard can be tested on its own."""
    try:
        return strip_main_guard(ast.parse(text, filename="snippet.py")), []
    except SyntaxError as exc:
        return None, [Finding("syntax", exc.lineno or 0, FINDING_CODES["syntax"])]
    except (ValueError, RecursionError, MemoryError):
        return None, [Finding("syntax", 0, FINDING_CODES["syntax"])]


def make_data_run(out_fd, result_fd, convert, classify, writer):
    """run(code, handle) -> exit code: executes the snippet and everything after it. Closure
    discipline: only names bound here (no global or builtin lookup after arming)."""
    encode, write_all, write_at_start, encode_line = writer
    _exec = exec
    _type = type
    _str = str
    _len = len
    _round = round
    _issubclass = issubclass
    _items = dict.items
    _base_exception = BaseException
    _system_exit = SystemExit
    _fstat = os.fstat
    _sha256 = hashlib.sha256
    _hexdigest = type(hashlib.sha256()).hexdigest
    _getrusage = resource.getrusage
    _rusage_self = resource.RUSAGE_SELF
    _flush_stdout = sys.stdout.flush
    _encode_text = str.encode
    _builtins = builtins
    reasons = dict(DATA_REASONS)
    OK = DATA_EXIT.OK
    GUARD_REFUSED = DATA_EXIT.GUARD_REFUSED
    SNIPPET_ERROR = DATA_EXIT.SNIPPET_ERROR
    SNIPPET_EXIT = DATA_EXIT.SNIPPET_EXIT
    NO_DF = DATA_EXIT.NO_DF
    INTERNAL = DATA_EXIT.INTERNAL

    def finish(exit_code, error, refusal_record, measured, limit, rows, columns, payload):
        digest = None
        size = None
        if exit_code == OK:
            write_at_start(out_fd, payload)
            size = _len(payload)
            if _fstat(out_fd)[6] != size:      # st_size: something else wrote to out.csv
                exit_code = GUARD_REFUSED
                refusal_record = {"rule": "fd", "line": None}
            else:
                digest = _hexdigest(_sha256(payload))
        record = {
            "mode": "data", "exit_code": exit_code, "reason": reasons[exit_code],
            "error": error, "refusal": refusal_record, "measured": measured, "limit": limit,
            "rows": rows if exit_code == OK else None,
            "columns": columns if exit_code == OK else None,
            "bytes": size if exit_code == OK else None, "sha256": digest,
        }
        data = _encode_text(encode(record) + "\n", "ascii")
        write_at_start(result_fd, data)
        if _fstat(result_fd)[6] != _len(data):
            exit_code = GUARD_REFUSED
        line = "plotq-harness: exit " + _str(exit_code) + " " + reasons[exit_code]
        if error is not None:
            line = line + " (" + error["class"] + (
                " at line " + _str(error["line"]) if error["line"] is not None else "") + ")"
        if refusal_record is not None:
            line = line + " (refused: " + refusal_record["rule"] + ")"
        try:
            write_all(2, _encode_text(line + "\n", "ascii", "replace"))
        except _base_exception:
            pass    # stderr is advisory; the snippet may have closed it
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
            pass    # advisory; the snippet may have closed fd 1

    def body(code, refusal, traceback_line, suspend_gc):
        namespace = {"__name__": "__main__", "__builtins__": _builtins}
        error = None
        try:
            _exec(code, namespace)
        except _base_exception as exc:
            error = exc
        # From here on no collection runs the snippet's finalizers or gc callbacks.
        suspend_gc()
        exit_code = OK
        error_record = None
        measured = limit = rows = columns = payload = None
        if error is not None:
            if _issubclass(_type(error), _system_exit):
                exit_code = SNIPPET_EXIT
                error_record = {"class": "SystemExit", "line": traceback_line(error)}
            else:
                exit_code = SNIPPET_ERROR
                error_record = {"class": classify(error), "line": traceback_line(error)}
        else:
            found = False
            table = None
            # iterate, never look up: a key the snippet planted (a str subclass with its own
            # __eq__/__hash__) is compared by nobody
            for key, value in _items(namespace):
                if _type(key) is _str and key == "df":
                    found = True
                    table = value
            if not found:
                exit_code = NO_DF
            else:
                try:
                    exit_code, measured, limit, payload, rows, columns = convert(table)
                except _base_exception:
                    exit_code = INTERNAL
        refusal_record = None
        refused = refusal()
        if refused is not None:
            exit_code = GUARD_REFUSED
            refusal_record = {"rule": refused[0], "line": refused[1]}
        exit_code = finish(exit_code, error_record, refusal_record, measured, limit, rows,
                           columns, payload)
        refused = refusal()
        if refused is not None and exit_code != GUARD_REFUSED:
            exit_code = GUARD_REFUSED      # a refusal while writing (should never happen)
        end_line()
        return exit_code

    def run(code, handle):
        refusal, traceback_line, suspend_gc, release_exit = handle
        try:
            exit_code = body(code, refusal, traceback_line, suspend_gc)
        except _base_exception:
            exit_code = INTERNAL
            end_line()
        # The run is over: the caller exits with exit_code through the real os._exit (it must
        # have bound it before calling main; result.json's exit_code lets the host cross-check).
        release_exit()
        return exit_code

    return run, finish, end_line


def _pre_arm_exit(exit_code, writer, findings=None):
    """A run that ends before the guard is armed: records written normally."""
    encode, write_all, write_at_start, encode_line = writer
    if findings is not None:
        records.write_validation(findings)
    fd = os.open(records.RESULT_FILE, records.CREATE_FLAGS, records.CREATE_MODE)
    try:
        record = {"mode": "data", "exit_code": exit_code, "reason": DATA_REASONS[exit_code],
                  "error": None, "refusal": None, "measured": None, "limit": None,
                  "rows": None, "columns": None, "bytes": None, "sha256": None}
        if findings is not None:
            record["findings"] = len(findings)
        write_all(fd, (encode(record) + "\n").encode("ascii"))
    finally:
        os.close(fd)
    line = "plotq-harness: exit %d %s\n" % (exit_code, DATA_REASONS[exit_code])
    write_all(2, line.encode("ascii"))
    sys.stdout.flush()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    write_all(1, encode_line("HARNESS ", {
        "event": "end", "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 3)}))
    return exit_code


def run_data(snippet_path, validate=True, preload=None):
    """Data mode. Returns the exit code (DATA_EXIT). `preload` is harness.preload."""
    writer = records.make_writer()
    text, problem = read_snippet(snippet_path)
    if text is None:
        if isinstance(problem, Finding):
            return _pre_arm_exit(DATA_EXIT.VALIDATION, writer, [problem])
        return _pre_arm_exit(problem, writer)
    tree, findings = prepare_data_code(text) if validate else parse_unvalidated(text)
    if findings:
        return _pre_arm_exit(DATA_EXIT.VALIDATION, writer, findings)
    filename = str(snippet_path)
    try:
        code = compile(tree, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno if isinstance(exc.lineno, int) else 0
        return _pre_arm_exit(DATA_EXIT.VALIDATION, writer,
                             [Finding("syntax", line, FINDING_CODES["syntax"])])
    if preload is not None:
        preload("data")
    out_fd = os.open(OUT_FILE, records.CREATE_FLAGS, records.CREATE_MODE)
    result_fd = os.open(records.RESULT_FILE, records.CREATE_FLAGS, records.CREATE_MODE)
    convert = make_converter(TableLimits.from_env(os.environ))
    run, _, _ = make_data_run(out_fd, result_fd, convert, make_classifier(), writer)
    # Armed from here: the next line only calls the closure with the handle.
    return run(code, arm(DATA_POLICY, filename))
