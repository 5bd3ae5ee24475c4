"""Data mode: `harness.py --data snippet.py` runs a data-generating snippet and writes out.csv.

Order of operations (README.md explains each choice):
 0. the table caps from the job's environment (PLOTQ_DATA_MAX_*, set by the host): missing or
    bad -> exit 20 (internal_error), nothing read;
 1. read snippet.py (no links, regular file, capped), decode UTF-8;
 2. validate it (DATA profile) -- before preload, so a refused snippet costs no imports and no
    name from the snippet is ever imported; findings -> validation.json, exit 10, nothing runs;
 3. preload("data") (a no-op in a warm zygote child);
 4. open out.csv and result.json for writing (handles kept, no links followed);
 5. compile the validated tree (what runs is exactly what was checked);
 6. build the post-run closure (runclosure.make_run, shared with plot mode; everything it uses
    bound now), arm DataGuard, exec the snippet in a fresh globals dict, catch everything (SystemExit too), take df, write the CSV and result.json
    through the kept handles, print the end line, return the exit code.
"""

import ast
import builtins
import hashlib
import os

import records
from errors import make_classifier
from exits import DATA_EXIT, DATA_REASONS
from guard import DATA_POLICY, arm
from runclosure import make_run, pre_arm_exit
from table import TableLimits, make_converter
from validator import Finding, FINDING_CODES, MAX_CODE_CHARS, prepare_data_code, strip_main_guard

OUT_FILE = "out.csv"
# snippet.py is read up to this many bytes (4 UTF-8 bytes per character of the 48 KiB limit);
# the snippet's character cap (PLOTQ_DATA_MAX_CODE_CHARS) is the validator's size finding.
MAX_SNIPPET_BYTES = 4 * MAX_CODE_CHARS


def code_cap_from_env(environ):
    """The snippet's character cap, declared once on the host (runs::kMaxDataCodeChars) and passed
    in PLOTQ_DATA_MAX_CODE_CHARS, so the validator admits what the wire admitted. A missing or bad
    one raises ValueError naming it (the host broke the job's contract). Never past the parse
    limit MAX_CODE_CHARS."""
    text = environ.get("PLOTQ_DATA_MAX_CODE_CHARS")
    if not (isinstance(text, str) and text.isascii() and text.isdigit() and 0 < int(text) <= MAX_CODE_CHARS):
        raise ValueError("PLOTQ_DATA_MAX_CODE_CHARS must be a positive integer up to %d" % MAX_CODE_CHARS)
    return int(text)


def read_snippet(path, code_cap):
    """(text, None) or (None, exit code / finding). Never follows a link, reads at most the cap."""
    data, too_large = records.read_capped(path, MAX_SNIPPET_BYTES)
    if too_large is not None:
        return None, Finding("size", 0, FINDING_CODES["size"].format(limit=f"{code_cap:,}"))
    if data is None:
        return None, DATA_EXIT.SNIPPET_MISSING
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
    """run(code, namespace, handle) -> exit code: executes the snippet and everything after it
    (runclosure.make_run with data mode's verdict and record: take df, write out.csv through the
    kept handle). Closure discipline: only names bound here (no global or builtin lookup after
    arming)."""
    write_at_start = writer[2]
    _type = type
    _str = str
    _len = len
    _issubclass = issubclass
    _items = dict.items
    _base_exception = BaseException
    _system_exit = SystemExit
    _fstat = os.fstat
    _sha256 = hashlib.sha256
    _hexdigest = type(hashlib.sha256()).hexdigest
    reasons = dict(DATA_REASONS)
    OK = DATA_EXIT.OK
    GUARD_REFUSED = DATA_EXIT.GUARD_REFUSED
    SNIPPET_ERROR = DATA_EXIT.SNIPPET_ERROR
    SNIPPET_EXIT = DATA_EXIT.SNIPPET_EXIT
    NO_DF = DATA_EXIT.NO_DF
    INTERNAL = DATA_EXIT.INTERNAL

    def outcome(error, namespace, traceback_line):
        if error is not None:
            if _issubclass(_type(error), _system_exit):
                return SNIPPET_EXIT, {"class": "SystemExit", "line": traceback_line(error)}, None
            return SNIPPET_ERROR, {"class": classify(error), "line": traceback_line(error)}, None
        found = False
        table = None
        # iterate, never look up: a key the snippet planted (a str subclass with its own
        # __eq__/__hash__) is compared by nobody
        for key, value in _items(namespace):
            if _type(key) is _str and key == "df":
                found = True
                table = value
        if not found:
            return NO_DF, None, None
        try:
            exit_code, measured, limit, payload, rows, columns = convert(table)
        except _base_exception:
            return INTERNAL, None, None
        return exit_code, None, (measured, limit, payload, rows, columns)

    def compose(exit_code, error, refusal_record, extra):
        measured = limit = payload = rows = columns = None
        if extra is not None:
            measured, limit, payload, rows, columns = extra
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
        return exit_code, {
            "mode": "data", "exit_code": exit_code, "reason": reasons[exit_code],
            "error": error, "refusal": refusal_record, "measured": measured, "limit": limit,
            "rows": rows if exit_code == OK else None,
            "columns": columns if exit_code == OK else None,
            "bytes": size if exit_code == OK else None, "sha256": digest,
        }

    return make_run(result_fd, writer, reasons, (OK, GUARD_REFUSED, INTERNAL), outcome, compose)


