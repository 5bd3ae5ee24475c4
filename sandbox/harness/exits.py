"""Exit codes of the harness: one code per outcome, a fixed vocabulary the host maps to reasons.

The snippet never chooses the process exit code: SystemExit is caught, os._exit and the other
unaudited exits are replaced by refusals before the snippet runs (guard.py), and the harness
returns one of the codes below. Codes 0-3 and 137 keep their shared meaning across modes; the
data-mode codes live in 10-29, so they never collide with usage (2), the exec-filter report (3),
Python's own uncaught-exception status (1) or a signal death (128 + n, e.g. 137).
"""

OK = 0
# 1 is what Python exits with when the harness itself crashes before main() can catch anything.
PYTHON_CRASH = 1
USAGE = 2
# Reserved for the launcher: the kernel exec filter could not be installed (reference 2.6/2.7).
EXEC_FILTER_UNAVAILABLE = 3
# Reserved: the launcher/host killed the run (SIGKILL, 128 + 9).
KILLED = 137


class DATA_EXIT:
    """Data mode (`--data snippet.py`). Names are the `reason` written to result.json."""

    OK = 0
    VALIDATION = 10          # validator findings; validation.json written; nothing ran
    GUARD_REFUSED = 11       # the guard refused an operation (even if the snippet caught it)
    SNIPPET_ERROR = 12       # the snippet raised; class + line in result.json
    NO_DF = 13               # no top-level `df` after the run
    NOT_DATAFRAME = 14       # `df` is not exactly a pandas DataFrame
    MULTIINDEX_COLUMNS = 15  # MultiIndex columns
    TOO_MANY_ROWS = 16       # more rows than the cap (the caps: table.TableLimits)
    TOO_MANY_COLUMNS = 17    # more columns than the cap (after the index is reset into columns)
    TOO_LARGE = 18           # CSV bytes over the cap
    CELL_TOO_LONG = 19       # a cell or column name over the cap of characters
    INTERNAL = 20            # the harness itself failed (bug, no table caps from the host, or a run that broke pandas internals)
    SNIPPET_EXIT = 21        # SystemExit raised by the snippet (sys.exit, exit(), raise SystemExit)
    CELL_TYPE = 22           # a cell or name that is not text, number, bool, date/time or missing
    SNIPPET_MISSING = 23     # snippet file missing, not a regular file, or unreadable
    EMPTY_TABLE = 24         # no rows or no columns
    DUPLICATE_COLUMNS = 25   # two columns with the same name (after conversion to text)


# reason name for each data exit code (result.json "reason"; the host's fixed lines key on it)
DATA_REASONS = {
    DATA_EXIT.OK: "ok",
    DATA_EXIT.VALIDATION: "validation",
    DATA_EXIT.GUARD_REFUSED: "guard_refused",
    DATA_EXIT.SNIPPET_ERROR: "snippet_error",
    DATA_EXIT.NO_DF: "no_df",
    DATA_EXIT.NOT_DATAFRAME: "not_dataframe",
    DATA_EXIT.MULTIINDEX_COLUMNS: "multiindex_columns",
    DATA_EXIT.TOO_MANY_ROWS: "too_many_rows",
    DATA_EXIT.TOO_MANY_COLUMNS: "too_many_columns",
    DATA_EXIT.TOO_LARGE: "too_large",
    DATA_EXIT.CELL_TOO_LONG: "cell_too_long",
    DATA_EXIT.INTERNAL: "internal_error",
    DATA_EXIT.SNIPPET_EXIT: "snippet_exit",
    DATA_EXIT.CELL_TYPE: "cell_type",
    DATA_EXIT.SNIPPET_MISSING: "snippet_missing",
    DATA_EXIT.EMPTY_TABLE: "empty_table",
    DATA_EXIT.DUPLICATE_COLUMNS: "duplicate_columns",
}


class PLOT_EXIT:
    """Plot and figure mode (`--plot plot.py`, `--figure plot.py`). Names are the `reason` written
    to result.json. 30-39, so a code never means two things across modes."""

    OK = 0                   # the plot finished (or called sys.exit(0)/sys.exit()); the host
                             # decides whether its output is there (no_output) and good
    PLOT_ERROR = 30          # the plot raised (or did not compile); class + line in result.json
    GUARD_REFUSED = 31       # the guard refused an operation (even if the plot caught it)
    PLOT_EXIT = 32           # the plot raised SystemExit with a code other than 0/None
    PLOT_MISSING = 33        # plot.py missing, not a regular file, or unreadable
    SOURCE_INVALID = 34      # plot.py over the size cap (measured/limit bytes) or not UTF-8
    INTERNAL = 35            # the harness itself failed


PLOT_REASONS = {
    PLOT_EXIT.OK: "ok",
    PLOT_EXIT.PLOT_ERROR: "plot_error",
    PLOT_EXIT.GUARD_REFUSED: "guard_refused",
    PLOT_EXIT.PLOT_EXIT: "plot_exit",
    PLOT_EXIT.PLOT_MISSING: "plot_missing",
    PLOT_EXIT.SOURCE_INVALID: "source_invalid",
    PLOT_EXIT.INTERNAL: "internal_error",
}
