"""plotnine, altair, pygal and lets-plot in plot mode under PlotGuard (sandbox/harness/plotlibs.py).

Renders: each library saves the way the catalogue's files do (plot.save, chart.save through
vl-convert with a PIL pad and an HTML copy, render_to_png through cairosvg, ggsave with path="."
and into its default lets-plot-images/ folder) in a warm plot child (the plot zygote's preload)
and cold, to its exact canvas and with content. Each pre-arm part of plotlibs has a case built
from the real library call, and a cold control that names the library another way (so the part
does not run) and shows what the guard then refuses; warm, the zygote's preload covers it.

Security: vl-convert fetches a spec's data URLs in native code (no audit event). A chart whose
data URL points at a loopback listener this test runs is refused with rule `network` and the
listener sees no connection; the same plot under plain Python (the control) does connect.
vl_convert.register_font_directory outside the work dir (a native read) is refused.
The kernel side (no network, no exec, hidden paths, with the native engines loaded) is
tests/sandbox/test_plotlibs.cpp.
"""

import os
import socket
import struct
import sys
import tempfile
import textwrap
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import cleanup, run_forked, run_harness, run_many, run_plain  # noqa: E402

PLOT_ARGV = ["--plot", "plot.py"]
THEME = {"ANYPLOT_THEME": "light"}
PLOT_KW = {"argv": PLOT_ARGV, "snippet_name": "plot.py", "env": THEME}

PLOTNINE = '''\
import os
import numpy as np
import pandas as pd
from plotnine import aes, geom_density_2d, geom_point, geom_smooth, ggplot, labs, theme, element_rect
THEME = os.getenv("ANYPLOT_THEME", "light")
PAGE_BG = "#FAF8F1" if THEME == "light" else "#1A1A17"
SHIFT = 3.0
rng = np.random.default_rng(7)
df = pd.DataFrame({"x": rng.uniform(0, 10, 120), "y": rng.normal(0, 1, 120)})
plot = (ggplot(df, aes(x="x", y="y + SHIFT")) + geom_point(color="#009E73")
        + geom_smooth(method="lm") + geom_density_2d()
        + labs(title="plotnine") + theme(figure_size=(8, 4.5), plot_background=element_rect(fill=PAGE_BG)))
plot.save(f"plot-{THEME}.png", dpi=400, width=8, height=4.5, units="in", verbose=False)
'''
ALTAIR = '''\
import os
import sys
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
import altair as alt
import numpy as np
import pandas as pd
from PIL import Image
THEME = os.getenv("ANYPLOT_THEME", "light")
PAGE_BG = "#FAF8F1" if THEME == "light" else "#1A1A17"
rng = np.random.default_rng(7)
df = pd.DataFrame({"x": rng.uniform(0, 10, 80), "y": rng.normal(0, 1, 80)})
chart = (alt.Chart(df).mark_circle(size=120, color="#009E73").encode(x="x:Q", y="y:Q")
         .properties(width=620, height=320, background=PAGE_BG, title="altair"))
chart.save(f"plot-{THEME}.png", scale_factor=4.0)
TW, TH = 3200, 1800
_img = Image.open(f"plot-{THEME}.png").convert("RGB")
_w, _h = _img.size
if _w < TW or _h < TH:
    _canvas = Image.new("RGB", (TW, TH), PAGE_BG)
    _canvas.paste(_img, ((TW - _w) // 2, (TH - _h) // 2))
    _canvas.save(f"plot-{THEME}.png")
chart.save(f"plot-{THEME}.html")
'''
PYGAL = '''\
import os
import sys
sys.path.pop(0)
import numpy as np
import pygal
from pygal.style import Style
from sklearn.decomposition import PCA
THEME = os.getenv("ANYPLOT_THEME", "light")
PAGE_BG = "#FAF8F1" if THEME == "light" else "#1A1A17"
points = PCA(n_components=2).fit_transform(np.random.default_rng(7).normal(size=(40, 4)))
style = Style(background=PAGE_BG, plot_background=PAGE_BG, colors=("#009E73",), title_font_size=66)
chart = pygal.XY(width=2400, height=2400, style=style, title="pygal", stroke=False, js=[])
chart.add("pca", [(float(a), float(b)) for a, b in points])
chart.render_to_png(f"plot-{THEME}.png")
with open(f"plot-{THEME}.html", "wb") as f:
    f.write(chart.render())
'''
LETSPLOT = '''\
import os
import numpy as np
import pandas as pd
from lets_plot import LetsPlot, aes, geom_point, ggplot, ggsize, labs
from lets_plot.export import ggsave
LetsPlot.setup_html()
THEME = os.getenv("ANYPLOT_THEME", "light")
rng = np.random.default_rng(7)
df = pd.DataFrame({"x": rng.uniform(0, 10, 60), "y": rng.normal(0, 1, 60)})
plot = ggplot(df, aes("x", "y")) + geom_point(color="#009E73", size=4) + labs(title="lets-plot") + ggsize(800, 450)
ggsave(plot, f"plot-{THEME}.png", path=".", scale=4)
ggsave(plot, f"plot-{THEME}.html", path=".")
'''
# ggsave's default folder, then the catalogue's move into the work dir (small: the folder is the point)
LETSPLOT_FOLDER = '''\
import os
import shutil
from lets_plot import aes, geom_point, ggplot, ggsize
from lets_plot.export import ggsave
THEME = os.getenv("ANYPLOT_THEME", "light")
plot = ggplot({"x": [1, 2, 3], "y": [3, 1, 2]}, aes("x", "y")) + geom_point(size=6) + ggsize(400, 225)
ggsave(plot, f"plot-{THEME}.png", scale=2)
if os.path.exists(f"lets-plot-images/plot-{THEME}.png"):
    shutil.move(f"lets-plot-images/plot-{THEME}.png", f"plot-{THEME}.png")
'''
# Plot code's own calls of the allowed frame callers get names and bools, never a frame.
FRAME_CALLERS = '''\
import typing_extensions
from statsmodels.tools._test_runner import PytestTester
name = typing_extensions._caller(1)
deep = typing_extensions._caller(40)
tester = PytestTester()
values = (name, deep, tester.package_name, typing_extensions._has_generic_or_protocol_as_origin())
assert all(v is None or type(v) in (str, bool) for v in values), values
print("FRAME-CALLERS", values)
'''
# Controls: the same calls with the library imported under a name plotlibs does not look for.
PLOTNINE_HIDDEN = '''\
import pandas as pd
p9 = __import__("plot" + "nine")
p9.ggplot(pd.DataFrame({"x": [1, 2]}), p9.aes("x"))
'''
PYGAL_HIDDEN = '''\
__import__("cairo" + "svg")
'''


