"""What a render may do (issue 14): PlotGuard refuses what a plot does outside its work dir, not
inside it, and the library internals that raise audit events in normal work pass.

Allowed: each case is the real call (catalogue patterns: os.chdir into the file's folder,
os.getcwd inside os.path.abspath, a sys.path rebuild, a second file, an HTML page, a PNG read back
with PIL, lets-plot's folder moved, copied from and removed; pandas 3's read_csv, seaborn's stacked histplot,
scipy.spatial's qhull, tempfile in the work dir) and must end with exit 0 and its own evidence.

Refused: each attack must end with its rule at the line of the attempt, and leave the place it
aimed at untouched (a fresh directory outside the work dir per run, compared before and after);
the same code under plain Python (the control, with its own fresh directory) does reach it.
"""

import os
import shutil
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import (HARNESS_DIR, PYTHON, ROOT, base_env, cleanup,  # noqa: E402
                          run_forked, run_harness, run_many)
from test_plotmode import attempt_line, build_extension, png_size  # noqa: E402

import subprocess  # noqa: E402

REFUSED = 31
PLOT = {"argv": ["--plot", "plot.py"], "snippet_name": "plot.py", "env": {"ANYPLOT_THEME": "light"}}
SAVE = textwrap.dedent('''\
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
    ax.plot([1, 2, 3], [3, 1, 2])
    fig.savefig("plot-light.png", dpi=200)
    ''')
# Big enough for pandas 3's parallel read_csv (5 MB data section and over).
BIG_CSV = "name,value\n" + "".join("n%d,%d\n" % (i % 97, i) for i in range(700_000))

