"""Plot and figure mode: `harness.py --plot plot.py` (matplotlib, seaborn: the plot writes
plot-<theme>.png) and `harness.py --figure plot.py` (plotly, bokeh: the plot step writes
plot-<theme>.json; the host draws it with Chromium, outside the sandbox).

Order of operations (README.md explains each choice):
 1. the theme from ANYPLOT_THEME: light or dark, else usage (exit 2, no record);
 2. read plot.py (no links, regular file, capped), decode UTF-8, compile it (what runs is what
    was read; a syntax error is a plot_error SyntaxError at its line, nothing ran);
 3. prepare(mode) (a no-op in a warm zygote child that ran preload(mode));
 4. figure mode: plotly's and bokeh's save/show calls write plot-<theme>.json, a Selenium
    stand-in starts no browser (figurecapture.py);
 5. open result.json (descriptor kept), build the classifier and the post-run closure
    (runclosure.make_run, shared with data mode), cut
    sys.path to the install, give the plot a fresh __main__ module;
 6. build PlotGuard's policy, arm, exec the plot, catch everything (SystemExit too), record.
"""

import builtins
import os
import sys
import types

import plotlibs
import records
from errors import PLOT_ERROR_CLASSES, make_classifier
from exits import PLOT_EXIT, PLOT_REASONS, USAGE
from guard import arm
from plotguard import install_prefixes, make_plot_policy
from runclosure import make_run, pre_arm_exit

THEMES = ("light", "dark")
THEME_VARIABLE = "ANYPLOT_THEME"
DATA_FILE = "data.csv"
# The render route's source cap is 131,072 characters; at most 4 UTF-8 bytes each.
MAX_PLOT_CHARS = 131_072
MAX_PLOT_BYTES = 4 * MAX_PLOT_CHARS


def output_name(mode, theme):
    return "plot-%s.%s" % (theme, "json" if mode == "figure" else "png")


def read_plot(path):
    """(text, None) or (None, (exit code, measured, limit)). Never follows a link."""
    data, too_large = records.read_capped(path, MAX_PLOT_BYTES)
    if too_large is not None:
        return None, (PLOT_EXIT.SOURCE_INVALID, too_large, MAX_PLOT_BYTES)
    if data is None:
        return None, (PLOT_EXIT.PLOT_MISSING, None, None)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, (PLOT_EXIT.SOURCE_INVALID, None, None)
    if len(text) > MAX_PLOT_CHARS:
        return None, (PLOT_EXIT.SOURCE_INVALID, len(text), MAX_PLOT_CHARS)
    return text, None


def base_record(mode, theme, exit_code):
    return {"mode": mode, "theme": theme, "output": output_name(mode, theme),
            "exit_code": exit_code, "reason": PLOT_REASONS[exit_code], "error": None,
            "refusal": None, "exit_request": None, "measured": None, "limit": None}


def make_plot_run(result_fd, classify, writer, mode, theme):
    """run(code, module, handle) -> exit code: executes the plot and records the outcome
    (runclosure.make_run with plot mode's verdict and record). Closure discipline: only names
    bound here (no global or builtin lookup after arming)."""
    _type = type
    _int = int
    _bool = bool
    _issubclass = issubclass
    _system_exit = SystemExit
    _exit_value = SystemExit.__dict__["code"].__get__   # the C slot, never a subclass property
    _set_item = dict.__setitem__
    _items = dict.items
    _modules = sys.modules
    _old_main = sys.modules.get("__main__")
    reasons = dict(PLOT_REASONS)
    template = base_record(mode, theme, PLOT_EXIT.OK)
    OK = PLOT_EXIT.OK
    PLOT_ERROR = PLOT_EXIT.PLOT_ERROR
    EXIT = PLOT_EXIT.PLOT_EXIT

    def outcome(error, namespace, traceback_line):
        if error is None:
            return OK, None, None
        if _issubclass(_type(error), _system_exit):
            value = _exit_value(error)
            if _type(value) is _bool:
                value = _int(value)
            if value is None or (_type(value) is _int and value == 0):
                return OK, None, None      # sys.exit() / sys.exit(0): the plot ended itself
            exit_request = value if _type(value) is _int else None
            return EXIT, {"class": "SystemExit", "line": traceback_line(error)}, exit_request
        return PLOT_ERROR, {"class": classify(error), "line": traceback_line(error)}, None

    def compose(exit_code, error, refusal_record, exit_request):
        record = {}
        for key, value in _items(template):
            record[key] = value
        record["exit_code"] = exit_code
        record["reason"] = reasons[exit_code]
        record["error"] = error
        record["refusal"] = refusal_record
        record["exit_request"] = exit_request
        return exit_code, record

    def restore_main():
        if _old_main is not None:
            _set_item(_modules, "__main__", _old_main)

    return make_run(result_fd, writer, reasons, (OK, PLOT_EXIT.GUARD_REFUSED, PLOT_EXIT.INTERNAL),
                    outcome, compose, restore_main)


