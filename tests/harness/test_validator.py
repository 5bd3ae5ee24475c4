"""The DATA-profile validator: each finding code with a snippet that triggers it and a close
benign one that does not; message hygiene; the main-guard strip; the reachability walk."""

import ast
import collections
import os
import subprocess
import sys
import types
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import HARNESS_DIR, PYTHON  # noqa: E402

sys.path.insert(0, HARNESS_DIR)
import validator as V  # noqa: E402

HEAD = "import numpy as np\nimport pandas as pd\n"
TAIL = "\ndf = pd.DataFrame({'a': np.arange(3)})\n"


def codes(source):
    return [f.code for f in V.validate_data_code(source)]


def wrap(body):
    return HEAD + body + TAIL


# code -> (triggering snippets, benign look-alikes)
CASES = {
    "size": ([wrap("x = 1\n" * 1500)], [wrap("x = 1\n" * 100)]),
    "syntax": ([wrap("x = (1,\n"), wrap("def f(:\n    pass\n"),
                # parse, but only the compiler refuses them (fuzz/corpus/validator/crash-starred-assign)
                wrap("df =* [22, 8, 9]\n"), wrap("return 1\n"), wrap("break\n")],
               [wrap("x = (1,)\n"), wrap("a, *b = [1, 2, 3]\n")]),
    "banned-import": ([wrap("import sklearn\n"), wrap("import matplotlib.pyplot as plt\n"),
                       wrap("import scipy\n"), wrap("from scipy import odr\n"),
                       wrap("import statsmodels.api as sm\n"), wrap("import sys\n"),
                       wrap("import scipy.stats\nx = scipy.odr\n")],
                      [wrap("import scipy.stats as st\n"), wrap("from scipy import stats\n"),
                       wrap("import math, statistics, random, re\n"),
                       wrap("from collections import namedtuple\n"),
                       wrap("import scipy.integrate\nx = scipy.integrate.quad\n")]),
    "star-import": ([wrap("from math import *\n")], [wrap("from math import pi\n")]),
    "relative-import": ([wrap("from . import helpers\n")], [wrap("import functools\n")]),
    "os-use": ([wrap("import os\nx = os.getcwd()\n"), wrap("import os\nx = os.environ['HOME']\n"),
                wrap("import os\nx = os.getenv('HOME')\n"), wrap("from os import path\n"),
                wrap("import os as o\nx = o\n")],
               [wrap("import os\nt = os.getenv('ANYPLOT_THEME', 'light')\n"),
                wrap("import os as o\nt = o.environ.get('ANYPLOT_THEME', default='light')\n")]),
    "banned-name": ([wrap("x = eval('1')\n"), wrap("exec('x = 1')\n"), wrap("x = globals()\n"),
                     wrap("f = getattr\n"), wrap("raise SystemExit(0)\n"),
                     wrap("x = input()\n"), wrap("x = vars(np)\n"), wrap("exit(0)\n")],
                    [wrap("x = sum([1, 2])\n"), wrap("x = max(1, 2)\n")]),
    "banned-call": ([wrap("x = getattr(np, name)\n"), wrap("x = getattr(np, 'lib')\n"),
                     wrap("a = np.zeros(4)\na.resize(100, refcheck=False)\n"),
                     wrap("T = type('T', (), {})\n"), wrap("x = getattr(np, '_x')\n")],
                    [wrap("x = getattr(np, 'sin')\n"), wrap("t = type(1)\n")]),
    "banned-attribute": ([wrap("x = '{}'.format(1)\n"), wrap("q = df0.query('a > 1')\n"),
                          wrap("x = np.ctypeslib\n"), wrap("s = np.lib.stride_tricks.as_strided\n"),
                          wrap("pd.Series([1]).plot()\n")],
                         [wrap("x = np.sin(1.0)\n"), wrap("y = '%d' % 3\n")]),
    "module-escape": ([wrap("x = np.lib.npyio\n"), wrap("import statistics\nx = statistics.sys\n"),
                       wrap("x = pd.core.frame\n"), wrap("import datetime\nx = datetime.sys\n")],
                      [wrap("x = np.linalg.norm([1.0])\n"), wrap("x = pd.api.types.is_number(1)\n")]),
    "private-attribute": ([wrap("x = np._pytesttester\n"), wrap("x = pd.DataFrame._mgr\n"),
                           wrap("from numpy import _globals\n")],
                          [wrap("x = np.pi\n")]),
    "escape-attribute": ([wrap("g = (i for i in range(3))\nf = g.gi_frame\n"),
                          wrap("def f():\n    pass\nc = f.co_code\n"),
                          wrap("x = tb.tb_frame.f_back\n")],
                         [wrap("g = (i for i in range(3))\nv = next(g)\n")]),
    "file-access": ([wrap("x = open('data.csv')\n"), wrap("x = pd.read_csv('data.csv')\n"),
                     wrap("d0 = pd.DataFrame()\nd0.to_csv('out.csv')\n"), wrap("x = np.load('a.npy')\n"),
                     wrap("x = np.loadtxt('a.txt')\n"), wrap("import pathlib\n"),
                     wrap("from pandas import read_excel\n"), wrap("np.save('a', np.ones(2))\n")],
                    [wrap("x = np.linspace(0, 1, 5)\n"), wrap("x = pd.to_datetime(['2020-01-01'])\n")]),
    "network-access": ([wrap("import urllib.request\n"), wrap("import socket\n"),
                        wrap("import requests\n")],
                       [wrap("import random\n")]),
    "url-literal": ([wrap("u = 'https://example.com/data.csv'\n"), wrap("u = 'FTP://x/y'\n"),
                     wrap("u = 'file:///etc/passwd'\n"), wrap("u = b'data:text/csv,1'\n")],
                    [wrap("u = 'a file: see above'\n"), wrap("u = 'http'\n")]),
    "string-dispatch": ([wrap("d0 = pd.DataFrame({'a': [1]})\nd0.apply('eval')\n"),
                         wrap("d0 = pd.DataFrame({'a': [1]})\nd0.agg({'a': 'to_csv'})\n"),
                         wrap("s = pd.Series([1])\ns.transform('_mgr')\n")],
                        [wrap("d0 = pd.DataFrame({'a': [1]})\nd0.agg(['mean', 'std'])\n"),
                         wrap("s = pd.Series([1, 0])\nt = s.map({1: 'open', 0: 'load'})\n")]),
    "dunder": ([wrap("x = (1).__class__\n"), wrap("n = __name__\n"), wrap("s = '__class__'\n"),
                wrap("def f(__x__):\n    pass\n")],
               [wrap("x = 'a_b_c'\n"), wrap("x = '__'\n")]),
    "banned-statement": ([wrap("class A:\n    pass\n"), wrap("def f():\n    yield 1\n"),
                          wrap("async def f():\n    pass\n"), wrap("def f():\n    global q\n"),
                          wrap("def f():\n    x = 1\n    def g():\n        nonlocal x\n")],
                         [wrap("def f():\n    return 1\n"), wrap("g = lambda v: v + 1\n")]),
    "string-length": ([wrap("s = '" + "x" * 201 + "'\n")],
                      [wrap("s = '" + "x" * 200 + "'\n"),
                       '"""' + "A long docstring. " * 20 + '"""\n' + wrap("")]),
    "literal-data": ([wrap("v = [" + ", ".join(str(i) for i in range(21)) + "]\n"),
                      wrap("v = [0] * 100\n"), wrap("v = 30 * ('a',)\n"),
                      wrap("v = {'a': list(range(3)), 'b': " + str(list(range(21))) + "}\n"),
                      wrap("v = [" + ", ".join("'t%d'" % i for i in range(21)) + "]\n"),
                      wrap("a = [1] * 15\nb = [2] * 15\nc = [3] * 15\n"),
                      wrap("v = [[1, 2, 3]] * 7\n")],
                     [wrap("v = [" + ", ".join(str(i) for i in range(20)) + "]\n"),
                      wrap("v = {" + ", ".join("'k%d': 1" % i for i in range(20)) + "}\n"),
                      wrap("v = [0] * n_rows\n"), wrap("v = np.zeros(1000)\n"),
                      wrap("m = np.ones((3, 3))\nx = m[0, 1]\n")]),
    "module-escape-dynamic": ([wrap("key = '_' * 2 + 'array_interface' + '_' * 2\n"
                                    "pd.api.extensions.register_series_accessor(key)(lambda s: {})\n"),
                               wrap("ns = np.rec.sb.fromnumeric.types.SimpleNamespace()\n"),
                               wrap("import functools\nf = functools.update_wrapper(g, h, assigned=[k])\n")],
                              [wrap("import functools\nf = functools.partial(max, 1)\n")]),
    "module-assign": ([wrap("np.random.seed = None\n"), wrap("pd.DataFrame.to_x = 1\n"),
                       wrap("import math\nmath.pi += 1\n"), wrap("del np.pi\n")],
                      [wrap("d0 = pd.DataFrame({'a': [1]})\nd0.columns = ['b']\nd0['c'] = 2\n")]),
}


