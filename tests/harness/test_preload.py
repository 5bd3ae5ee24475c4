"""preload("figure"): the figure zygote's lighter preload (data stack, prepare("figure"), plotly
and its lazy trace classes; not plot mode's matplotlib/seaborn walk and warm-up draw).

What must hold for it to be a safe cut:
  - it loads at least everything the cold path's prepare("figure") loads before arming (the cold
    path is the proof that a figure job needs no more before arming);
  - a warm figure job (fork after the preload, guard armed) still renders every plotly file of the
    catalogue, and one that imports any module plot mode's stack has and this preload left out
    gets it under the guard and still writes its figure (the vector backends, which the guard
    would refuse to import lazily, stay preloaded: FIGURE_PLOT_EXTRA);
  - plot mode's preload is unchanged (the walk and the warm-up draw are still there), and a warm
    plot job can still use what only the walk loads (a vector backend, into memory).
"""

import concurrent.futures
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import unittest

from harness_util import HARNESS_DIR, PYTHON, ROOT, ForkRunner, base_env, run_forked

CATALOGUE = os.path.join(ROOT, "tests", "catalogue", "plots")
FIGURE_ARGV = ["--figure", "plot.py"]
# Modules only plot mode's walk of every matplotlib/seaborn submodule imports (nothing a figure
# preload or the cold path needs): the markers that tell the two preloads apart.
WALK_ONLY = ("matplotlib.sankey", "seaborn.objects")
FIGURE_SOURCE = textwrap.dedent('''\
    import plotly.graph_objects as go
    go.Figure(go.Bar(x=["a"], y=[1])).write_image("plot-light.png", width=1600, height=900, scale=2)
    ''')

# Prints the sorted names of sys.modules after preload.<fn>(mode), in a fresh interpreter.
LIST_MODULES = textwrap.dedent('''\
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import preload
    getattr(preload, sys.argv[2])(sys.argv[3])
    print(json.dumps({"modules": sorted(sys.modules), "done": sorted(preload._done),
                      "warm_up_failures": preload.WARM_UP_FAILURES}))
    ''')


