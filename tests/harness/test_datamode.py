"""Data mode end to end, as the launcher runs it (validation on): the issue's positive cases give
the expected shapes, every failure gets its own exit code and record, the stdout protocol holds,
and main() keeps its contract when called in-process after preload (the zygote path).

Every case runs on the warm path (a test zygote: preload once, fork, harness.main() in the child);
the cold path (`python3 -I harness.py --data snippet.py` in a fresh interpreter) runs the cases in
COLD and must agree with the warm one."""

import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import (HARNESS_DIR, PYTHON, base_env, cleanup, run_forked,  # noqa: E402
                          run_harness, run_many, stdout_lines)

sys.path.insert(0, HARNESS_DIR)
from exits import DATA_EXIT  # noqa: E402

LORENZ = """\
import numpy as np
import pandas as pd
from scipy.integrate import solve_ivp

def lorenz(t, state, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
    x, y, z = state
    return [sigma * (y - x), x * (rho - z) - y, x * y - beta * z]

t = np.linspace(0, 20, 2000)
sol = solve_ivp(lorenz, (0, 20), [1.0, 1.0, 1.0], t_eval=t, rtol=1e-8)
df = pd.DataFrame({"t": sol.t, "x": sol.y[0], "y": sol.y[1], "z": sol.y[2]}).round(6)
"""
LOGISTIC = """\
import numpy as np
import pandas as pd
rows = []
for r in np.linspace(2.8, 4.0, 120):
    x = 0.5
    for _ in range(300):
        x = r * x * (1 - x)
    for _ in range(25):
        x = r * x * (1 - x)
        rows.append((round(r, 4), round(x, 6)))
df = pd.DataFrame(rows, columns=["r", "x"])
"""
RANDOM_WALK = """\
import numpy as np
import pandas as pd
rng = np.random.default_rng(7)
steps = rng.choice([-1, 1], size=1000)
df = pd.DataFrame({"step": np.arange(1, 1001), "position": np.cumsum(steps)})
"""
DATE_RANGE = """\
import numpy as np
import pandas as pd
idx = pd.date_range("2024-01-01", periods=90, freq="D", name="date")
df = pd.DataFrame({"value": np.round(np.sin(np.arange(90) / 7.0), 4)}, index=idx)
df["weekday"] = df.index.day_name()
"""
R_TRANSLATED = """\
# R: x <- seq(0, 10, by = 0.5); y <- rnorm(length(x), mean = 2, sd = 0.5)
import numpy as np
import pandas as pd
x = np.arange(0, 10.5, 0.5)
y = np.random.default_rng(1).normal(loc=2, scale=0.5, size=len(x))
df = pd.DataFrame({"x": x, "y": y})
"""
MAIN_GUARD = """\
import pandas as pd

def build():
    return pd.DataFrame({"n": range(5), "sq": [i * i for i in range(5)]})

if __name__ == "__main__":
    df = build()
"""

TIME_ZONES = """\
import pandas as pd
a = pd.date_range("2024-03-01", periods=4, freq="D", tz="Pacific/Chatham")
b = pd.date_range("2024-03-01", periods=4, freq="D", tz="dateutil/Asia/Kathmandu")
c = pd.Series(pd.date_range("2024-03-30", periods=4, freq="12h", tz="UTC")).dt.tz_convert("Europe/Zurich")
df = pd.DataFrame({"chatham": a.astype(str), "kathmandu": b.astype(str), "zurich": c.astype(str)})
"""
STDLIB_MIX = """\
import math
import random
import re
import statistics
from collections import namedtuple
from datetime import datetime, timedelta
import numpy as np
import pandas as pd
from scipy import optimize, stats

Point = namedtuple("Point", "t value")
random.seed(5)
start = datetime.strptime("2024-01-01", "%Y-%m-%d")
points = [Point(start + timedelta(hours=i), math.sin(i / 5) + random.gauss(0, 0.1)) for i in range(48)]
frame = pd.DataFrame(points)
params, _ = optimize.curve_fit(lambda x, a, b: a * x + b, np.arange(48.0), frame["value"].to_numpy())
frame["trend"] = params[0] * np.arange(48.0) + params[1]
frame["z"] = stats.zscore(frame["value"])
frame["label"] = [re.sub(r"\\d", "#", f"p{i}") for i in range(48)]
rows = list(frame.itertuples(index=False))
df = frame.assign(median=statistics.median(frame["value"]), n=len(rows))
"""

