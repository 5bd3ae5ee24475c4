"""figurecapture.py: the figure capture that figure mode (under the armed guard) and the sweep's
bare mode (no guard) share. Run: cd tests/figure && ../../runtime/venv/bin/python -B -m unittest -v
test_figurecapture  (ctest figure.capture).

What is checked: a catalogue-style bokeh file (save, then Selenium and Chrome to screenshot its own
HTML, then PIL to pad the PNG) runs to the end bare and writes bokeh's json_item; under the guard
the same capture writes the document at save and export_png; the Selenium stand-in starts no
browser and reaches nothing (a loopback listener it is pointed at stays untouched); a plotly-only
plot does not pay bokeh's import; plotly's write_html after write_image keeps the figure; the
catalogue's wait for the browser (time.sleep while a stand-in driver is open) returns at once,
and time.sleep before the driver and after its quit sleeps.
"""
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
from harness_util import HARNESS_DIR, PYTHON, base_env, cleanup, run_harness  # noqa: E402

FIGURE_ARGV = ["--figure", "plot.py"]
LIGHT = {"ANYPLOT_THEME": "light"}

# The bare runner, as the figurecapture docstring tells bare mode to do it.
BARE_RUNNER = textwrap.dedent('''\
    import runpy, sys
    sys.path.insert(0, %r)
    import figurecapture
    figurecapture.install("plot-light.json", source=open("plot.py").read())
    sys.argv = ["plot.py"]
    runpy.run_path("plot.py", run_name="__main__")
    ''') % HARNESS_DIR

BOKEH_HEAD = textwrap.dedent('''\
    import io, os, time
    from pathlib import Path
    import numpy as np
    from bokeh.plotting import figure
    from bokeh.io import output_file, save
    THEME = os.getenv("ANYPLOT_THEME", "light")
    W, H = 4800, 2700
    p = figure(width=W, height=H, title="catalogue style", toolbar_location=None)
    p.scatter(np.arange(10), np.arange(10) ** 2, size=30)
    p.background_fill_color = "#1a1a1a" if THEME == "dark" else "#ffffff"
    ''')

# The catalogue's most common ending: save the HTML, screenshot it with Selenium, pad with PIL.
BOKEH_SELENIUM = BOKEH_HEAD + textwrap.dedent('''\
    output_file(f"plot-{THEME}.html")
    save(p)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from PIL import Image
    opts = Options()
    for arg in ("--headless=new", "--no-sandbox", f"--window-size={W},{H}"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(options=opts)
    inner_w, inner_h = driver.execute_script("return [window.innerWidth, window.innerHeight];")
    driver.set_window_size(W + (W - inner_w), H + (H - inner_h))
    driver.get(f"file://{Path(f'plot-{THEME}.html').resolve()}")
    driver.save_screenshot(f"plot-{THEME}.png")
    raw = driver.get_screenshot_as_png()
    driver.quit()
    img = Image.open(io.BytesIO(raw)).crop((0, 0, W, H))
    print("screenshot", img.size)
    ''')


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