def loaded_after(fn, mode):
    work = tempfile.mkdtemp(prefix="plotq-preload-")
    try:
        env = base_env(work)
        env["MPLCONFIGDIR"] = os.path.join(work, "mpl")
        proc = subprocess.run([PYTHON, "-I", "-B", "-c", LIST_MODULES, HARNESS_DIR, fn, mode],
                              cwd=work, env=env, capture_output=True, timeout=300)
        if proc.returncode != 0:
            raise AssertionError(proc.stderr.decode("utf-8", "replace")[-2000:])
        return json.loads(proc.stdout.decode().splitlines()[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)


class FigurePreload(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            cold, warm, plot = (pool.submit(loaded_after, fn, mode) for fn, mode in (
                ("prepare", "figure"), ("preload", "figure"), ("preload", "plot")))
            cls.cold, cls.warm, cls.plot = cold.result(), warm.result(), plot.result()

    def test_covers_what_the_cold_path_loads_before_arming(self):
        missing = sorted(set(self.cold["modules"]) - set(self.warm["modules"]))
        self.assertEqual(missing, [])
        for name in ("matplotlib.font_manager", "matplotlib.backends.backend_agg", "seaborn",
                     "plotly.express", "plotly.graph_objs._scatter", "pandas", "figurecapture",
                     "bokeh.embed"):
            self.assertIn(name, self.warm["modules"])

    def test_every_module_it_leaves_out_imports_under_the_guard(self):
        # Before this cut the figure zygote preloaded all of plot mode's stack: a warm figure job
        # that imports any of it must still get it (lazily, under the armed guard), or the cut
        # would change outcomes. (The vector backends would not: FIGURE_PLOT_EXTRA keeps them.)
        left_out = sorted(set(self.plot["modules"]) - set(self.warm["modules"]) - {"__main__"})
        self.assertGreater(len(left_out), 20)
        jobs = {name: ("import %s\n%s" % (name, FIGURE_SOURCE), {
            "argv": FIGURE_ARGV, "snippet_name": "plot.py", "env": {"ANYPLOT_THEME": "light"}})
            for name in left_out}
        runs = run_forked(jobs, mode="figure")
        try:
            refused = {name: (run.exit_code, (run.result or {}).get("refusal"))
                       for name, run in runs.items()
                       if run.exit_code != 0 or "plot-light.json" not in run.files}
            self.assertEqual(refused, {})
        finally:
            for run in runs.values():
                shutil.rmtree(run.work, ignore_errors=True)

    def test_every_warm_up_step_runs_in_this_runtime(self):
        # A warm-up that raises is skipped quietly (an optimisation), so one broken by a library's
        # API would only show as slower jobs: bokeh's once passed literal lists beside a source
        # and never reached json_item.
        for preloaded in (self.warm, self.plot):
            self.assertEqual(preloaded["warm_up_failures"], [])

    def test_leaves_out_plot_modes_walk_which_plot_mode_still_has(self):
        for name in WALK_ONLY:
            self.assertNotIn(name, self.warm["modules"])
            self.assertIn(name, self.plot["modules"])
        self.assertNotIn("plot", self.warm["done"])
        self.assertIn("prepared-plot", self.warm["done"])
        self.assertIn("plot", self.plot["done"])


class WarmFigureJobs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.runner = ForkRunner("figure")
        cls.runs = {}
        for spec in sorted(os.listdir(CATALOGUE)):
            path = os.path.join(CATALOGUE, spec, "implementations", "python", "plotly.py")
            if os.path.exists(path):
                with open(path) as f:
                    source = f.read()
                for theme in ("light", "dark"):
                    cls.runs[(spec, theme)] = cls.runner.run(
                        source, argv=FIGURE_ARGV, snippet_name="plot.py",
                        env={"ANYPLOT_THEME": theme})
        # Parts of matplotlib and seaborn the figure preload left out (WALK_ONLY), imported by
        # the job itself under the armed guard, then a plotly figure.
        cls.lazy = cls.runner.run(textwrap.dedent('''\
            import matplotlib.sankey
            import seaborn.objects
            import plotly.graph_objects as go
            fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
            fig.update_layout(title=seaborn.objects.Plot.__name__ + " " + matplotlib.sankey.__name__)
            fig.write_image("plot-light.png", width=1600, height=900, scale=2)
            '''), argv=FIGURE_ARGV, snippet_name="plot.py", env={"ANYPLOT_THEME": "light"})

    @classmethod
    def tearDownClass(cls):
        cls.runner.close()
        for run in list(cls.runs.values()) + [cls.lazy]:
            shutil.rmtree(run.work, ignore_errors=True)

    def test_every_plotly_catalogue_file_writes_its_figure(self):
        self.assertGreaterEqual(len(self.runs), 4)    # two plotly files, both themes
        for (spec, theme), run in self.runs.items():
            with self.subTest(spec=spec, theme=theme):
                self.assertEqual(run.exit_code, 0, run.stderr[-1500:])
                self.assertEqual(run.result["output"], "plot-%s.json" % theme)
                with open(os.path.join(run.work, "plot-%s.json" % theme)) as f:
                    figure = json.load(f)
                # the catalogue's plotly files draw scatters, bars and (heatmap-square) a heatmap
                self.assertIn(figure["data"][0]["type"], ("scatter", "bar", "heatmap"))

    def test_a_module_left_out_is_imported_under_the_guard(self):
        run = self.lazy
        self.assertEqual(run.exit_code, 0, run.stderr[-1500:])
        with open(os.path.join(run.work, "plot-light.json")) as f:
            figure = json.load(f)
        self.assertEqual(figure["layout"]["title"]["text"], "Plot matplotlib.sankey")


class WarmPlotJobs(unittest.TestCase):
    # Plot mode's walk is load-bearing: the vector backends (pdf, svg) pull in fontTools and lxml,
    # whose import under the armed guard is refused (rule `code`), so a warm plot job can draw
    # into a PDF or SVG buffer only because the walk preloaded them. (Measured while looking for
    # preload time to cut: leaving them out saves ~0.1 s of CPU and breaks this job.)
    def test_a_vector_backend_draws_into_memory_in_a_warm_plot_job(self):
        runner = ForkRunner("plot")
        try:
            run = runner.run(textwrap.dedent('''\
                import io
                import matplotlib.pyplot as plt
                fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
                ax.plot([1, 2, 3], [3, 1, 2])
                sizes = []
                for fmt in ("pdf", "svg"):
                    buf = io.BytesIO()
                    fig.savefig(buf, format=fmt)
                    sizes.append(len(buf.getvalue()))
                assert min(sizes) > 1000, sizes
                fig.savefig("plot-light.png", dpi=200)
                '''), argv=["--plot", "plot.py"], snippet_name="plot.py",
                env={"ANYPLOT_THEME": "light"})
        finally:
            runner.close()
        try:
            self.assertEqual(run.exit_code, 0, run.stderr[-1500:])
            self.assertEqual(run.result["output"], "plot-light.png")
            with open(os.path.join(run.work, "plot-light.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        finally:
            shutil.rmtree(run.work, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