def _pre_arm_exit(mode, theme, exit_code, writer, error=None, measured=None, limit=None):
    """A run that ends before the guard is armed: records written normally."""
    record = base_record(mode, theme, exit_code)
    record["error"] = error
    record["measured"] = measured
    record["limit"] = limit
    return pre_arm_exit(writer, record, PLOT_REASONS)


def run_plot(mode, plot_path, prepare=None, environ=None):
    """Plot or figure mode. Returns the exit code (PLOT_EXIT, or USAGE for a bad theme).
    `prepare` is preload.prepare."""
    environ = os.environ if environ is None else environ
    theme = environ.get(THEME_VARIABLE)
    if theme not in THEMES:
        os.write(2, b"harness: ANYPLOT_THEME must be light or dark\n")
        return USAGE
    writer = records.make_writer()
    text, problem = read_plot(plot_path)
    if text is None:
        exit_code, measured, limit = problem
        return _pre_arm_exit(mode, theme, exit_code, writer, measured=measured, limit=limit)
    filename = str(plot_path)
    try:
        code = compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = exc.lineno if isinstance(exc.lineno, int) else None
        return _pre_arm_exit(mode, theme, PLOT_EXIT.PLOT_ERROR, writer,
                             error={"class": "SyntaxError", "line": line})
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return _pre_arm_exit(mode, theme, PLOT_EXIT.PLOT_ERROR, writer,
                             error={"class": "SyntaxError", "line": None})
    if prepare is not None:
        prepare(mode)
    # what the libraries the plot names need before arming (plotlibs.py: plotnine, altair,
    # pygal, statsmodels, scikit-learn, ...; a no-op for what the zygote preloaded)
    plotlibs.install(text)
    if mode == "figure":
        try:
            import figurecapture
            figurecapture.install(output_name(mode, theme), source=text)
        except Exception:
            os.write(2, b"harness: plotly is not available for figure mode\n")
            return _pre_arm_exit(mode, theme, PLOT_EXIT.INTERNAL, writer)
    result_fd = os.open(records.RESULT_FILE, records.CREATE_FLAGS, records.CREATE_MODE)
    classify = make_classifier(PLOT_ERROR_CLASSES)
    run = make_plot_run(result_fd, classify, writer, mode, theme)
    # The plot's world: a fresh __main__ module, sys.argv naming it, sys.path only the install
    # (the harness's own directory is not importable by name).
    main_module = types.ModuleType("__main__")
    namespace = main_module.__dict__
    # __file__ absolute, as when a script is run by its path: catalogue files cut their folder
    # out of it with __file__[:__file__.rfind("/")]
    namespace.update({"__file__": os.path.abspath(filename), "__builtins__": builtins,
                      "__cached__": None})
    sys.modules["__main__"] = main_module
    sys.argv = [filename]
    prefixes = install_prefixes()
    sys.path[:] = [entry for entry in sys.path if isinstance(entry, str) and any(
        entry == p or entry.startswith(p + "/") for p in prefixes)]
    policy = make_plot_policy(output_name(mode, theme), DATA_FILE)
    # Armed from here: the next line only calls the closure with the handle.
    return run(code, namespace, arm(policy, filename))
