"""Runs every file of tests/catalogue bare, in both themes, and checks what it drew.

    runtime/venv/bin/python tests/catalogue/bare_check.py [--library L[,L]] [--spec S[,S]] [--themes light,dark]

Each file runs as `python plot.py` in a fresh temp dir (cwd, HOME and TMPDIR = that dir), env
ANYPLOT_THEME and MPLBACKEND=Agg, no sandbox and no guard: what the sweep's bare mode does, without
plotq. Checks per file and theme:
- plot-mode libraries (matplotlib, seaborn, plotnine, altair, pygal, letsplot): exit 0, a PNG
  `plot-<theme>.png` of the size the README's table names (exactly 3200x1800 or 2400x2400, or the
  off-canvas files' own sizes), not one flat colour (at least 0.5 % of its pixels differ from the
  most common colour), and the light and dark PNGs differ (the theme reached the plot);
- figure libraries (plotly, bokeh): they save through kaleido or Selenium, which the runtime does
  not have, so the run stops at the first save call (write_image / show / save / export_png) and
  the figure's declared canvas is checked (plotly: width x height x scale; bokeh: the figure's
  width x height). Selenium is stubbed only so that its import does not end the run before that;
- fail-* files: the exit and the class the README names.
Exit 1 if any check failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from PIL import Image, ImageStat

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS = os.path.join(HERE, "plots")
FIGURE_LIBRARIES = ("plotly", "bokeh")
CANVASES = ((3200, 1800), (2400, 2400))
# The README's table: files whose PNG is off canvas on purpose, with their size.
OFF_CANVAS = {"canvas-off/matplotlib": (800, 600), "canvas-off-tight/seaborn": (3972, 2413)}
# fail-*: (non-zero exit?, the last traceback's class or "no_output").
FAILS = {"fail-attribute/matplotlib": "AttributeError",
         "fail-missing-library/matplotlib": "ModuleNotFoundError",
         "fail-value-error/seaborn": "ValueError",
         "fail-no-output/matplotlib": "no_output"}

# Runs plot.py up to its first save call and writes what that call was asked to draw to
# capture.json, then ends the run with exit 0 (what follows the save needs a browser).
CAPTURE = r'''
import json, os, runpy, sys, types

class _Saved(BaseException):
    pass

def _done(record):
    with open("capture.json", "w") as f:
        json.dump(record, f)
    raise _Saved()

lib = sys.argv[1]
if lib == "plotly":
    import plotly.basedatatypes as bd
    import plotly.io as pio

    def write_image(fig, file=None, format=None, scale=None, width=None, height=None, **kw):
        layout = fig.to_dict().get("layout", {}) if hasattr(fig, "to_dict") else fig.get("layout", {})
        w = width or layout.get("width")
        h = height or layout.get("height")
        s = scale or 1
        _done({"call": "write_image", "file": str(file), "width": w and w * s, "height": h and h * s,
               "traces": len(fig.data) if hasattr(fig, "data") else None})

    def show(fig, *a, **kw):
        _done({"call": "show", "width": None, "height": None})

    bd.BaseFigure.write_image = lambda self, *a, **k: write_image(self, *a, **k)
    bd.BaseFigure.show = lambda self, *a, **k: show(self, *a, **k)
    pio.write_image = write_image
    pio.show = show
else:
    import bokeh.io
    import bokeh.plotting
    from bokeh.io import curdoc

    def _size(obj):
        obj = obj if obj is not None else (curdoc().roots[0] if curdoc().roots else None)
        return {"width": getattr(obj, "width", None), "height": getattr(obj, "height", None),
                "renderers": len(getattr(obj, "renderers", []) or [])}

    def save(obj=None, filename=None, *a, **kw):
        _done(dict(_size(obj), call="save"))

    def export_png(obj=None, *a, filename=None, **kw):
        _done(dict(_size(obj), call="export_png", file=filename))

    def show(obj=None, *a, **kw):
        _done(dict(_size(obj), call="show"))

    for mod in (bokeh.io, bokeh.plotting):
        for name, fn in (("save", save), ("export_png", export_png), ("show", show)):
            if hasattr(mod, name):
                setattr(mod, name, fn)
    # Selenium is not in the runtime: a stub, so that the file's import reaches its save call.
    for name in ("selenium", "selenium.webdriver", "selenium.webdriver.chrome",
                 "selenium.webdriver.chrome.options", "selenium.webdriver.common",
                 "selenium.webdriver.common.by"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["selenium"].webdriver = sys.modules["selenium.webdriver"]
    sys.modules["selenium.webdriver.chrome.options"].Options = type("Options", (), {})
    sys.modules["selenium.webdriver"].Chrome = lambda *a, **k: None

sys.argv = ["plot.py"]
try:
    runpy.run_path("plot.py", run_name="__main__")
except _Saved:
    sys.exit(0)
print("plot.py ended without a save call", file=sys.stderr)
sys.exit(5)
'''


def files(libraries, specs):
    out = []
    for spec in sorted(os.listdir(PLOTS)):
        folder = os.path.join(PLOTS, spec, "implementations", "python")
        if not os.path.isdir(folder) or (specs and spec not in specs):
            continue
        for name in sorted(os.listdir(folder)):
            lib = name[:-3]
            if name.endswith(".py") and (not libraries or lib in libraries):
                out.append((spec, lib, os.path.join(folder, name)))
    return out


def last_traceback_class(stderr):
    lines = [line for line in stderr.strip().splitlines() if line and not line.startswith(" ")]
    if not lines:
        return None
    return lines[-1].split(":", 1)[0].rsplit(".", 1)[-1]


def content_share(img):
    """Share of pixels that differ from the most common colour (0 for a flat image)."""
    small = img.convert("RGB")
    colors = small.getcolors(maxcolors=small.width * small.height)
    top = max(count for count, _ in colors)
    return 1 - top / (small.width * small.height)


def run(path, lib, theme, python, timeout):
    work = tempfile.mkdtemp(prefix="plotq-cat-")
    try:
        shutil.copy(path, os.path.join(work, "plot.py"))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTHON", "PLOTQ_", "ANYPLOT_")) and k != "MPLBACKEND"}
        env.update(HOME=work, TMPDIR=work, ANYPLOT_THEME=theme, MPLBACKEND="Agg")
        argv = [python, "plot.py"]
        if lib in FIGURE_LIBRARIES:
            with open(os.path.join(work, "capture.py"), "w") as f:
                f.write(CAPTURE)
            argv = [python, "capture.py", lib]
        proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
        out = {"exit": proc.returncode, "stderr": proc.stderr[-2000:], "files": sorted(os.listdir(work))}
        png = os.path.join(work, "plot-%s.png" % theme)
        if lib in FIGURE_LIBRARIES:
            cap = os.path.join(work, "capture.json")
            if os.path.exists(cap):
                with open(cap) as f:
                    out["capture"] = json.load(f)
        elif os.path.exists(png):
            with Image.open(png) as img:
                out["size"] = img.size
                out["content"] = content_share(img)
                out["mean"] = ImageStat.Stat(img.convert("L")).mean[0]
            with open(png, "rb") as f:
                out["bytes"] = f.read()
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check(key, lib, theme, r):
    """The problems with one run (empty: it passed)."""
    problems = []
    if key in FAILS:
        want = FAILS[key]
        if want == "no_output":
            if r["exit"] != 0 or "size" in r:
                problems.append("want exit 0 without a PNG, got exit %d size %s" % (r["exit"], r.get("size")))
        elif r["exit"] == 0 or last_traceback_class(r["stderr"]) != want:
            problems.append("want %s, got exit %d %s" % (want, r["exit"], last_traceback_class(r["stderr"])))
        return problems
    if r["exit"] != 0:
        return ["exit %d: %s" % (r["exit"], r["stderr"][-600:])]
    if lib in FIGURE_LIBRARIES:
        cap = r.get("capture")
        if not cap:
            return ["no save call reached"]
        size = (cap.get("width"), cap.get("height"))
        # subplots-basic/plotly declares no size: the figure renderer's default canvas draws it.
        if size != (None, None) and size not in CANVASES:
            problems.append("declared canvas %sx%s" % size)
        return problems
    if "size" not in r:
        return ["no plot-%s.png (files: %s)" % (theme, r["files"])]
    want = OFF_CANVAS.get(key)
    if want and tuple(r["size"]) != want:
        problems.append("off-canvas size %dx%d, want %dx%d" % (r["size"] + want))
    if not want and tuple(r["size"]) not in CANVASES:
        problems.append("size %dx%d is not a canvas" % r["size"])
    if r["content"] < 0.005:
        problems.append("flat: %.4f of the pixels differ from the background" % r["content"])
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", default="")
    ap.add_argument("--spec", default="")
    ap.add_argument("--themes", default="light,dark")
    ap.add_argument("--python", default=os.path.join(HERE, "..", "..", "runtime", "venv", "bin", "python"))
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    libraries = set(filter(None, a.library.split(",")))
    specs = set(filter(None, a.spec.split(",")))
    themes = a.themes.split(",")
    failed = 0
    for spec, lib, path in files(libraries, specs):
        key = "%s/%s" % (spec, lib)
        runs = {t: run(path, lib, t, os.path.abspath(a.python), a.timeout) for t in themes}
        for theme, r in runs.items():
            problems = check(key, lib, theme, r)
            what = (("%dx%d content %.3f mean %.0f" % (r["size"] + (r["content"], r["mean"])))
                    if "size" in r else json.dumps(r.get("capture")) if "capture" in r else "exit %d" % r["exit"])
            print("%-4s %-34s %-5s %s%s" % ("ok" if not problems else "FAIL", key, theme, what,
                                            "".join("\n       " + p for p in problems)))
            failed += bool(problems)
        pngs = [r.get("bytes") for r in runs.values()]
        themed = key not in FAILS and key not in OFF_CANVAS and lib not in FIGURE_LIBRARIES
        if themed and len(pngs) == 2 and pngs[0] and pngs[0] == pngs[1]:
            print("FAIL %-34s light and dark PNGs are the same bytes" % key)
            failed += 1
    print("%d problem(s)" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