class FindingCodes(unittest.TestCase):
    def test_every_code_has_cases(self):
        documented = set(V.FINDING_CODES)
        covered = {c for c in CASES if c in V.FINDING_CODES} | {"encoding", "df-missing"}
        self.assertEqual(documented, covered)

    def test_each_code_triggers_and_benign_passes(self):
        for code, (bad, good) in CASES.items():
            if code not in V.FINDING_CODES:
                continue
            for source in bad:
                with self.subTest(code=code, source=source[-80:]):
                    self.assertIn(code, codes(source))
            for source in good:
                with self.subTest(code=code, benign=source[-80:]):
                    self.assertNotIn(code, codes(source))
                    if code not in ("size",):
                        self.assertEqual(V.validate_data_code(source), [], source)

    def test_encoding(self):
        self.assertEqual(codes(wrap("s = '\ud800'\n")), ["encoding"])
        self.assertEqual(codes(b"df = 1".decode("latin-1")), [])
        self.assertEqual([f.code for f in V.prepare_data_code(None)[1]], ["encoding"])

    def test_df_required_at_top_level(self):
        self.assertIn("df-missing", codes(HEAD + "x = pd.DataFrame()\n"))
        self.assertIn("df-missing", codes(HEAD + "def f():\n    df = pd.DataFrame()\n    return df\n"))
        for ok in ("df = pd.DataFrame()\n", "df: pd.DataFrame = pd.DataFrame()\n",
                   "df, n = pd.DataFrame(), 1\n", "if True:\n    df = pd.DataFrame()\n",
                   "try:\n    df = pd.DataFrame()\nexcept ValueError:\n    df = None\n",
                   "for df in [pd.DataFrame()]:\n    pass\n"):
            with self.subTest(ok=ok):
                self.assertNotIn("df-missing", codes(HEAD + ok))

    def test_dynamic_attribute_primitives_refused(self):
        """Raw memory without a dunder literal: a computed "__array_interface__" set through an
        admitted API (pandas accessor registration, SimpleNamespace, update_wrapper)."""
        bad, good = CASES["module-escape-dynamic"]
        for source in bad:
            with self.subTest(source=source[-90:]):
                self.assertTrue({"banned-attribute", "module-escape"} & set(codes(source)))
        for source in good:
            self.assertEqual(V.validate_data_code(source), [])

    def test_size_limit_is_the_data_route_cap(self):
        exactly = "df = 1\n" + "#" * (V.MAX_DATA_CODE_CHARS - 7)
        self.assertEqual(len(exactly), V.MAX_DATA_CODE_CHARS)
        self.assertEqual(codes(exactly), [])
        self.assertEqual(codes(exactly + "#"), ["size"])

    def test_literal_counts(self):
        """Dict keys do not count, values do; repetition counts copies; 40 per file."""
        keys_only = "v = {" + ", ".join("'k%d': None" % i for i in range(30)) + "}\n"
        self.assertNotIn("literal-data", codes(wrap(keys_only)))
        twenty_each = "".join("v%d = [%s]\n" % (n, ", ".join(["1"] * 20)) for n in range(2))
        self.assertNotIn("literal-data", codes(wrap(twenty_each)))      # 40 in the file: allowed
        self.assertIn("literal-data", codes(wrap(twenty_each + "w = [1]\n")))  # 41


