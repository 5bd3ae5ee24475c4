"""The data-code validator's tables (validator.py): its limits, the admitted import surface, the
banned names and attributes, the escapes, and the finding vocabulary. Constants only, so that the
modules that need a table read it here: validator.py checks code against them; preload.py imports
the admitted modules (DATA_MODULES) before the guard is armed, keeping no list of its own.

Messages are built only from these constants: a name appears in a message only when it is a member
of one of the fixed lists below, never an identifier, module name or literal taken from the snippet.
"""

import ast
import re

MAX_CODE_CHARS = 49_152        # SECURITY parse limit (48 KiB)
MAX_DATA_CODE_CHARS = 6_000    # the data route's code cap
MAX_STRING_CHARS = 200         # one string literal
MAX_LITERALS_PER_CONTAINER = 20
MAX_LITERALS_PER_FILE = 40

FILE_MESSAGE = "paste the file's contents in the data panel instead"


# --- the admitted import surface -------------------------------------------------------------

STDLIB_MODULES = frozenset({
    "math", "statistics", "datetime", "collections", "collections.abc", "itertools",
    "functools", "textwrap", "colorsys", "re", "random",
})
NUMPY_MODULES = frozenset({
    "numpy", "numpy.random", "numpy.linalg", "numpy.fft", "numpy.polynomial",
    "numpy.polynomial.polynomial", "numpy.polynomial.chebyshev", "numpy.polynomial.legendre",
    "numpy.polynomial.hermite", "numpy.polynomial.hermite_e", "numpy.polynomial.laguerre",
})
PANDAS_MODULES = frozenset({"pandas", "pandas.api.types", "pandas.tseries.offsets"})
# scipy's computing submodules; scipy itself is not admitted (its lazy loader reaches scipy.io,
# scipy.datasets, scipy.misc and LowLevelCallable).
SCIPY_MODULES = frozenset("scipy." + m for m in (
    "stats", "stats.qmc", "stats.mstats", "stats.contingency", "stats.distributions",
    "integrate", "interpolate", "signal", "signal.windows", "special", "optimize", "linalg",
    "fft", "fftpack", "spatial", "spatial.distance", "spatial.transform", "cluster",
    "cluster.hierarchy", "cluster.vq", "ndimage", "constants", "sparse", "sparse.linalg",
    "sparse.csgraph",
))
DATA_MODULES = STDLIB_MODULES | NUMPY_MODULES | PANDAS_MODULES | SCIPY_MODULES
# Roots whose attributes are checked against DATA_MODULES (`import scipy.stats` binds `scipy`).
SUBMODULE_ONLY_ROOTS = frozenset({"scipy"})

# Imports that touch files or the network get FILE_MESSAGE (banned anyway: not admitted).
FILE_MODULES = frozenset({
    "io", "pathlib", "glob", "shutil", "tempfile", "fileinput", "csv", "sqlite3", "pickle",
    "shelve", "dbm", "zipfile", "tarfile", "gzip", "bz2", "lzma", "json", "os.path", "mmap",
    "linecache", "h5py", "openpyxl", "xlrd", "pyarrow", "tables",
})
NETWORK_MODULES = frozenset({
    "socket", "ssl", "urllib", "http", "requests", "httpx", "aiohttp", "ftplib", "smtplib",
    "poplib", "imaplib", "nntplib", "telnetlib", "socketserver", "xmlrpc", "webbrowser",
    "asyncio", "selectors", "select", "email",
})

# --- names and attributes ---------------------------------------------------------------------