def _pre_arm_exit(exit_code, writer, findings=None):
    """A run that ends before the guard is armed: records written normally."""
    if findings is not None:
        records.write_validation(findings)
    record = {"mode": "data", "exit_code": exit_code, "reason": DATA_REASONS[exit_code],
              "error": None, "refusal": None, "measured": None, "limit": None,
              "rows": None, "columns": None, "bytes": None, "sha256": None}
    if findings is not None:
        record["findings"] = len(findings)
    return pre_arm_exit(writer, record, DATA_REASONS)


# What a zygote's spare runs through the harness's own pre-arm steps while it waits (warm_spare).
_WARM_SNIPPET = (
    "import numpy as np\n"
    "import pandas as pd\n"
    "x = np.linspace(0, 1, 8)\n"
    "df = pd.DataFrame({'x': x, 'y': np.sin(x), 'n': np.arange(8), 's': ['a'] * 8})\n"
)
# The warm-up frame's own caps, roomy for its fixed shape (a job's come from its environment).
_WARM_LIMITS = TableLimits(rows=8, columns=4, bytes=1 << 16, cell_chars=64)


def warm_spare_steps():
    """Steps (no-argument callables, run in order) a zygote's spare may run while it waits for a
    job, each short; the spare stops between two steps once a job is
    waiting.
    They take, before the job exists, the copy-on-write faults a data job would otherwise take
    on the zygote's shared pages (reference counts of the validator's, pandas' and the CSV
    writer's code and objects) and change nothing a job can observe: no file, no descriptor, no
    random state, no module attribute, no guard (the guard is armed by the job itself, after its
    own snippet is compiled). The frame is the harness's own constant, never a snippet's."""
    import builtins as _builtins
    made = []   # each step's product for the next one

    def validate_and_compile():
        tree, findings = prepare_data_code(_WARM_SNIPPET)
        if tree is None or findings:
            raise ValueError("the warm-up snippet did not validate")
        made.append(compile(tree, "<warm>", "exec", dont_inherit=True))

    def build():
        namespace = {"__name__": "__warm__", "__builtins__": _builtins}
        exec(made.pop(), namespace)
        made.append(namespace["df"])

    def convert():
        if make_converter(_WARM_LIMITS)(made.pop())[0] != DATA_EXIT.OK:
            raise ValueError("the warm-up frame did not convert")

    def closures():
        make_classifier()
        records.make_writer()

    return (validate_and_compile, build, convert, closures)


def run_data(snippet_path, validate=True, preload=None):
    """Data mode. Returns the exit code (DATA_EXIT). `preload` is harness.preload."""
    writer = records.make_writer()
    try:
        limits = TableLimits.from_env(os.environ)
        code_cap = code_cap_from_env(os.environ)
    except ValueError as exc:
        os.write(2, ("harness: %s\n" % exc).encode("ascii"))
        return _pre_arm_exit(DATA_EXIT.INTERNAL, writer)
    text, problem = read_snippet(snippet_path, code_cap)
    if text is None:
        if isinstance(problem, Finding):
            return _pre_arm_exit(DATA_EXIT.VALIDATION, writer, [problem])
        return _pre_arm_exit(problem, writer)
    tree, findings = prepare_data_code(text, code_cap) if validate else parse_unvalidated(text)
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
    convert = make_converter(limits)
    run = make_data_run(out_fd, result_fd, convert, make_classifier(), writer)
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    # Armed from here: the next line only calls the closure with the handle.
    return run(code, namespace, arm(DATA_POLICY, filename))