class MessageHygiene(unittest.TestCase):
    SECRET = "zq_secret_ident_42"

    def test_messages_never_echo_the_snippet(self):
        s = self.SECRET
        snippets = [
            f"import {s}\n", f"from numpy import load_{s}\n", f"x = np._{s}\n",
            f"x = np.read_{s}\n", f"u = 'https://{s}.example'\n", f"x = '__{s}__'\n",
            f"x = getattr(np, {s})\n", f"d0 = pd.DataFrame()\nd0.apply('_{s}')\n",
            f"s = '{s}' * 30\nv = ['{s}'] * 30\n", f"class {s}:\n    pass\n",
            f"x = np.fetch_{s}()\n", f"import os as {s}\nx = {s}.getcwd()\n",
            f"x = (\n  '{s}'\n",
        ]
        for body in snippets:
            findings = V.validate_data_code(wrap(body))
            self.assertTrue(findings, body)
            for f in findings:
                self.assertNotIn(s, f.message)
                self.assertLessEqual(len(f.message), 300)

    def test_file_url_network_share_one_message(self):
        findings = V.validate_data_code(wrap(
            "import socket\nx = pd.read_csv('a')\nu = 'http://x'\ny = open('f')\nimport urllib\n"))
        relevant = [f for f in findings if f.code in ("file-access", "network-access", "url-literal")]
        self.assertGreaterEqual(len(relevant), 4)
        for f in relevant:
            self.assertEqual(f.message, "paste the file's contents in the data panel instead")

    def test_sorted_and_deduplicated(self):
        findings = V.validate_data_code(wrap("x = eval('1'); y = eval('2')\nimport sys\nz = eval('3')\n"))
        lines = [f.line for f in findings]
        self.assertEqual(lines, sorted(lines))
        self.assertEqual(len(findings), len(set(findings)))
        self.assertEqual([f.code for f in findings if f.line == 3], ["banned-name"])

    def test_finding_shape(self):
        f = V.validate_data_code(wrap("x = eval('1')\n"))[0]
        self.assertEqual(f.to_dict(), {"code": "banned-name", "line": 3,
                                       "message": "`eval` is not allowed in data code"})

    def test_never_raises(self):
        for source in ["", "\x00", "(" * 500 + ")" * 500, "x" * 7000, "def f(\n", "\ufeffdf = 1",
                       "\n".join("if x:" + " " * i for i in range(200))]:
            with self.subTest(source=source[:20]):
                result = V.validate_data_code(source)
                self.assertIsInstance(result, list)