CASES = {
    "lorenz": LORENZ, "logistic": LOGISTIC, "random_walk": RANDOM_WALK, "date_range": DATE_RANGE,
    "r_translated": R_TRANSLATED, "main_guard": MAIN_GUARD, "time_zones": TIME_ZONES,
    "stdlib_mix": STDLIB_MIX,
    "snippet_error": "import numpy as np\nimport pandas as pd\nvalue = 1 / 0\ndf = pd.DataFrame()\n",
    "error_message_hidden": ("import pandas as pd\nprint('PRINTED-5521')\n"
                             "raise ValueError('SECRET-MESSAGE-9912')\ndf = pd.DataFrame()\n"),
    "library_error": ("import numpy as np\nimport pandas as pd\n\ndef f():\n"
                      "    return np.linalg.inv(np.zeros((2, 2)))\n\nm = f()\ndf = pd.DataFrame(m)\n"),
    "no_df": "import pandas as pd\nif False:\n    df = pd.DataFrame()\n",
    "not_dataframe": "import pandas as pd\ndf = pd.Series([1, 2, 3])\n",
    "multiindex": ("import pandas as pd\ncols = pd.MultiIndex.from_tuples([('a', 'x'), ('a', 'y')])\n"
                   "df = pd.DataFrame([[1, 2]], columns=cols)\n"),
    "too_many_rows": "import numpy as np\nimport pandas as pd\ndf = pd.DataFrame({'a': np.arange(20001)})\n",
    "too_many_columns": "import numpy as np\nimport pandas as pd\ndf = pd.DataFrame(np.zeros((3, 51)))\n",
    "too_large": ("import numpy as np\nimport pandas as pd\nrng = np.random.default_rng(0)\n"
                  "df = pd.DataFrame({'a': rng.random(20000), 'b': rng.random(20000)})\n"),
    "cell_too_long": "import pandas as pd\ndf = pd.DataFrame({'a': ['x' * 201]})\n",
    "cell_type": "import pandas as pd\ndf = pd.DataFrame({'a': [[1, 2], [3]]})\n",
    "empty": "import pandas as pd\ndf = pd.DataFrame()\n",
    "duplicate_columns": "import pandas as pd\ndf = pd.DataFrame([[1, 2]], columns=['a', 'a'])\n",
    "validation": ("import os\nprint('RAN-7731')\nos.system('true')\nx = eval('1')\n"
                   "import pandas as pd\ndf = pd.DataFrame()\n"),
    "validation_not_skippable": "import os\nprint('RAN-7732')\nos.system('true')\ndf = 1\n",
    "syntax_at_compile": "import pandas as pd\nreturn 1\ndf = pd.DataFrame()\n",
    "bad_utf8": b"import pandas as pd\ns = '\xff\xfe'\ndf = pd.DataFrame()\n",
    "oversized": "df = 1\n" + "#" * 16385 + "\n",
    # Under the host's cap (16,384 characters, PLOTQ_DATA_MAX_CODE_CHARS), past the validator's
    # own default: it runs, as the wire admitted it.
    "long_but_admitted": "import pandas as pd\n" + "#" * 10000 + "\ndf = pd.DataFrame({'a': [1]})\n",
}


COLD = ("lorenz", "random_walk", "error_message_hidden", "validation", "validation_not_skippable",
        "bad_utf8", "missing", "link", "usage_no_args", "usage_plot")


