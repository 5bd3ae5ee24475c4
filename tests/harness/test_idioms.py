"""Catalogue idioms that render bare and must render sandboxed (found by the anyplot replay), and
the attack next to each one's rule.

Allowed, each the real call in a warm plot child and cold:
  - __file__ is absolute, as when a script runs by its path: `__file__[:__file__.rfind("/")]`
    names the work dir (it named "plot.p" when __file__ was "plot.py");
  - `Path(__file__).parent.mkdir(parents=True, exist_ok=True)`: os.mkdir of the work dir itself,
    which exists (EEXIST, which pathlib's exist_ok swallows);
  - an explicit SourceFileLoader on a file that is not there raises FileNotFoundError, as
    unguarded (a file the plot wrote stays refused: rule A, `import`);
  - pandas' `DataFrame.query("... @name")` and `pd.eval`: pandas reads the caller's frame for
    `@name`, allowed when that frame is the plot's own (data mode's validator refuses query
    and eval before any frame is read);
  - statsmodels' formulas through patsy: plotnine's geom_smooth(formula=...) with its band, and
    a plot's own smf.ols("y ~ np.log(x) + SHIFT").predict(): patsy's capture answers the plot's
    namespace (plotlibs.py), never a frame.
Refused: the same pandas call pointed (its `level`) at the harness's frame above the plot: rule
`frame`. The control runs the plot the way the harness does (exec from a function with a local)
under plain Python and reads that local; patsy's capture pointed there answers the plot's names.
"""

import os
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import cleanup, run_forked, run_harness, run_many, run_plain  # noqa: E402
from test_libraries import attempt_line, png_size  # noqa: E402

PLOT_KW = {"argv": ["--plot", "plot.py"], "snippet_name": "plot.py", "env": {"ANYPLOT_THEME": "light"}}
SAVE = '''\
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.plot([1, 2, 3], [3, 1, 2])
'''

FILE_RFIND = SAVE + '''\
import os
script_dir = __file__[: __file__.rfind("/")]
print("ABS", os.path.isabs(__file__), script_dir == os.getcwd())
fig.savefig(f"{script_dir}/plot-light.png", dpi=200)
'''
PARENT_MKDIR = SAVE + '''\
import pathlib
plot_dir = pathlib.Path(__file__).parent
plot_dir.mkdir(parents=True, exist_ok=True)
fig.savefig(str(plot_dir / "plot-light.png"), dpi=200)
'''
QUERY = SAVE + '''\
import pandas as pd
df = pd.DataFrame({"day": range(10), "v": range(10)})
visible_start = 4
def visible(frame):
    return frame.query("day >= @visible_start", level=1)   # one up: still the plot's frame
print("ROWS", len(df.query("day >= @visible_start")), len(visible(df)), int(pd.eval("visible_start + 1")))
fig.savefig("plot-light.png", dpi=200)
'''
# patsy (statsmodels' formulas): plotnine's smooth with a formula and a plot's own model.
FORMULA = '''\
import numpy as np
import pandas as pd
import statsmodels.formula.api as smf
from plotnine import aes, geom_point, geom_smooth, ggplot
SHIFT = 2.0
rng = np.random.default_rng(3)
df = pd.DataFrame({"x": rng.uniform(1, 10, 60)})
df["y"] = 3 * np.log(df["x"]) + SHIFT + rng.normal(0, 0.1, 60)
fit = smf.ols("y ~ np.log(x) + I(x ** 2)", data=df).fit()
print("FIT", round(float(fit.params["np.log(x)"])), len(fit.predict(df.head(5))))
plot = ggplot(df, aes("x", "y")) + geom_point() + geom_smooth(method="lm", formula="y ~ x + I(x**2)", se=True)
plot.save("plot-light.png", dpi=400, width=8, height=4.5, units="in", verbose=False)
'''
# patsy's capture pointed one frame above the plot's module (the harness's run).
CAPTURE_ABOVE = '''\
from patsy.eval import EvalEnvironment
print("HIDDEN", "hidden" in EvalEnvironment.capture(1).namespace)
'''
# The catalogue's explicit loader on its CI's site-packages, which is not there.
LOADER_MISSING = '''\
import os, sys
from importlib.machinery import SourceFileLoader
init = os.path.join(os.path.dirname(sys.executable), "..", "lib", "python3.13", "site-packages", "altair", "__init__.py")
try:
    SourceFileLoader("altair", init).load_module()
except FileNotFoundError as exc:
    print("MISSING", exc.errno)
'''
# ... and on a file the plot wrote: rule A
LOADER_WRITTEN = '''\
from importlib.machinery import SourceFileLoader
with open("mine.py", "w") as f:
    f.write("X = 1")
SourceFileLoader("mine", "mine.py").load_module()  # ATTEMPT
'''
# pandas' level pointed one frame above the plot's module: the harness's run.
FRAME_ABOVE = '''\
import pandas as pd
print("GOT", pd.eval("hidden", level=1))  # ATTEMPT
'''
# The control: the plot run as the harness runs it, from a function that holds a local.
CONTROL = textwrap.dedent('''\
    def run():
        hidden = "harness-local"
        exec(compile(PLOT, "plot.py", "exec"), {"__name__": "__main__"})
    run()
    ''')