ALLOWED = {
    # the catalogue's own preamble: chdir into the file's folder, abspath(getcwd), sys.path rebuilt
    "catalogue_paths": SAVE.replace("import matplotlib.pyplot as plt\n", textwrap.dedent('''\
        import os
        import sys
        from pathlib import Path
        _here = os.path.abspath(os.path.dirname(__file__))
        os.chdir(_here)
        os.chdir(Path(__file__).parent)
        sys.path[:] = [p for p in sys.path if (os.path.abspath(p) if p else os.getcwd()) != _here]
        sys.path.insert(0, _here)
        import matplotlib.pyplot as plt
        import tabnanny
        print("CWD-OK", os.getcwd() == _here, Path.cwd().resolve() == Path(__file__).resolve().parent)
        ''')),
    # a second PNG, an HTML page, a save twice, the PNG read back with PIL and padded
    "second_files": SAVE + textwrap.dedent('''\
        from PIL import Image
        fig.savefig("plot-light.png", dpi=100)
        fig.savefig("preview.png", dpi=50)
        with open("plot-light.html", "w") as f:
            f.write("<html><body>plot</body></html>")
        image = Image.open("plot-light.png")
        canvas = Image.new("RGB", (3200, 1800), "white")
        canvas.paste(image, (0, 0))
        canvas.save("plot-light.png")
        print("SIZE", Image.open("plot-light.png").size,
              sorted(n for n in os.listdir(".") if not n.startswith(".")))
        ''').replace("from PIL", "import os\nfrom PIL"),
    # lets-plot's ggsave layout: a folder made, listed, moved out of and removed
    "subfolder_moves": SAVE.replace('"plot-light.png"', '"lets-plot-images/plot-light.png"')
    .replace("import matplotlib", "import os\nimport shutil\nos.makedirs('lets-plot-images', "
             "exist_ok=True)\nimport matplotlib") + textwrap.dedent('''\
        os.chdir("lets-plot-images")
        print("INSIDE", os.listdir("."))
        os.chdir("..")
        shutil.move("lets-plot-images/plot-light.png", "plot-light.png")
        with open("lets-plot-images/plot-light.html", "w") as f:
            f.write("x")
        os.rename("lets-plot-images/plot-light.html", "plot-light.html")
        os.remove("plot-light.html")
        shutil.copy("plot-light.png", "lets-plot-images/copy.png")    # copyfile: no os.sendfile
        copied = os.path.getsize("lets-plot-images/copy.png") == os.path.getsize("plot-light.png")
        shutil.rmtree("lets-plot-images")
        print("COPIED", copied, "GONE", os.path.exists("lets-plot-images"))
        '''),
    "tempfile_in_work_dir": SAVE + textwrap.dedent('''\
        import os
        import tempfile
        with tempfile.NamedTemporaryFile(suffix=".svg") as handle:
            handle.write(b"<svg/>")
            handle.flush()
            inside = os.path.dirname(handle.name) == os.getcwd()
        fd, name = tempfile.mkstemp(suffix=".png")
        with os.fdopen(fd, "wb") as f:
            f.write(b"x")
        print("TEMP", inside, os.path.dirname(name) == os.getcwd())
        '''),
    # pandas 3 sizes read_csv's thread pool from /sys/fs/cgroup unless mode.max_threads is set
    "read_csv_one_thread": textwrap.dedent('''\
        import threading
        import pandas as pd
        import matplotlib.pyplot as plt
        frame = pd.read_csv("data.csv")
        print("THREADS", threading.active_count(), len(frame))
        fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
        ax.plot(frame["value"][:100])
        fig.savefig("plot-light.png", dpi=200)
        '''),
    # seaborn's stacked histplot (refused as `gc` with pandas 1.5's copy check)
    "histplot_stack": textwrap.dedent('''\
        import numpy as np
        import pandas as pd
        import seaborn as sns
        import matplotlib.pyplot as plt
        rng = np.random.default_rng(1)
        frame = pd.DataFrame({"x": rng.normal(size=300), "g": np.repeat(list("abc"), 100)})
        fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
        sns.histplot(frame, x="x", hue="g", multiple="stack", ax=ax)
        sns.histplot(frame, x="x", hue="g", multiple="fill", element="step", ax=ax)
        fig.savefig("plot-light.png", dpi=200)
        '''),
    # qhull's MessageStream (a memory stream, or a temp file in TMPDIR)
    "qhull": textwrap.dedent('''\
        import numpy as np
        import matplotlib.pyplot as plt
        from scipy.spatial import ConvexHull, Delaunay, Voronoi, voronoi_plot_2d
        points = np.random.default_rng(2).normal(size=(40, 2))
        hull = ConvexHull(points)
        fig = voronoi_plot_2d(Voronoi(points))
        fig.set_size_inches(16, 9)
        fig.axes[0].triplot(points[:, 0], points[:, 1], Delaunay(points).simplices)
        fig.savefig("plot-light.png", dpi=200)
        print("HULL", len(hull.vertices) > 2)
        '''),
    # pyparsing records callers with traceback.extract_stack (each Forward: matplotlib's mathtext
    # parser, built on a cold job's first mathtext) and finds a parse action's arity from
    # extract_tb: both frame reads, answered without frames (plotenv._pyparsing_traceback)
    "pyparsing_mathtext": SAVE.replace("ax.plot([1, 2, 3], [3, 1, 2])\n", textwrap.dedent('''\
        ax.plot([1, 10, 100], [3, 1, 2])
        ax.set_xscale("log")
        ax.set_title(r"$\\alpha^2 + \\sqrt{x}$", fontweight="medium")
        import pyparsing as pp
        number = pp.Word(pp.nums).set_parse_action(lambda tokens: int(tokens[0]))
        expr = pp.Forward()
        expr <<= number + pp.Optional("+" + expr)
        print("PARSED", expr.parse_string("4 + 38").as_list())
        ''')),
    # scikit-learn's import sets KMP_* variables (os.putenv), joblib's loky registers a fork hook
    # and reads the cgroup CPU quota, threadpoolctl looks for native pools (plotguard's
    # settle_libraries); statsmodels as the catalogue uses it
    "scikit_learn": SAVE + textwrap.dedent('''\
        import numpy as np
        from sklearn.cluster import KMeans
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.inspection import permutation_importance
        from sklearn.neighbors import NearestNeighbors
        import statsmodels.api as sm
        from statsmodels.nonparametric.smoothers_lowess import lowess
        X = np.random.default_rng(0).normal(size=(60, 3))
        y = (X[:, 0] > 0).astype(int)
        labels = KMeans(n_clusters=3, n_init=2, random_state=0).fit_predict(X)
        distances, _ = NearestNeighbors(n_neighbors=3).fit(X).kneighbors(X)
        model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
        importance = permutation_importance(model, X, y, n_repeats=2, random_state=0)
        fit = sm.OLS(X[:, 1], sm.add_constant(X[:, 0])).fit()
        smooth = lowess(X[:, 1], X[:, 0], frac=0.5)
        print("SKLEARN", len(set(labels)), distances.shape, importance.importances_mean.shape,
              len(fit.params), smooth.shape)
        '''),
    # a sys.path entry that does not exist (catalogue files insert their CI's site-packages):
    # importlib.metadata lists and opens it, and a read of a missing file fails by itself. An
    # existing place outside stays refused (read_outside, list_outside below).
    "missing_sys_path_entry": SAVE + textwrap.dedent('''\
        import importlib.metadata
        import os
        import sys
        sys.path.insert(0, "/home/runner/work/anyplot/anyplot/.venv/lib/python3.13/site-packages")
        version = importlib.metadata.version("numpy")
        try:
            open("/nonexistent-plotq-dir/x.txt")
        except FileNotFoundError:
            print("MISSING", bool(version), os.listdir.__name__)
        '''),
    # pandas 3's chained-assignment check reads its caller's frame: off in the sandbox
    "chained_assignment": SAVE + textwrap.dedent('''\
        import pandas as pd
        frame = pd.DataFrame({"a": [1, 2, 3]})
        frame["b"] = frame["a"] * 2
        frame["b"][0] = 9
        frame.fillna(0, inplace=True)
        print("CHAINED", frame["b"].tolist())
        '''),
}
EVIDENCE = {
    "catalogue_paths": "CWD-OK True True",
    "second_files": "SIZE (3200, 1800) ['data.csv', 'plot-light.html', 'plot-light.png', "
                    "'plot.py', 'preview.png', 'result.json']",
    "subfolder_moves": "COPIED True GONE False",
    "tempfile_in_work_dir": "TEMP True True",
    "read_csv_one_thread": "THREADS 1 700000",
    "qhull": "HULL True",
    "chained_assignment": "CHAINED [2, 4, 6]",
    "missing_sys_path_entry": "MISSING True listdir",
    "pyparsing_mathtext": "PARSED [4, '+', 38]",
    "scikit_learn": "SKLEARN 3 (60, 3) (3,) 2 (60, 2)",
}