def parse_csv(run):
    return list(csv.reader(io.StringIO(run.out_csv.decode("utf-8"))))


class DataMode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        warm = {name: (source, {}) for name, source in CASES.items()}
        warm["missing"] = (None, {})
        warm["usage_no_args"] = ("df = 1\n", {"argv": []})
        warm["usage_plot"] = ("df = 1\n", {"argv": ["--plot", "snippet.py"]})
        warm["closed_streams"] = ("import sys\nimport pandas as pd\ndf = pd.DataFrame({'a': [1]})\n"
                                  "sys.stdout.close()\nsys.stderr.close()\n", {"validate": False})
        ran = "import pandas as pd\nprint('RAN-7734')\ndf = pd.DataFrame({'a': [1]})\n"
        warm["caps_empty"] = (ran, {"env": {"PLOTQ_DATA_MAX_ROWS": ""}})
        warm["caps_bad"] = (ran, {"env": {"PLOTQ_DATA_MAX_CELL_CHARS": "lots"}})
        warm["code_cap_empty"] = (ran, {"env": {"PLOTQ_DATA_MAX_CODE_CHARS": ""}})
        warm["code_cap_small"] = (ran, {"env": {"PLOTQ_DATA_MAX_CODE_CHARS": "40"}})
        cls.runs = run_forked(warm)
        cold = {name: (lambda source=source: run_harness(source))
                for name, source in CASES.items() if name in COLD}
        cold["missing"] = lambda: run_harness(None)
        cold["usage_no_args"] = lambda: run_harness("df = 1\n", argv=[])
        cold["usage_plot"] = lambda: run_harness("df = 1\n", argv=["--plot", "snippet.py"])
        cold["link"] = cls._link_run
        cls.cold = run_many(cold)

    @classmethod
    def tearDownClass(cls):
        cleanup(run.work for run in list(cls.runs.values()) + list(cls.cold.values()))

    def test_cold_path_agrees(self):
        for name, cold in self.cold.items():
            with self.subTest(name=name):
                if name == "link":
                    continue
                warm = self.runs[name]
                self.assertEqual(cold.exit_code, warm.exit_code, cold.stderr[-1500:])
                self.assertEqual(cold.result, warm.result)
                self.assertEqual(cold.validation, warm.validation)
                self.assertEqual(cold.out_csv, warm.out_csv)
                self.assertEqual(stdout_lines(cold)[0], 'HARNESS {"event": "start"}')

    @staticmethod
    def _link_run():
        work = tempfile.mkdtemp(prefix="plotq-harness-")
        with open(os.path.join(work, "real.py"), "w") as f:
            f.write(RANDOM_WALK)
        os.symlink("real.py", os.path.join(work, "snippet.py"))
        return run_harness(None, work=work)

    def assertRun(self, name, exit_code, reason):
        run = self.runs[name]
        self.assertEqual(run.exit_code, exit_code, run.stderr[-1500:])
        self.assertEqual(run.result["exit_code"], exit_code)
        self.assertEqual(run.result["reason"], reason)
        self.assertEqual(run.result["mode"], "data")
        return run

    def assertOk(self, name, rows, header):
        run = self.assertRun(name, DATA_EXIT.OK, "ok")
        table = parse_csv(run)
        self.assertEqual(table[0], header)
        self.assertEqual(len(table) - 1, rows)
        self.assertEqual(run.result["rows"], rows)
        self.assertEqual(run.result["columns"], len(header))
        self.assertEqual(run.result["bytes"], len(run.out_csv))
        import hashlib
        self.assertEqual(run.result["sha256"], hashlib.sha256(run.out_csv).hexdigest())
        self.assertIsNone(run.result["error"])
        self.assertIsNone(run.result["refusal"])
        return table

    # positive cases: the expected shapes
    def test_lorenz(self):
        table = self.assertOk("lorenz", 2000, ["t", "x", "y", "z"])
        xs = [float(row[1]) for row in table[1:]]
        self.assertTrue(all(math.isfinite(x) for x in xs))
        self.assertGreater(max(xs), 10)            # it really left the start point: a strange attractor
        self.assertLess(min(xs), -10)
        self.assertEqual(table[1], ["0.0", "1.0", "1.0", "1.0"])

    def test_logistic_map(self):
        table = self.assertOk("logistic", 120 * 25, ["r", "x"])
        self.assertTrue(all(0.0 <= float(row[1]) <= 1.0 for row in table[1:]))

    def test_random_walk(self):
        table = self.assertOk("random_walk", 1000, ["step", "position"])
        positions = [0] + [int(row[1]) for row in table[1:]]
        self.assertTrue(all(abs(b - a) == 1 for a, b in zip(positions, positions[1:])))

    def test_date_range_index_reset(self):
        table = self.assertOk("date_range", 90, ["date", "value", "weekday"])
        self.assertEqual(table[1], ["2024-01-01", "0.0", "Monday"])
        self.assertEqual(table[-1][0], "2024-03-30")

    def test_r_translation(self):
        table = self.assertOk("r_translated", 21, ["x", "y"])
        self.assertEqual([row[0] for row in table[1:4]], ["0.0", "0.5", "1.0"])
        ys = [float(row[1]) for row in table[1:]]
        self.assertTrue(0.5 < sum(ys) / len(ys) < 3.5)

    def test_main_guard_is_run(self):
        self.assertOk("main_guard", 5, ["n", "sq"])

    def test_time_zones_preloaded(self):
        table = self.assertOk("time_zones", 4, ["chatham", "kathmandu", "zurich"])
        self.assertEqual(table[1][:2], ["2024-03-01 00:00:00+13:45", "2024-03-01 00:00:00+05:45"])
        self.assertEqual([row[2][-6:] for row in table[1:]], ["+01:00", "+01:00", "+01:00", "+02:00"])

    def test_stdlib_and_scipy_paths_pass_the_guard(self):
        table = self.assertOk("stdlib_mix", 48, ["t", "value", "trend", "z", "label", "median", "n"])
        self.assertEqual(table[1][0], "2024-01-01 00:00:00")
        self.assertEqual(table[1][4], "p#")
        self.assertEqual(table[1][6], "48")

    def test_record_consistent_when_std_streams_closed(self):
        """A snippet that closed stdout and stderr (guard level) still gets a record that
        matches the exit status; the advisory lines are simply lost."""
        run = self.runs["closed_streams"]
        self.assertEqual((run.exit_code, run.result["exit_code"]), (0, 0))
        self.assertEqual(run.out_csv, b"a\n1\n")

    # failures: each its own code, a fixed record, nothing of the message
    def test_snippet_error_class_and_line(self):
        run = self.assertRun("snippet_error", DATA_EXIT.SNIPPET_ERROR, "snippet_error")
        self.assertEqual(run.result["error"], {"class": "ZeroDivisionError", "line": 3})
        self.assertEqual(run.out_csv, b"")

    def test_error_message_never_reported(self):
        run = self.assertRun("error_message_hidden", DATA_EXIT.SNIPPET_ERROR, "snippet_error")
        self.assertEqual(run.result["error"], {"class": "ValueError", "line": 3})
        for text in (json.dumps(run.result), run.stderr):
            self.assertNotIn("SECRET-MESSAGE", text)
        self.assertIn("plotq-harness: exit 12 snippet_error (ValueError at line 3)", run.stderr)

    def test_library_error_innermost_snippet_line(self):
        run = self.assertRun("library_error", DATA_EXIT.SNIPPET_ERROR, "snippet_error")
        self.assertEqual(run.result["error"], {"class": "numpy.linalg.LinAlgError", "line": 5})

    def test_df_failures(self):
        expected = {
            "no_df": (DATA_EXIT.NO_DF, "no_df", None, None),
            "not_dataframe": (DATA_EXIT.NOT_DATAFRAME, "not_dataframe", None, None),
            "multiindex": (DATA_EXIT.MULTIINDEX_COLUMNS, "multiindex_columns", None, None),
            "too_many_rows": (DATA_EXIT.TOO_MANY_ROWS, "too_many_rows", 20001, 20000),
            "too_many_columns": (DATA_EXIT.TOO_MANY_COLUMNS, "too_many_columns", 51, 50),
            "cell_too_long": (DATA_EXIT.CELL_TOO_LONG, "cell_too_long", 201, 200),
            "cell_type": (DATA_EXIT.CELL_TYPE, "cell_type", None, None),
            "empty": (DATA_EXIT.EMPTY_TABLE, "empty_table", None, None),
            "duplicate_columns": (DATA_EXIT.DUPLICATE_COLUMNS, "duplicate_columns", None, None),
        }
        for name, (code, reason, measured, limit) in expected.items():
            with self.subTest(name=name):
                run = self.assertRun(name, code, reason)
                self.assertEqual((run.result["measured"], run.result["limit"]), (measured, limit))
                self.assertEqual(run.out_csv, b"")
                self.assertIsNone(run.result["sha256"])
        run = self.assertRun("too_large", DATA_EXIT.TOO_LARGE, "too_large")
        self.assertGreater(run.result["measured"], 204800)
        self.assertEqual(run.result["limit"], 204800)

    def test_validation_runs_nothing(self):
        run = self.assertRun("validation", DATA_EXIT.VALIDATION, "validation")
        self.assertNotIn("RAN-7731", run.stdout)
        findings = run.validation["findings"]
        self.assertEqual(run.result["findings"], len(findings))
        self.assertEqual([(f["code"], f["line"]) for f in findings],
                         [("banned-attribute", 3), ("os-use", 3), ("banned-name", 4)])
        self.assertTrue(all(set(f) == {"code", "line", "message"} for f in findings))
        self.assertFalse({"out.csv"} & set(run.files))

    def test_table_caps_missing_from_the_job_is_internal_error_and_runs_nothing(self):
        for name, variable in (("caps_empty", "PLOTQ_DATA_MAX_ROWS"), ("caps_bad", "PLOTQ_DATA_MAX_CELL_CHARS"),
                               ("code_cap_empty", "PLOTQ_DATA_MAX_CODE_CHARS")):
            with self.subTest(name=name):
                run = self.assertRun(name, DATA_EXIT.INTERNAL, "internal_error")
                self.assertNotIn("RAN-7734", run.stdout)
                self.assertIn(variable, run.stderr)
                self.assertFalse({"out.csv"} & set(run.files))

    def test_skip_switch_only_for_the_script(self):
        """The env var is honoured by the script entry only; main() always validates (below,
        ZygotePath runs main() with the variable set)."""
        run = self.assertRun("validation_not_skippable", DATA_EXIT.VALIDATION, "validation")
        self.assertNotIn("RAN-7732", run.stdout)

    def test_syntax_errors(self):
        run = self.assertRun("syntax_at_compile", DATA_EXIT.VALIDATION, "validation")
        self.assertEqual(run.validation["findings"][0]["code"], "syntax")
        run = self.assertRun("bad_utf8", DATA_EXIT.VALIDATION, "validation")
        self.assertEqual([f["code"] for f in run.validation["findings"]], ["encoding"])
        run = self.assertRun("oversized", DATA_EXIT.VALIDATION, "validation")
        self.assertEqual([f["code"] for f in run.validation["findings"]], ["size"])

    def test_the_code_cap_is_the_hosts(self):
        """The validator's size cap is the one the host passes (PLOTQ_DATA_MAX_CODE_CHARS): past its
        own 6,000-character default the snippet runs; under a 40-character cap the same 75-character
        snippet is refused as size and never runs."""
        self.assertOk("long_but_admitted", 1, ["a"])
        run = self.assertRun("code_cap_small", DATA_EXIT.VALIDATION, "validation")
        self.assertEqual([f["code"] for f in run.validation["findings"]], ["size"])
        self.assertNotIn("RAN-7734", run.stdout)

    def test_snippet_missing_or_link(self):
        self.assertRun("missing", DATA_EXIT.SNIPPET_MISSING, "snippet_missing")
        run = self.cold["link"]
        self.assertEqual(run.exit_code, DATA_EXIT.SNIPPET_MISSING)
        self.assertEqual(run.result["reason"], "snippet_missing")
        self.assertNotIn("out.csv", run.files)

    def test_usage(self):
        for name in ("usage_no_args", "usage_plot"):
            run = self.runs[name]
            self.assertEqual(run.exit_code, 2)
            self.assertIsNone(run.result)
            self.assertEqual(stdout_lines(run), ['HARNESS {"event": "start"}'])

    def test_stdout_protocol(self):
        for name, run in list(self.runs.items()) + [("cold " + n, r) for n, r in self.cold.items()]:
            if "usage" in name or name == "closed_streams":
                continue
            with self.subTest(name=name):
                lines = run.stdout.splitlines()
                self.assertEqual(lines[0], 'HARNESS {"event": "start"}')
                self.assertTrue(lines[-1].startswith("HARNESS "), lines[-1:])
                end = json.loads(lines[-1][len("HARNESS "):])
                self.assertEqual(set(end), {"event", "max_rss_mb", "cpu_s"})
                self.assertEqual(end["event"], "end")
                self.assertIsInstance(end["max_rss_mb"], float)
                self.assertGreater(end["max_rss_mb"], 1)
                self.assertIsInstance(end["cpu_s"], float)
        self.assertIn("PRINTED-5521", self.runs["error_message_hidden"].stdout)