def vl_spec_plot(url):
    return textwrap.dedent('''\
        import altair as alt
        chart = alt.Chart(alt.UrlData(URL)).mark_point().encode(x="a:Q", y="b:Q")
        chart.save("plot-light.png")  # ATTEMPT
        ''').replace("URL", repr(url))


FONT_DIR_PLOT = '''\
import vl_convert
vl_convert.register_font_directory(FONTS)  # ATTEMPT
print("REGISTERED")
'''


def png_size(path):
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except FileNotFoundError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def has_content(path):
    """More than one colour in a meaningful share of the pixels: not a blank canvas."""
    from PIL import Image
    with Image.open(path) as image:
        small = image.convert("RGB").resize((160, 90))
    colours = small.getcolors(160 * 90)
    top = max(count for count, _ in colours)
    return top < 0.995 * 160 * 90


def attempt_line(source):
    return next(n for n, line in enumerate(source.splitlines(), 1) if "# ATTEMPT" in line)


class Listener:
    """A loopback HTTP listener that counts connections and answers a two-row CSV."""

    def __init__(self):
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.count = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://127.0.0.1:%d/%s" % (self.port, path)

    def serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with self.lock:
                self.count += 1
            try:
                conn.settimeout(5)
                conn.recv(4096)
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/csv\r\n\r\na,b\n1,2\n3,4\n")
            except OSError:
                pass
            finally:
                conn.close()

    def connections(self):
        with self.lock:
            return self.count

    def controls(self, sources, names):
        """Each named source under plain Python, one at a time: {name: (exit code, stdout, work
        dir, connections it made to this listener)}."""
        out = {}
        for name in names:
            before = self.connections()
            code, stdout, work = run_plain(sources[name])
            out[name] = (code, stdout, work, self.connections() - before)
        return out

    def close(self):
        self.server.close()