# plotly 7.1 builds each validator on first use (_plotly_utils/basevalidators.py build_validator:
# eval of a class name, the compile/exec events) from validators/_validators.json, read from the
# install: traces no warm-up built, in a warm and a cold figure run.
FIGURE_VALIDATORS = textwrap.dedent('''\
    import plotly.graph_objects as go
    fig = go.Figure(go.Scatterternary(a=[1, 2], b=[2, 1], c=[1, 1], mode="markers"))
    fig.add_trace(go.Funnelarea(values=[3, 2, 1], domain={"x": [0, 0.3]}))
    fig.update_layout(ternary={"sum": 4}, width=1600, height=900)
    print("VALIDATORS", len(fig.to_json()) > 100)
    ''')

DATA_CASES = {
    "qhull": ("import numpy as np\nimport pandas as pd\nfrom scipy.spatial import ConvexHull, Voronoi\n"
              "points = np.random.default_rng(3).normal(size=(30, 2))\n"
              "df = pd.DataFrame({'v': ConvexHull(points).vertices})\n"
              "regions = len(Voronoi(points).regions)\n", True),
    "chained_assignment": ("import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})\n"
                           "df['b'] = df['a'] * 2\ndf['b'][0] = 9\n", True),
    # the guard layer alone (the validator refuses read_csv in data snippets)
    "read_csv": ("import io\nimport threading\nimport pandas as pd\n"
                 "df = pd.read_csv(io.StringIO('a,b\\n1,2\\n3,4\\n'))\n"
                 "df['threads'] = threading.active_count()\n", False),
}


def attack(source, rule, check, leak=None):
    """check: the name the attack would create (or remove, "keep.txt") in OUTSIDE, ("work",
    name) for one in the work dir, or None with `leak`: what it would print."""
    return {"source": textwrap.dedent(source), "rule": rule, "check": check, "leak": leak}


