"""PlotGuard's two decided calls (sandbox/harness/localcalls.py), each from the real library call.

Renders: cairosvg reads svg2png(url=<a file in the work dir>) and an image embedded as a data:
URL through urllib (anyplot's pygal files save an SVG and convert it by its name, or embed a
PNG heatmap); a file that tries rsvg-convert first and falls back to cairosvg when it is missing
renders. Warm (the plot zygote's preload) and cold.

Refusals, each shown to really run (a plain-Python control does what the guard refused): a
file: URL outside the work dir (rule `open`, the secret stays unread), an http URL at a loopback
listener (rule `network`, no connection), a data: Request turned into http after it was built
(refused at http.client, no connection), a program that exists (rule `process`, its marker file
stays absent even though the plot swallows the error), Popen with its own env, and PATH changed
by the plot (rule `environment`).
"""

import os
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness_util import cleanup, run_forked, run_harness, run_many  # noqa: E402
from test_libraries import Listener, attempt_line, has_content, png_size  # noqa: E402

PLOT_KW = {"argv": ["--plot", "plot.py"], "snippet_name": "plot.py", "env": {"ANYPLOT_THEME": "light"}}

# An SVG with a 16x16 PNG embedded as data:, written in the work dir and converted by its name.
SVG_BY_URL = '''\
import base64, io, os
import cairosvg
import numpy as np
from PIL import Image
THEME = os.getenv("ANYPLOT_THEME", "light")
tile = Image.fromarray((np.indices((16, 16)).sum(axis=0) % 2 * 255).astype("uint8"))
buf = io.BytesIO()
tile.save(buf, format="PNG")
href = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
svg = ('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
       'width="600" height="600"><rect width="600" height="600" fill="#FAF8F1"/>'
       '<circle cx="300" cy="300" r="200" fill="#009E73"/>'
       '<image x="50" y="50" width="160" height="160" xlink:href="%s"/></svg>' % href)
with open(f"plot-{THEME}.svg", "w") as f:
    f.write(svg)
cairosvg.svg2png(url=f"plot-{THEME}.svg", write_to=f"plot-{THEME}.png", output_width=2400, output_height=2400)
'''
# The catalogue's rsvg-convert attempt, then its fallback.
FALLBACK = '''\
import os, subprocess
import pygal
THEME = os.getenv("ANYPLOT_THEME", "light")
chart = pygal.Bar(width=2400, height=2400, js=[])
chart.add("a", [1, 3, 2])
chart.render_to_file(f"plot-{THEME}.svg")
try:
    subprocess.run(["rsvg-convert-not-here", "-o", f"plot-{THEME}.png", f"plot-{THEME}.svg"], check=True)
except (FileNotFoundError, subprocess.CalledProcessError):
    try:
        subprocess.run(["/opt/no/such/rsvg-convert", "-v"], check=True)
    except FileNotFoundError as exc:
        print("MISSING", exc.errno, exc.filename)
    import cairosvg
    cairosvg.svg2png(url=f"plot-{THEME}.svg", write_to=f"plot-{THEME}.png")
'''
READ_OUTSIDE = '''\
import urllib.request
print("GOT", urllib.request.urlopen("file://" + SECRET).read().decode())  # ATTEMPT
'''
HTTP = '''\
import urllib.request
print("GOT", urllib.request.urlopen(URL, timeout=5).read())  # ATTEMPT
'''
# Judged as data:, then sent as http: the request's own fields, which urllib dispatches on.
TYPE_SWAP = '''\
import urllib.request
req = urllib.request.Request("data:,x")
req.type, req.host = "http", HOST
print("GOT", urllib.request.urlopen(req, timeout=5).read())  # ATTEMPT
'''
EXEC_PRESENT = '''\
import subprocess
try:
    subprocess.run(["sh", "-c", "echo ran > " + MARKER])  # ATTEMPT
except Exception:
    pass
print("AFTER")
'''
EXEC_ENV = '''\
import subprocess
subprocess.run(["rsvg-convert-not-here"], env={"PATH": "/tmp"})  # ATTEMPT
'''
SET_PATH = '''\
import os
os.environ["PATH"] = os.getcwd()  # ATTEMPT
'''