ZYGOTE_SCRIPT = textwrap.dedent("""\
    import json, os, sys
    sys.path.insert(0, sys.argv[1])
    import harness
    harness.preload("data")
    results = {}
    for work, style in zip(sys.argv[2::2], sys.argv[3::2]):
        pid = os.fork()
        if pid == 0:
            os.chdir(work)
            if style == "bound":
                exit_now = os._exit
                exit_now(harness.main(["--data", "snippet.py"]))
            else:
                code = harness.main(["--data", "snippet.py"])   # os._exit looked up afterwards
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        results[work] = os.waitstatus_to_exitcode(status)
    print(json.dumps(results))
""")


class ZygotePath(unittest.TestCase):
    """preload once, fork, main() in the child: the warm path the launcher uses."""

    def test_fork_after_preload(self):
        cases = [(RANDOM_WALK, "bound", 0), (RANDOM_WALK, "late", 0),
                 ("import os\nos.system('true')\ndf = 1\n", "late", DATA_EXIT.VALIDATION),
                 ("import pandas as pd\ndf = pd.Series([1])\n", "bound", DATA_EXIT.NOT_DATAFRAME)]
        works = []
        for source, _, _ in cases:
            work = tempfile.mkdtemp(prefix="plotq-zygote-")
            with open(os.path.join(work, "snippet.py"), "w") as f:
                f.write(source)
            works.append(work)
        args = [a for work, (_, style, _) in zip(works, cases) for a in (work, style)]
        env = base_env(works[0])
        env["PLOTQ_HARNESS_SKIP_VALIDATION"] = "1"      # ignored by main()
        try:
            proc = subprocess.run([PYTHON, "-B", "-I", "-c", ZYGOTE_SCRIPT, HARNESS_DIR, *args],
                                  env=env, capture_output=True, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-2000:])
            results = json.loads(proc.stdout.decode().splitlines()[-1])
            for work, (_, style, code) in zip(works, cases):
                with self.subTest(style=style, code=code):
                    self.assertEqual(results[work], code)
                    with open(os.path.join(work, "result.json")) as f:
                        self.assertEqual(json.load(f)["exit_code"], code)
        finally:
            cleanup(works)


if __name__ == "__main__":
    unittest.main()