# OUTSIDE is replaced by a fresh directory outside the work dir for each run.
ATTACKS = {
    "write_outside": attack('''\
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        fig.savefig("OUTSIDE/marker.png")  # ATTEMPT
        ''', "open", "marker.png"),
    "os_open_outside": attack('''\
        import os
        fd = os.open("OUTSIDE/marker", os.O_WRONLY | os.O_CREAT, 0o644)  # ATTEMPT
        ''', "open", "marker"),
    "caught_refusal": attack('''\
        import matplotlib.pyplot as plt
        try:
            open("OUTSIDE/marker", "w").close()  # ATTEMPT
        except Exception:
            pass
        fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
        fig.savefig("plot-light.png", dpi=200)
        ''', "open", "marker"),
    "chdir_out": attack('''\
        import os
        os.chdir("OUTSIDE")  # ATTEMPT
        open("marker", "w").close()
        ''', "filesystem", "marker"),
    "relative_escape_after_chdir": attack('''\
        import os
        os.makedirs("a/b")
        os.chdir("a/b")
        open(os.path.relpath("OUTSIDE/marker"), "w").close()  # ATTEMPT
        ''', "open", "marker"),
    "rename_out": attack('''\
        import os
        with open("inside.txt", "w") as f:
            f.write("x")
        os.rename("inside.txt", "OUTSIDE/marker")  # ATTEMPT
        ''', "filesystem", "marker"),
    "remove_outside": attack('''\
        import os
        os.remove("OUTSIDE/keep.txt")  # ATTEMPT
        ''', "filesystem", "keep.txt"),
    "mkdir_outside": attack('''\
        import os
        os.mkdir("OUTSIDE/marker")  # ATTEMPT
        ''', "filesystem", "marker"),
    "read_outside": attack('''\
        print(open("OUTSIDE/keep.txt").read())  # ATTEMPT
        ''', "open", None, leak="OUTSIDE-SECRET-4417"),
    "list_outside": attack('''\
        import os
        print(os.listdir("OUTSIDE"))  # ATTEMPT
        ''', "listing", None, leak="keep.txt"),
    "symlink_in_work_dir": attack('''\
        import os
        os.symlink("OUTSIDE/keep.txt", "link.txt")  # ATTEMPT
        print(open("link.txt").read())
        ''', "filesystem", None, leak="OUTSIDE-SECRET-4417"),
    # pathlib patched so that the path the kernel gets differs from the one a Path caches
    "pathlib_patched": attack('''\
        import pathlib
        path = pathlib.Path("inside.txt")
        str(path)
        pathlib.PurePath.__fspath__ = lambda self: "OUTSIDE/marker"
        open(path, "w").close()  # ATTEMPT
        ''', "open", "marker"),
    # a module the plot wrote in its work dir, imported from a sys.path entry it added
    "import_plot_written_module": attack('''\
        import os
        import sys
        with open("evil_helper.py", "w") as f:
            f.write("open('marker', 'w').close()\\n")
        sys.path.insert(0, os.getcwd())
        import evil_helper  # ATTEMPT
        ''', "import", ("work", "marker")),
    "import_plot_written_extension": attack('''\
        import base64
        import os
        import sys
        with open("evil.so", "wb") as f:
            f.write(base64.b64decode(BLOB))
        sys.path.insert(0, os.getcwd())
        import evil  # ATTEMPT
        ''', "import", ("work", "marker")),
    # the launcher's thread limits (and the loader's and interpreter's variables) stay as set
    "thread_limit_raised": attack('''\
        import os
        os.environ["OMP_NUM_THREADS"] = "8"  # ATTEMPT
        print("OMP-" + os.environ["OMP_NUM_THREADS"])
        ''', "environment", None, leak="OMP-8"),
    # a fork hook may be registered (joblib does), but no fork runs it
    "fork_hook": attack('''\
        import os
        os.register_at_fork(after_in_child=lambda: open("marker", "w").close())
        pid = os.fork()  # ATTEMPT
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        ''', "process", ("work", "marker")),
    # the harness's record is the one file of the work dir the plot may not write or move
    "record_overwritten": attack('''\
        with open("result.json", "w") as f:  # ATTEMPT
            f.write('{"exit_code": 0, "reason": "ok"}')
        ''', "open", None),
    "record_moved": attack('''\
        import os
        os.rename("result.json", "moved.json")  # ATTEMPT
        ''', "filesystem", None),
}