class MainGuard(unittest.TestCase):
    def test_guard_is_unwrapped(self):
        source = HEAD + "def make():\n    return pd.DataFrame({'a': [1]})\n" \
            "if __name__ == '__main__':\n    df = make()\n"
        self.assertEqual(V.validate_data_code(source), [])
        tree, findings = V.prepare_data_code(source)
        self.assertEqual(findings, [])
        self.assertFalse(any(isinstance(n, ast.If) for n in tree.body))
        assign = tree.body[-1]
        self.assertIsInstance(assign, ast.Assign)
        self.assertEqual(assign.lineno, 6)     # line numbers kept for error reports

    def test_reversed_comparison_and_else(self):
        source = HEAD + "if '__main__' == __name__:\n    df = pd.DataFrame()\nelse:\n    df = open('x')\n"
        self.assertEqual(V.validate_data_code(source), [])

    def test_only_the_exact_guard(self):
        self.assertIn("dunder", codes(HEAD + "if __name__ != '__main__':\n    df = 1\n"))
        nested = HEAD + "if True:\n    if __name__ == '__main__':\n        df = 1\n"
        self.assertIn("dunder", codes(nested))


class Reachability(unittest.TestCase):
    """Walks every public attribute of every admitted module, following only the attribute names
    the validator admits, and checks that nothing dangerous and no module outside the admitted
    ones (plus a few harmless ones) can be reached."""

    # stdlib modules reachable through the admitted ones that carry nothing dangerous under the
    # validator's attribute rules (types: FunctionType, CodeType, new_class... are banned names)
    HARMLESS = {"abc", "numbers", "bisect", "heapq", "decimal", "fractions", "cmath", "ast",
                "keyword", "types"}
    ADMITTED_ROOTS = {m.split(".")[0] for m in V.DATA_MODULES}
    MAX_DEPTH = 6

    def test_walk(self):
        # a fresh interpreter, so that preload's imports do not touch this test process
        proc = subprocess.run([PYTHON, "-B", "-I", __file__, "--walk"], capture_output=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-2000:])
        out = proc.stdout.decode().splitlines()
        self.assertTrue(out and out[0].startswith("visited "), out[:3])
        self.assertGreater(int(out[0].split()[1]), 5000)   # the walk really walked
        self.assertEqual(out[1:], [], "reachable from admitted modules:\n" + "\n".join(out[1:]))

    def test_every_admitted_import_is_preloaded(self):
        code = ("import sys; sys.path.insert(0, %r); import preload, validator; preload.preload('data');"
                "print([m for m in sorted(validator.DATA_MODULES) if m not in sys.modules])" % HARNESS_DIR)
        proc = subprocess.run([PYTHON, "-B", "-I", "-c", code], capture_output=True, timeout=120)
        self.assertEqual(proc.stdout.decode().strip(), "[]", proc.stderr.decode()[-2000:])