BANNED_NAMES = frozenset({
    "eval", "exec", "compile", "open", "__import__", "input", "breakpoint", "globals", "locals",
    "vars", "getattr", "setattr", "delattr", "memoryview", "exit", "quit", "help", "license",
    "copyright", "credits", "SystemExit",
})
# Attributes banned on any receiver (reference 3.1), plus plotting (no plotting stack in data
# code) and the numpy raw-memory helpers (no audit event: the guard cannot see them).
BANNED_ATTRIBUTES = frozenset({
    "format", "format_map", "eval", "query", "memmap", "ctypeslib", "f2py", "use", "show", "io",
    "plot", "plotting", "hist", "boxplot", "savefig", "style", "pyplot", "show_versions",
    "as_strided", "stride_tricks", "frombuffer", "from_dlpack", "byte_bounds", "ctypes",
    "LowLevelCallable", "from_cython", "cffi", "datasets", "misc", "testing", "distutils",
    "attrgetter", "methodcaller", "import_module", "reload", "get_data", "find_spec",
    "spec_from_loader", "spec_from_file_location", "module_from_spec", "new_class",
    "prepare_class", "ModuleType", "FunctionType", "LambdaType", "CodeType", "MethodType",
    "FrameType", "TracebackType", "GeneratorType", "CellType", "cell_contents", "dlopen", "pythonapi",
    "cdll", "CDLL", "PyDLL", "CFUNCTYPE", "system", "popen", "fork", "forkpty", "kill",
    "killpg", "getenv", "environ", "putenv", "unsetenv", "chdir", "getcwd", "listdir",
    "scandir", "iterdir", "unlink", "rmdir", "rmtree", "chmod", "chown", "makedirs", "mkdir",
    "symlink", "write", "writelines", "globals", "locals", "vars", "setrecursionlimit",
    "getframe", "currentframe", "settrace", "setprofile", "get_objects", "get_referrers",
    "get_referents", "addaudithook", "audit",
    # dynamic setattr/getattr with names from data: pandas accessors set a class attribute of any
    # name (a computed "__array_interface__" reads raw memory), SimpleNamespace takes attribute
    # names from a dict, update_wrapper/wraps copy attributes named in a list
    "extensions", "SimpleNamespace", "update_wrapper", "wraps",
})
BANNED_ATTRIBUTE_PREFIXES = ("exec", "spawn", "posix_spawn", "register")
# Modules reachable as attributes of admitted ones (np.lib.npyio.os, statistics.sys, ...): the
# reachability walk (tests/harness/test_validator.py) keeps this list complete.
MODULE_ESCAPES = frozenset({
    "os", "sys", "subprocess", "builtins", "importlib", "pickle", "marshal", "shutil",
    "socket", "inspect", "gc", "pathlib", "glob", "tempfile", "signal", "threading",
    "multiprocessing", "mmap", "fcntl", "resource", "faulthandler", "atexit", "code", "codeop",
    "runpy", "pkgutil", "zipimport", "linecache", "tokenize", "posix", "platform", "sysconfig",
    "site", "copyreg", "shelve", "dbm", "sqlite3", "urllib", "http", "ftplib", "ssl", "select",
    "selectors", "asyncio", "concurrent", "dateutil", "six", "pytz", "warnings", "weakref",
    "contextlib", "operator", "json", "csv", "zipfile", "tarfile", "gzip", "bz2", "lzma",
    "zlib", "uuid", "secrets", "hashlib", "logging", "traceback", "locale", "codecs",
    "encodings", "tzlocal", "zoneinfo", "npyio", "compat", "core", "util", "utils", "imp",
    "main", "sre_compile", "sre_parse", "enum", "dataclasses", "ctypes", "lib", "decorator",
})
# Frame, generator, coroutine, traceback and code-object attributes (routes to a frame).
ESCAPE_ATTRIBUTES = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_origin", "cr_running", "cr_suspended",
    "ag_frame", "ag_code", "ag_await", "ag_running",
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_lasti", "f_lineno",
    "f_trace", "f_trace_lines", "f_trace_opcodes",
    "tb_frame", "tb_next", "tb_lasti", "tb_lineno",
    "co_code", "co_consts", "co_names", "co_varnames", "co_filename", "co_name",
    "co_qualname", "co_firstlineno", "co_lnotab", "co_linetable", "co_exceptiontable",
    "co_freevars", "co_cellvars", "co_flags", "co_argcount", "co_kwonlyargcount",
    "co_posonlyargcount", "co_nlocals", "co_stacksize", "co_positions", "co_lines",
    "func_globals", "func_code", "func_closure",
})
# I/O names (reference 3.1) and what writes or reads files; the read_*/fetch_*/load*/open*
# patterns below catch the rest.
IO_ATTRIBUTES = frozenset({
    "ExcelFile", "ExcelWriter", "HDFStore", "to_csv", "to_pickle", "to_parquet", "to_excel",
    "to_sql", "to_hdf", "to_feather", "to_json", "to_html", "to_clipboard", "to_markdown",
    "to_latex", "to_xml", "to_stata", "to_orc", "to_gbq", "to_string", "save", "savez",
    "savez_compressed", "savetxt", "genfromtxt", "fromfile", "fromregex", "DataSource",
    "tofile", "imread", "imsave", "get_sample_data", "rc_file", "dump", "dumps", "open",
})
IO_PATTERN = re.compile(r"^(?:read_|fetch_|load|open_|save_|savez|dump_)")
NETWORK_ATTRIBUTES = frozenset({"urlopen", "urlretrieve", "Request", "create_connection"})