class WorkDir(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        blob = __import__("base64").b64encode(build_extension()).decode()
        ATTACKS["import_plot_written_extension"]["source"] = (
            ATTACKS["import_plot_written_extension"]["source"].replace("BLOB", repr(blob)))
        cls.dirs = []
        jobs = {}
        for name, source in ALLOWED.items():
            files = {"data.csv": BIG_CSV if name == "read_csv_one_thread" else "name,value\na,1\n"}
            jobs["ok " + name] = (source, dict(PLOT, files=files))
        cls.outside = {}
        for name, a in ATTACKS.items():
            outside = cls.fresh_outside()
            cls.outside[name] = (outside, sorted(os.listdir(outside)))
            jobs["attack " + name] = (a["source"].replace("OUTSIDE", outside), dict(PLOT))
        data_jobs = {"data " + name: (source, {"validate": validate})
                     for name, (source, validate) in DATA_CASES.items()}
        figure = {"argv": ["--figure", "plot.py"], "snippet_name": "plot.py",
                  "env": {"ANYPLOT_THEME": "light"}}
        both = run_many({
            "plot": lambda: run_forked(jobs, mode="plot"),
            "other": lambda: {**run_forked(data_jobs, mode="data"),
                              **run_forked({"figure warm": (FIGURE_VALIDATORS, figure)},
                                           mode="figure"),
                              "figure cold": run_harness(FIGURE_VALIDATORS, **figure),
                              "cold pyparsing_mathtext": run_harness(
                                  ALLOWED["pyparsing_mathtext"], **PLOT)}})
        cls.runs = {**both["plot"], **both["other"]}
        cls.after = {name: sorted(os.listdir(cls.outside[name][0])) for name in ATTACKS}
        cls.controls = {}
        for name, a in ATTACKS.items():
            outside = cls.fresh_outside()
            cls.controls[name] = (outside, cls.plain(a["source"].replace("OUTSIDE", outside)))

    @classmethod
    def fresh_outside(cls):
        outside = tempfile.mkdtemp(prefix="plotq-outside-")
        with open(os.path.join(outside, "keep.txt"), "w") as f:
            f.write("OUTSIDE-SECRET-4417")
        cls.dirs.append(outside)
        return outside

    @classmethod
    def plain(cls, source):
        work = tempfile.mkdtemp(prefix="plotq-control-")
        cls.dirs.append(work)
        with open(os.path.join(work, "plot.py"), "w") as f:
            f.write(source)
        env = dict(base_env(work), ANYPLOT_THEME="light")
        proc = subprocess.run([PYTHON, "-B", "-I", "plot.py"], cwd=work, env=env,
                              capture_output=True, timeout=120)
        return proc.returncode, proc.stdout.decode("utf-8", "replace"), work

    @classmethod
    def tearDownClass(cls):
        cleanup([r.work for r in cls.runs.values()] + cls.dirs)

    def test_what_a_render_does_in_its_work_dir_passes(self):
        for name in ALLOWED:
            run = self.runs["ok " + name]
            with self.subTest(case=name):
                self.assertEqual(run.exit_code, 0, run.stderr[-1500:])
                self.assertIsNone(run.result["refusal"])
                self.assertEqual(png_size(os.path.join(run.work, "plot-light.png")), (3200, 1800))
                if name in EVIDENCE:
                    self.assertIn(EVIDENCE[name], run.stdout)

    def test_import_trust_is_the_runtimes_prefixes(self):
        """Under the venv, the install prefixes (read and import trust) are the base
        interpreter's stdlib and the venv's own tree, never Debian's dist-packages."""
        probe = ("import sys; sys.path.insert(0, %r); import plotguard; "
                 "print(sys.prefix); print('\\n'.join(plotguard.install_prefixes()))" % HARNESS_DIR)
        proc = subprocess.run([PYTHON, "-I", "-c", probe], capture_output=True, timeout=60)
        prefix, *prefixes = proc.stdout.decode().split()
        venv = os.path.join(ROOT, "runtime", "venv", "lib", "python3.11")
        if os.path.realpath(prefix) != os.path.realpath(os.path.join(ROOT, "runtime", "venv")):
            self.skipTest("the harness tests run another interpreter than the runtime's venv")
        self.assertIn("/usr/lib/python3.11", prefixes)
        self.assertIn(os.path.join(venv, "site-packages"), prefixes)
        for prefix in prefixes:
            self.assertFalse(prefix.startswith("/usr/lib/python3/"), prefix)
            self.assertFalse(prefix.startswith("/usr/local/"), prefix)

    def test_every_library_frame_caller_exists_in_the_runtime(self):
        """PLOT_FRAME_CALLERS name library internals by module and qualname; a renamed one would
        silently stop matching (its callers then refused as `frame`). Each resolves to code."""
        probe = ("import importlib, sys; sys.path.insert(0, %r); import guard, plotguard; "
                 "[importlib.import_module(m) for m, _ in plotguard.PLOT_FRAME_CALLERS]; "
                 "print(len(guard._resolve_callers(plotguard.PLOT_FRAME_CALLERS)), "
                 "len(plotguard.PLOT_FRAME_CALLERS))" % HARNESS_DIR)
        proc = subprocess.run([PYTHON, "-I", "-c", probe], capture_output=True, timeout=60)
        found, listed = proc.stdout.decode().split()
        self.assertEqual(found, listed, proc.stderr.decode()[-800:])

    def test_the_thread_option_is_what_keeps_read_csv_serial(self):
        """The control for read_csv_one_thread: without mode.max_threads, pandas 3 reads the same
        file with a thread pool on this machine (and reads /sys/fs/cgroup first)."""
        if (os.cpu_count() or 1) < 2:
            self.skipTest("one CPU: pandas reads serially anyway")
        work = tempfile.mkdtemp(prefix="plotq-threads-")
        self.dirs.append(work)
        with open(os.path.join(work, "data.csv"), "w") as f:
            f.write(BIG_CSV)
        probe = textwrap.dedent('''\
            import sys
            import threading
            import pandas as pd
            started = []
            start = threading.Thread.start
            threading.Thread.start = lambda self: (started.append(1), start(self))[1]
            if sys.argv[1] == "one":
                pd.set_option("mode.max_threads", 1)
            pd.read_csv("data.csv")
            print(len(started))
            ''')
        counts = {}
        for option in ("default", "one"):
            proc = subprocess.run([PYTHON, "-B", "-I", "-c", probe, option], cwd=work,
                                  env=base_env(work), capture_output=True, timeout=120)
            counts[option] = int(proc.stdout.decode() or -1)
        self.assertGreater(counts["default"], 0)
        self.assertEqual(counts["one"], 0)

    def test_the_cold_path_builds_parsers_under_the_guard(self):
        run = self.runs["cold pyparsing_mathtext"]
        self.assertEqual(run.exit_code, 0, run.stderr[-1500:])
        self.assertIn(EVIDENCE["pyparsing_mathtext"], run.stdout)
        self.assertEqual(png_size(os.path.join(run.work, "plot-light.png")), (3200, 1800))

    def test_data_mode_library_internals_pass(self):
        for name in DATA_CASES:
            run = self.runs["data " + name]
            with self.subTest(case=name):
                self.assertEqual(run.exit_code, 0, run.stderr[-1500:])
                self.assertIsNone(run.result["refusal"])
        self.assertEqual(self.runs["data chained_assignment"].out_csv, b"a,b\n1,2\n2,4\n")
        self.assertEqual(self.runs["data read_csv"].out_csv, b"a,b,threads\n1,2,1\n3,4,1\n")

    def test_plotly_builds_its_validators_under_the_guard(self):
        for name in ("figure warm", "figure cold"):
            run = self.runs[name]
            with self.subTest(run=name):
                self.assertEqual(run.exit_code, 0, run.stderr[-1500:])
                self.assertIsNone(run.result["refusal"])
                self.assertIn("VALIDATORS True", run.stdout)

    def test_each_attack_is_refused_and_leaves_the_outside_untouched(self):
        for name, a in ATTACKS.items():
            run = self.runs["attack " + name]
            outside, before = self.outside[name]
            with self.subTest(attack=name):
                self.assertEqual(run.exit_code, REFUSED, run.stderr[-1500:])
                self.assertEqual(run.result["refusal"],
                                 {"rule": a["rule"], "line": attempt_line(a["source"])})
                self.assertEqual(self.after[name], before)
                with open(os.path.join(outside, "keep.txt")) as f:
                    self.assertEqual(f.read(), "OUTSIDE-SECRET-4417")
                if a["leak"]:
                    self.assertNotIn(a["leak"], run.stdout + run.stderr)
                if isinstance(a["check"], tuple):
                    self.assertNotIn(a["check"][1], run.files)
        record = self.runs["attack record_overwritten"]
        self.assertEqual(record.result["reason"], "guard_refused")
        self.assertIn("result.json", self.runs["attack record_moved"].files)
        self.assertNotIn("moved.json", self.runs["attack record_moved"].files)
        self.assertNotIn("evil_helper", self.runs["attack import_plot_written_module"].stdout)

    def test_controls_show_the_attacks_are_real(self):
        for name, a in ATTACKS.items():
            outside, (code, stdout, work) = self.controls[name]
            with self.subTest(attack=name):
                if name in ("record_overwritten", "record_moved"):
                    continue    # plain Python has no record to protect
                if isinstance(a["check"], tuple):
                    self.assertTrue(os.path.exists(os.path.join(work, a["check"][1])), (name, code))
                elif a["check"] == "keep.txt":
                    self.assertFalse(os.path.exists(os.path.join(outside, "keep.txt")))
                elif a["check"]:
                    self.assertTrue(os.path.exists(os.path.join(outside, a["check"])),
                                    (name, code, stdout))
                else:
                    self.assertIn(a["leak"], stdout, (name, code))


if __name__ == "__main__":
    unittest.main()