def _dangerous():
    import builtins
    import ctypes
    import functools
    import gc
    import importlib
    import inspect
    import io
    import marshal
    import pickle
    import shutil
    import signal
    import subprocess as sp
    import tempfile
    import numpy as np
    import pandas as pd
    objs = [builtins.open, eval, exec, compile, __import__, getattr, setattr, delattr, globals,
            locals, vars, breakpoint, input, io.open, io.open_code, os.system, os.popen,
            os.listdir, os.scandir, os.remove, os.unlink, os.rename, os.execv, os.fork, os.kill,
            os._exit, os.open, os.write, os.environ, importlib.import_module, importlib.reload,
            sys._getframe, sys.settrace, sys.setprofile, inspect.currentframe, inspect.stack,
            gc.get_objects, gc.get_referrers, ctypes.CDLL, ctypes.cdll, ctypes.pythonapi,
            pickle.loads, pickle.load, marshal.loads, sp.Popen, sp.run, shutil.rmtree,
            tempfile.mkstemp, signal.signal, np.load, np.save, np.fromfile, np.memmap,
            np.lib.stride_tricks.as_strided, pd.read_csv, pd.read_pickle, types.FunctionType,
            types.CodeType, type, builtins,
            # dynamic attribute primitives (with a computed "__array_interface__": raw memory)
            types.SimpleNamespace, functools.update_wrapper, functools.wraps,
            pd.api.extensions.register_dataframe_accessor,
            pd.api.extensions.register_series_accessor,
            pd.api.extensions.register_index_accessor,
            pd.api.extensions.register_extension_dtype]
    return {id(o): o for o in objs}


def _attributes(obj):
    if isinstance(obj, types.ModuleType):
        return list(vars(obj).items())
    if isinstance(obj, type):
        merged = {}
        for klass in reversed(obj.__mro__):
            merged.update(vars(klass))
        return list(merged.items())
    namespace = getattr(obj, "__dict__", None)
    items = list(namespace.items()) if isinstance(namespace, dict) else []
    if isinstance(obj, property):
        items += [("fget", obj.fget), ("fset", obj.fset), ("fdel", obj.fdel)]
    return items