class Libraries(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.net = Listener()
        cls.fonts = tempfile.mkdtemp(prefix="plotq-outside-fonts-")
        cls.sources = {
            "plotnine": PLOTNINE, "altair": ALTAIR, "pygal": PYGAL, "letsplot": LETSPLOT,
            "letsplot_folder": LETSPLOT_FOLDER, "frame_callers": FRAME_CALLERS,
            "plotnine_hidden": PLOTNINE_HIDDEN, "pygal_hidden": PYGAL_HIDDEN,
            "vl_network": vl_spec_plot(cls.net.url("data.csv")),
            "vl_font_dir": FONT_DIR_PLOT.replace("FONTS", repr(cls.fonts)),
        }
        warm_jobs = {name: (source, PLOT_KW) for name, source in cls.sources.items()}
        cold = {name: (lambda s=cls.sources[name]: run_harness(s, **PLOT_KW))
                for name in ("plotnine", "pygal", "altair", "vl_network", "plotnine_hidden",
                             "pygal_hidden")}
        before = cls.net.connections()
        done = run_many({"warm": lambda: run_forked(warm_jobs, mode="plot"),
                         **{"cold " + k: v for k, v in cold.items()}})
        cls.guarded_connections = cls.net.connections() - before
        cls.warm = done["warm"]
        cls.cold = {k[5:]: v for k, v in done.items() if k.startswith("cold ")}
        # Controls under plain Python (no guard), after the guarded runs: they must do what the
        # guard refused.
        cls.controls = cls.net.controls(cls.sources, ("vl_network", "vl_font_dir"))

    @classmethod
    def tearDownClass(cls):
        cls.net.close()
        cleanup([r.work for r in list(cls.warm.values()) + list(cls.cold.values())]
                + [c[2] for c in cls.controls.values()] + [cls.fonts])

    def check_render(self, run, size, extra=()):
        self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
        self.assertEqual(run.result["reason"], "ok")
        png = os.path.join(run.work, "plot-light.png")
        self.assertEqual(png_size(png), size)
        self.assertTrue(has_content(png), "blank render")
        for name in extra:
            self.assertIn(name, run.files)

    # --- renders, the way the catalogue saves ------------------------------------------------

    def test_plotnine_save(self):
        # aes evaluates "y + SHIFT" in the plot's namespace (Environment.capture), geom_smooth
        # and geom_density_2d load statsmodels (and joblib) under the guard
        self.check_render(self.warm["plotnine"], (3200, 1800))
        self.check_render(self.cold["plotnine"], (3200, 1800))

    def test_altair_save_through_vl_convert(self):
        for run in (self.warm["altair"], self.cold["altair"]):
            self.check_render(run, (3200, 1800), extra=("plot-light.html",))

    def test_pygal_render_to_png_through_cairosvg(self):
        # scikit-learn (threadpoolctl, joblib) imported under the guard too
        for run in (self.warm["pygal"], self.cold["pygal"]):
            self.check_render(run, (2400, 2400), extra=("plot-light.html",))

    def test_lets_plot_ggsave(self):
        self.check_render(self.warm["letsplot"], (3200, 1800), extra=("plot-light.html",))

    def test_lets_plot_default_folder(self):
        run = self.warm["letsplot_folder"]
        self.check_render(run, (800, 450))
        self.assertIn("lets-plot-images", run.files)

    # --- the pre-arm parts, and what the guard refuses without them ----------------------------

    def test_frame_callers_answer_names_not_frames(self):
        run = self.warm["frame_callers"]
        self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
        self.assertIn("FRAME-CALLERS", run.stdout)

    def test_plotnine_without_its_part_finds_no_frame(self):
        # cold: the part runs only for a plot that names plotnine; warm: the zygote preloaded it
        self.assertEqual(self.warm["plotnine_hidden"].exit_code, 0, self.warm["plotnine_hidden"].stderr)
        run = self.cold["plotnine_hidden"]
        self.assertEqual(run.exit_code, 30, run.stderr[-2000:])
        self.assertEqual(run.result["error"], {"class": "ValueError", "line": 3})

    def test_cairocffi_imported_under_the_guard_is_refused(self):
        # cairocffi's find_library runs ldconfig (subprocess first opens /dev/null read-write):
        # what plotlibs imports before arming for pygal (cold; warm, the zygote preloaded it)
        self.assertEqual(self.warm["pygal_hidden"].exit_code, 0, self.warm["pygal_hidden"].stderr)
        run = self.cold["pygal_hidden"]
        self.assertEqual(run.exit_code, 31, run.stderr[-2000:])
        self.assertEqual(run.result["refusal"], {"rule": "open", "line": 1})

    # --- security -------------------------------------------------------------------------------

    def test_vl_convert_cannot_reach_the_network(self):
        source = self.sources["vl_network"]
        for run in (self.warm["vl_network"], self.cold["vl_network"]):
            self.assertEqual(run.exit_code, 31, run.stderr[-2000:])
            self.assertEqual(run.result["refusal"], {"rule": "network", "line": attempt_line(source)})
            self.assertNotIn("plot-light.png", run.files)
        self.assertEqual(self.guarded_connections, 0)
        code, stdout, _, connections = self.controls["vl_network"]
        self.assertEqual(code, 0, stdout)
        self.assertGreaterEqual(connections, 1)     # unguarded, vl-convert fetched the URL

    def test_vl_convert_font_directory_outside_is_refused(self):
        source = self.sources["vl_font_dir"]
        run = self.warm["vl_font_dir"]
        self.assertEqual(run.exit_code, 31, run.stderr[-2000:])
        self.assertEqual(run.result["refusal"], {"rule": "listing", "line": attempt_line(source)})
        self.assertNotIn("REGISTERED", run.stdout)
        code, stdout, _, _ = self.controls["vl_font_dir"]
        self.assertIn("REGISTERED", stdout)


if __name__ == "__main__":
    unittest.main()