class LocalCalls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.net = Listener()
        cls.outside = tempfile.mkdtemp(prefix="plotq-outside-")
        cls.secret = os.path.join(cls.outside, "secret.txt")
        with open(cls.secret, "w") as f:
            f.write("plotq-secret-42")
        cls.marker = os.path.join(cls.outside, "marker")
        host = "127.0.0.1:%d" % cls.net.port
        cls.sources = {
            "svg_by_url": SVG_BY_URL, "fallback": FALLBACK,
            "read_outside": READ_OUTSIDE.replace("SECRET", repr(cls.secret)),
            "http": HTTP.replace("URL", repr(cls.net.url("x"))),
            "type_swap": TYPE_SWAP.replace("HOST", repr(host)),
            "exec_present": EXEC_PRESENT.replace("MARKER", repr(cls.marker)),
            "exec_env": EXEC_ENV, "set_path": SET_PATH,
        }
        before = cls.net.connections()
        done = run_many({
            "warm": lambda: run_forked({k: (v, PLOT_KW) for k, v in cls.sources.items()}, mode="plot"),
            **{"cold " + k: (lambda s=cls.sources[k]: run_harness(s, **PLOT_KW))
               for k in ("svg_by_url", "fallback", "type_swap", "exec_present")},
        })
        cls.guarded_connections = cls.net.connections() - before
        cls.marker_after_guarded = os.path.exists(cls.marker)
        cls.warm = done["warm"]
        cls.cold = {k[5:]: v for k, v in done.items() if k.startswith("cold ")}
        # Controls, after the guarded runs: plain Python does what the guard refused.
        cls.controls = cls.net.controls(cls.sources, ("read_outside", "http", "type_swap", "exec_present"))

    @classmethod
    def tearDownClass(cls):
        cls.net.close()
        cleanup([r.work for r in list(cls.warm.values()) + list(cls.cold.values())]
                + [c[2] for c in cls.controls.values()] + [cls.outside])

    def runs(self, name):
        return [self.warm[name]] + ([self.cold[name]] if name in self.cold else [])

    def check_refused(self, name, rule):
        for run in self.runs(name):
            self.assertEqual(run.exit_code, 31, run.stderr[-2000:])
            self.assertEqual(run.result["refusal"], {"rule": rule, "line": attempt_line(self.sources[name])})
            self.assertNotIn("GOT", run.stdout)

    def test_cairosvg_reads_its_svg_and_a_data_image(self):
        for run in self.runs("svg_by_url"):
            self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
            png = os.path.join(run.work, "plot-light.png")
            self.assertEqual(png_size(png), (2400, 2400))
            self.assertTrue(has_content(png))

    def test_a_missing_program_is_missing_and_the_file_falls_back(self):
        for run in self.runs("fallback"):
            self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
            self.assertIn("MISSING 2 /opt/no/such/rsvg-convert", run.stdout)
            self.assertEqual(png_size(os.path.join(run.work, "plot-light.png")), (2400, 2400))

    def test_a_file_url_outside_the_work_dir_is_refused(self):
        self.check_refused("read_outside", "open")
        self.assertNotIn("plotq-secret-42", self.warm["read_outside"].stdout)
        code, stdout, _, _ = self.controls["read_outside"]
        self.assertEqual(code, 0)
        self.assertIn("GOT plotq-secret-42", stdout)

    def test_http_is_refused_before_any_connection(self):
        self.check_refused("http", "network")
        self.assertEqual(self.guarded_connections, 0)
        self.assertGreaterEqual(self.controls["http"][3], 1)

    def test_a_data_request_turned_into_http_is_refused_at_the_connection(self):
        self.check_refused("type_swap", "network")
        self.assertEqual(self.guarded_connections, 0)
        self.assertGreaterEqual(self.controls["type_swap"][3], 1)   # unguarded, it connects

    def test_a_program_that_exists_is_refused_and_never_runs(self):
        self.check_refused("exec_present", "process")
        self.assertIn("AFTER", self.warm["exec_present"].stdout)   # swallowed, still refused
        self.assertFalse(self.marker_after_guarded)
        code, stdout, _, _ = self.controls["exec_present"]
        self.assertEqual(code, 0, stdout)
        self.assertTrue(os.path.exists(self.marker))

    def test_popen_with_its_own_env_is_refused(self):
        self.check_refused("exec_env", "process")

    def test_the_plot_may_not_change_path(self):
        self.check_refused("set_path", "environment")


if __name__ == "__main__":
    unittest.main(verbose=2)