class Idioms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sources = {"file_rfind": FILE_RFIND, "parent_mkdir": PARENT_MKDIR, "query": QUERY,
                       "frame_above": FRAME_ABOVE, "loader_missing": LOADER_MISSING,
                       "loader_written": LOADER_WRITTEN, "formula": FORMULA,
                       "capture_above": CAPTURE_ABOVE}
        done = run_many({
            "warm": lambda: run_forked({k: (v, PLOT_KW) for k, v in cls.sources.items()}, mode="plot"),
            **{"cold " + k: (lambda s=v: run_harness(s, **PLOT_KW)) for k, v in cls.sources.items()},
        })
        cls.warm = done["warm"]
        cls.cold = {k[5:]: v for k, v in done.items() if k.startswith("cold ")}
        cls.control = run_plain(CONTROL.replace("PLOT", repr(FRAME_ABOVE)))
        cls.capture_control = run_plain(CONTROL.replace("PLOT", repr(CAPTURE_ABOVE)))

    @classmethod
    def tearDownClass(cls):
        cleanup([r.work for r in list(cls.warm.values()) + list(cls.cold.values())]
                + [cls.control[2], cls.capture_control[2]])

    def assert_rendered(self, run):
        self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
        self.assertEqual(png_size(os.path.join(run.work, "plot-light.png")), (3200, 1800))

    def renders(self, name):
        """The warm and the cold run of `name`, each checked to have drawn its PNG."""
        runs = (self.warm[name], self.cold[name])
        for run in runs:
            self.assert_rendered(run)
        return runs

    def test_file_is_absolute_and_names_the_work_dir(self):
        for run in self.renders("file_rfind"):
            self.assertIn("ABS True True", run.stdout)

    def test_mkdir_of_the_work_dir_itself(self):
        # The plot makes its own work dir (exist_ok) and saves into it: allowed, and it draws.
        for run in (self.warm["parent_mkdir"], self.cold["parent_mkdir"]):
            self.assert_rendered(run)

    def test_query_reads_the_plots_own_frame(self):
        for run in self.renders("query"):
            self.assertIn("ROWS 6 6 5", run.stdout)

    def test_a_loader_on_a_missing_file_fails_by_itself(self):
        for run in (self.warm["loader_missing"], self.cold["loader_missing"]):
            self.assertEqual(run.exit_code, 0, run.stderr[-2000:])     # the host then finds no PNG
            self.assertIn("MISSING 2", run.stdout)
        for run in (self.warm["loader_written"], self.cold["loader_written"]):
            self.assertEqual(run.exit_code, 31, run.stderr[-2000:])
            self.assertEqual(run.result["refusal"], {"rule": "import", "line": attempt_line(LOADER_WRITTEN)})

    def test_a_frame_above_the_plot_is_refused(self):
        for run in (self.warm["frame_above"], self.cold["frame_above"]):
            self.assertEqual(run.exit_code, 31, run.stderr[-2000:])
            self.assertEqual(run.result["refusal"], {"rule": "frame", "line": attempt_line(FRAME_ABOVE)})
            self.assertNotIn("GOT", run.stdout)
        code, stdout, _ = self.control
        self.assertEqual(code, 0, stdout)
        self.assertIn("GOT harness-local", stdout)   # unguarded, pandas reads the runner's local

    def test_formulas_evaluate_in_the_plots_namespace(self):
        for run in self.renders("formula"):
            self.assertIn("FIT 3 5", run.stdout)

    def test_patsy_capture_answers_no_frame_above_the_plot(self):
        for run in (self.warm["capture_above"], self.cold["capture_above"]):
            self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
            self.assertIn("HIDDEN False", run.stdout)
        code, stdout, _ = self.capture_control
        self.assertEqual(code, 0, stdout)
        self.assertIn("HIDDEN True", stdout)     # unguarded, patsy's walk reaches the runner's local


if __name__ == "__main__":
    unittest.main(verbose=2)