class Listener:
    """A loopback TCP listener that counts connections (must stay at zero)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stop = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


def run_bare(source, env=None):
    work = tempfile.mkdtemp(prefix="plotq-capture-bare-")
    with open(os.path.join(work, "plot.py"), "w") as f:
        f.write(source)
    with open(os.path.join(work, "runner.py"), "w") as f:
        f.write(BARE_RUNNER)
    full_env = base_env(work)
    full_env.update(env or LIGHT)
    proc = subprocess.run([PYTHON, "-I", "runner.py"], cwd=work, env=full_env,
                          capture_output=True, timeout=120)
    return proc, work


def json_item_root(path):
    with open(path) as f:
        item = json.load(f)
    root = next(r for r in item["doc"]["roots"] if r["id"] == item["root_id"])
    return item, root


class FigureCapture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.works = []

    @classmethod
    def tearDownClass(cls):
        cleanup(cls.works)

    def test_bare_catalogue_bokeh_file_runs_to_the_end_and_writes_the_document(self):
        proc, work = run_bare(BOKEH_SELENIUM)
        self.works.append(work)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-2000:])
        item, root = json_item_root(os.path.join(work, "plot-light.json"))
        self.assertEqual(set(item), {"target_id", "root_id", "doc", "version"})
        self.assertEqual((root["attributes"]["width"], root["attributes"]["height"]), (4800, 2700))
        # The stand-in's screenshot follows the window size the file asked for (4800x2700 after
        # its own "browser chrome" compensation, which the stand-in answers with zero).
        self.assertEqual(png_size(os.path.join(work, "plot-light.png")), (4800, 2700))
        self.assertIn(b"screenshot (4800, 2700)", proc.stdout)
        self.assertFalse(os.path.exists(os.path.join(work, "plot-light.html")),
                         "save captures the document; no HTML page is written")

    def test_guarded_bokeh_save_and_export_png_write_the_document(self):
        save_only = BOKEH_HEAD + 'output_file(f"plot-{THEME}.html")\nsave(p)\n'
        export = BOKEH_HEAD + ('from bokeh.io import export_png\n'
                               'export_png(p, filename=f"plot-{THEME}.png")\n')
        for name, source in (("save", save_only), ("export_png", export)):
            with self.subTest(call=name):
                run = run_harness(source, argv=FIGURE_ARGV, snippet_name="plot.py", env=LIGHT)
                self.works.append(run.work)
                self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
                self.assertEqual(run.result["reason"], "ok")
                self.assertIsNone(run.result["refusal"])
                _, root = json_item_root(os.path.join(run.work, "plot-light.json"))
                self.assertEqual(root["name"], "Figure")
                self.assertNotIn("plot-light.png", run.files)

    def test_the_selenium_stand_in_starts_no_browser_and_reaches_nothing(self):
        listener = Listener()
        try:
            source = BOKEH_HEAD + textwrap.dedent('''\
                save(p)
                from selenium import webdriver
                from selenium.webdriver.chrome.options import Options
                from selenium.webdriver.common.by import By
                driver = webdriver.Chrome(options=Options())
                driver.get("http://127.0.0.1:%d/selenium")
                driver.find_element(By.CSS_SELECTOR, ".bk-Figure")
                import selenium, subprocess
                print("stand-in", selenium.__version__, type(driver).__module__)
                driver.quit()
                ''') % listener.port
            run = run_harness(source, argv=FIGURE_ARGV, snippet_name="plot.py", env=LIGHT)
            self.works.append(run.work)
            self.assertEqual(run.exit_code, 0, run.stderr[-2000:])
            self.assertIn("stand-in 0+plotq.stand-in figurecapture", run.stdout)
            self.assertIn("plot-light.json", run.files)
            # Bare, where nothing else would stop a browser or a connection, the same calls
            # reach nothing either: the stand-in itself opens nothing.
            proc, work = run_bare(source)
            self.works.append(work)
            self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-2000:])
        finally:
            listener.close()
        self.assertEqual(listener.connections, 0)

    def test_waits_for_the_stand_in_browser_return_at_once(self):
        source = BOKEH_HEAD + textwrap.dedent('''\
            output_file(f"plot-{THEME}.html")
            save(p)
            from time import sleep
            from selenium import webdriver
            def slept(wait, seconds):
                start = time.monotonic()
                wait(seconds)
                return time.monotonic() - start
            before = slept(time.sleep, 0.3)
            driver = webdriver.Chrome()
            driver.get(f"file://{Path(f'plot-{THEME}.html').resolve()}")
            waits = slept(time.sleep, 30) + slept(sleep, 30)
            try:
                time.sleep(-1)
            except ValueError:
                print("negative refused")
            driver.quit()
            after = slept(time.sleep, 0.3)
            with webdriver.Chrome() as second:
                inside = slept(time.sleep, 30)
            closed = slept(time.sleep, 0.3)
            print("SLEPT", before >= 0.3, waits < 5, after >= 0.3, inside < 5, closed >= 0.3)
            ''')
        run = run_harness(source, argv=FIGURE_ARGV, snippet_name="plot.py", env=LIGHT)
        self.works.append(run.work)
        proc, work = run_bare(source)
        self.works.append(work)
        for code, stdout in ((run.exit_code, run.stdout), (proc.returncode, proc.stdout.decode())):
            self.assertEqual(code, 0, stdout[-2000:])
            self.assertIn("negative refused", stdout)
            self.assertIn("SLEPT True True True True True", stdout)

    def test_bare_mode_command_line_runs_the_file_as_python_would(self):
        # figurecapture.py PLOT OUTPUT, as the docstring gives bare mode: the file runs as
        # __main__ with its own folder first on sys.path, and the capture writes the document.
        work = tempfile.mkdtemp(prefix="plotq-capture-cli-")
        self.works.append(work)
        with open(os.path.join(work, "plot.py"), "w") as f:
            f.write(BOKEH_SELENIUM + textwrap.dedent('''\
                import sys
                print("name", __name__, "path0", sys.path[0] == os.getcwd(), sys.argv)
                '''))
        env = base_env(work)
        env.update(LIGHT)
        proc = subprocess.run([PYTHON, "-I", os.path.join(HARNESS_DIR, "figurecapture.py"), "plot.py",
                               "plot-light.json"], cwd=work, env=env, capture_output=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-2000:])
        self.assertIn(b"name __main__ path0 True ['plot.py']", proc.stdout)
        _, root = json_item_root(os.path.join(work, "plot-light.json"))
        self.assertEqual(root["attributes"]["width"], 4800)

    def test_a_plotly_only_plot_does_not_import_bokeh(self):
        code = textwrap.dedent('''\
            import sys
            sys.path.insert(0, %r)
            import figurecapture
            print(figurecapture.install("plot-light.json", source="import plotly.express as px"))
            print("bokeh" in sys.modules, "selenium" in sys.modules)
            ''') % HARNESS_DIR
        proc = subprocess.run([PYTHON, "-I", "-c", code], capture_output=True, timeout=120,
                              cwd=tempfile.gettempdir())
        self.assertEqual(proc.returncode, 0, proc.stderr.decode()[-2000:])
        self.assertEqual(proc.stdout.decode().split("\n")[:2], ["['plotly']", "False False"])

    def test_plotly_write_html_after_write_image_keeps_the_figure(self):
        source = textwrap.dedent('''\
            import plotly.graph_objects as go
            fig = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
            fig.write_image("plot-light.png", width=1600, height=900, scale=3)
            fig.write_html("plot-light.html", include_plotlyjs="cdn")
            ''')
        for name, runner in (("bare", lambda: run_bare(source)),
                             ("guarded", lambda: run_harness(source, argv=FIGURE_ARGV,
                                                             snippet_name="plot.py", env=LIGHT))):
            with self.subTest(mode=name):
                out = runner()
                work = out[1] if name == "bare" else out.work
                self.works.append(work)
                code = out[0].returncode if name == "bare" else out.exit_code
                self.assertEqual(code, 0)
                with open(os.path.join(work, "plot-light.json")) as f:
                    layout = json.load(f)["layout"]
                self.assertEqual((layout["width"], layout["height"]), (1600, 900))
                self.assertFalse(os.path.exists(os.path.join(work, "plot-light.html")))


if __name__ == "__main__":
    unittest.main()