# Methods that dispatch on a string naming a method or function.
DISPATCH_METHODS = frozenset({"agg", "aggregate", "apply", "transform", "applymap", "pipe", "map"})

OS_THEME_VARIABLE = "ANYPLOT_THEME"

DUNDER_NAME = re.compile(r"^__\w+__$")
DUNDER_TEXT = re.compile(r"__\w+__")
URL_TEXT = re.compile(r"\b(?:https?|ftp)://|\b(?:file|data):\S", re.IGNORECASE)

# --- the finding vocabulary -------------------------------------------------------------------

_IMPORT_LIST = ("numpy, pandas, math, statistics, datetime, collections, itertools, functools, "
                "textwrap, colorsys, re, random, scipy.{{stats, integrate, interpolate, signal, "
                "special, optimize, linalg, fft, spatial, cluster, ndimage, constants, sparse}}")

FINDING_CODES = {
    "size": "the code is longer than {limit} characters; compute the data with shorter code",
    "encoding": "the code must be valid UTF-8 text",
    "syntax": "the code does not parse as Python 3.11",
    "banned-import": "this module is not allowed in data code; allowed: " + _IMPORT_LIST,
    "star-import": "star imports are not allowed; import the names you use",
    "relative-import": "relative imports are not allowed",
    "os-use": ('os may only be used as os.getenv("ANYPLOT_THEME", default) or '
               'os.environ.get("ANYPLOT_THEME", default)'),
    "banned-name": "`{name}` is not allowed in data code",
    "banned-call": ("getattr needs a literal name of an allowed attribute and two or three "
                    "arguments; type() takes exactly one argument; refcheck= is not allowed"),
    "banned-attribute": "`{name}` is not allowed in data code",
    "module-escape": "this attribute leads out of the admitted modules",
    "private-attribute": "private attributes (a name starting with an underscore) are not allowed",
    "escape-attribute": "frame, generator, coroutine, traceback and code-object attributes are not allowed",
    "file-access": FILE_MESSAGE,
    "network-access": FILE_MESSAGE,
    "url-literal": FILE_MESSAGE,
    "string-dispatch": "a string naming a method or function that is not allowed is passed to a dispatching method",
    "dunder": "double-underscore names are not allowed, in code or in strings",
    "banned-statement": "`{name}` statements are not allowed in data code",
    "string-length": "a string literal is longer than {limit} characters",
    "literal-data": ("too many literal values ({scope}: at most {limit}); compute the rows "
                     "with code instead of writing them out"),
    "module-assign": "assigning to an attribute of an imported module is not allowed",
    "df-missing": "assign the table to `df` at the top level of the code",
}

BANNED_STATEMENTS = {
    ast.ClassDef: "class", ast.AsyncFunctionDef: "async def", ast.AsyncFor: "async for",
    ast.AsyncWith: "async with", ast.Await: "await", ast.Yield: "yield",
    ast.YieldFrom: "yield from", ast.Global: "global", ast.Nonlocal: "nonlocal",
}