def walk(max_depth):
    import preload
    preload.preload("data")
    danger = _dangerous()
    allowed_roots = Reachability.ADMITTED_ROOTS | Reachability.HARMLESS
    found = {}
    seen = set()
    queue = collections.deque((sys.modules[m], m, 0) for m in sorted(V.DATA_MODULES)
                              if m in sys.modules)
    while queue:
        obj, path, depth = queue.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if danger.get(id(obj)) is obj:
            found.setdefault(path.rsplit(".", 1)[-1], path)
            continue
        if isinstance(obj, types.ModuleType) and obj.__name__.split(".")[0] not in allowed_roots:
            found.setdefault(path.rsplit(".", 1)[-1], path)
            continue
        if depth >= max_depth:
            continue
        for name, value in _attributes(obj):
            if not isinstance(name, str) or not name.isidentifier():
                continue
            if V._attribute_finding(name, 0) is not None or name in V.BANNED_NAMES:
                continue
            if isinstance(value, (int, float, complex, str, bytes, bool, type(None))):
                continue
            queue.append((value, path + "." + name, depth + 1))
    return len(seen), found


# Every library of the runtime that is not a data library (the plotting libraries, their
# renderers, sklearn, statsmodels and what they bring), as a data snippet would name it.
RUNTIME_NON_DATA = ("matplotlib", "matplotlib.pyplot", "seaborn", "plotly", "plotly.express",
                    "bokeh", "bokeh.plotting", "altair", "vl_convert", "pygal", "cairosvg",
                    "lets_plot", "plotnine", "mizani", "sklearn", "sklearn.linear_model",
                    "statsmodels", "statsmodels.api", "patsy", "formulaic", "PIL", "PIL.Image",
                    "narwhals", "jinja2", "tornado", "joblib", "threadpoolctl", "cffi",
                    "cairocffi", "xyzservices", "yaml", "jsonschema")


class RuntimeLibraries(unittest.TestCase):
    """The data profile refuses every non-data library of the runtime in each import form, and
    the guard refuses the import when the validator is skipped (the control: plain Python
    imports each one)."""

    def test_each_import_form_is_refused(self):
        for name in RUNTIME_NON_DATA:
            root, _, rest = name.partition(".")
            forms = ["import %s\n" % name, "import %s as lib\n" % name,
                     "from %s import thing\n" % name]
            if rest:
                forms.append("from %s import %s\n" % (root, rest.split(".")[0]))
            for form in forms:
                with self.subTest(source=form):
                    self.assertIn("banned-import", codes(wrap(form)))

    def test_the_guard_refuses_them_without_the_validator(self):
        from exits import DATA_EXIT
        from harness_util import run_forked
        names = [n for n in RUNTIME_NON_DATA if "." not in n]
        jobs = {name: ("import %s\nimport pandas as pd\ndf = pd.DataFrame()\n" % name,
                       {"validate": False}) for name in names}
        runs = run_forked(jobs, mode="data")
        control = subprocess.run([PYTHON, "-I", "-c", "import " + ", ".join(names)],
                                 capture_output=True, timeout=300)
        self.assertEqual(control.returncode, 0, control.stderr[-800:])
        for name, run in runs.items():
            with self.subTest(library=name):
                self.assertEqual(run.exit_code, DATA_EXIT.GUARD_REFUSED, run.stderr[-800:])
                self.assertEqual(run.result["refusal"], {"rule": "import", "line": 1})
                self.assertIsNone(run.out_csv or None)


if __name__ == "__main__" and sys.argv[1:] == ["--walk"]:
    import warnings
    warnings.simplefilter("ignore")
    visited, found = walk(Reachability.MAX_DEPTH)
    print("visited", visited)
    for name, path in sorted(found.items()):
        print(name, path)
elif __name__ == "__main__":
    unittest.main()
