"""Figure capture: plotly's and bokeh's save, export and show calls write the figure's JSON to one
file (plot-<theme>.json) instead of drawing it; the host's Chromium draws that file later with the
installed package's own JavaScript (sandbox/figure/). No browser, kaleido or Selenium runs here.

Used by figure mode (plotmode.py, before the guard is armed) and, without any guard, by plotq's
sweep in bare mode. Bare mode runs the catalogue file with the runtime's interpreter, in the file's
work dir, as

    <venv>/bin/python <project>/sandbox/harness/figurecapture.py plot.py plot-light.json

(run_file: the captures plot.py's source needs, then plot.py as __main__ with sys.argv and
sys.path[0] as `python plot.py` would have them), and then draws plot-light.json with the figure
renderer, as figure mode does. A runner of its own may instead call install(output, source) and
run the file itself. This module imports
nothing of the harness (no guard), so both modes capture exactly alike.

plotly (install_plotly):
  Figure.write_image(file, format, scale, width, height, ...), plotly.io.write_image(fig, ...),
  Figure.show(...), plotly.io.show(fig, ...) write `fig`'s JSON (plotly's own encoder) to the
  output, whatever file name or format was asked; width and height, when given, go into the
  layout (the renderer's canvas rule reads them); scale is ignored (the canvas rule picks the
  device scale). Figure.write_html, plotly.io.write_html and plotly.offline.plot/iplot write
  nothing and return as if they had: catalogue files write an HTML page beside the PNG, which the
  render does not need, and writing plotly.js into every work dir would cost disk for nothing.
bokeh (install_bokeh):
  bokeh.io.save / bokeh.plotting.save, bokeh.io.export_png / export_svg / export_svgs and
  bokeh.io.show write bokeh.embed.json_item(obj) to the output (export_png's width and height
  go onto a root that has them). No HTML is written; save returns the file name it was given (or
  the one output_file named), as bokeh does.
selenium (install_selenium_shim):
  Most catalogue bokeh files save, then start Chrome through Selenium to screenshot their own
  HTML. Selenium is not in the runtime, and a browser must never start inside the sandbox (the
  exec filter would refuse it anyway). So figure mode provides a stand-in `selenium` package:
  webdriver.Chrome(...) and friends make a driver whose get/quit-style calls do nothing,
  whose window size follows set_window_size / --window-size / the CDP metrics override, whose
  execute_script answers window.innerWidth/innerHeight from that size (None otherwise), and
  whose save_screenshot / get_screenshot_as_png give a blank white PNG of that size: the file's
  own padding and cropping code keeps working, and the real PNG is the host's drawing of the
  captured document. While a stand-in driver is open (made and not quit), time.sleep returns at
  once: the files sleep seconds between get and screenshot for a browser to draw, and there is
  none (both modes alike, so the sweep's comparison keeps its control). A real selenium already
  imported is left alone.

The last capture wins. The capture is a convenience, not a trust boundary: in figure mode it runs
under the armed guard as plot code would and opens only the file the plot may write anyway; the
JSON is untrusted, and the host checks it and draws it as data.
"""

import json
import struct
import sys
import time
import types
import zlib

LIBRARIES = ("plotly", "bokeh", "selenium")


def libraries_for(source):
    """The captures a plot needs, judged from its source text (None: all of them). Installing
    bokeh's costs its import, which a plotly-only plot on the cold path should not pay."""
    if source is None:
        return LIBRARIES
    return tuple(name for name in LIBRARIES if name in source)


def install(output_name, source=None):
    """Installs the captures `source` needs (libraries_for). A library that is not installed is
    skipped, except plotly, whose absence raises ImportError (figure mode's historic contract)."""
    wanted = libraries_for(source)
    installed = []
    if "plotly" in wanted or not wanted:
        install_plotly(output_name)
        installed.append("plotly")
    if "bokeh" in wanted:
        try:
            install_bokeh(output_name)
            installed.append("bokeh")
        except ImportError:
            pass
    if "selenium" in wanted or "bokeh" in wanted:
        install_selenium_shim()
        installed.append("selenium")
    return installed


def _write_text(output_name, text):
    with open(output_name, "w", encoding="utf-8") as handle:
        handle.write(text)


# --- plotly -------------------------------------------------------------------------------------

def install_plotly(output_name):
    """Replaces plotly's image, show and HTML entry points. Raises ImportError without plotly."""
    import plotly.basedatatypes as basedatatypes
    import plotly.io as pio
    import plotly.offline as offline
    from plotly.io._utils import validate_coerce_fig_to_dict
    from plotly.io.json import to_json_plotly

    def write_figure(fig, width=None, height=None, validate=True):
        figure = validate_coerce_fig_to_dict(fig, validate)
        layout = figure.get("layout")
        if not isinstance(layout, dict):
            layout = {}
            figure["layout"] = layout
        if width is not None:
            layout["width"] = width
        if height is not None:
            layout["height"] = height
        _write_text(output_name, to_json_plotly(figure))

    def write_image(fig, file=None, format=None, scale=None, width=None, height=None,
                    validate=True, engine="auto"):
        write_figure(fig, width, height, validate)

    def show(fig, renderer=None, validate=True, **kwargs):
        write_figure(fig, kwargs.get("width"), kwargs.get("height"), validate)

    def write_html(*args, **kwargs):
        return None

    def offline_plot(*args, **kwargs):
        return kwargs.get("filename", "temp-plot.html")

    def figure_write_image(self, *args, **kwargs):
        return write_image(self, *args, **kwargs)

    def figure_show(self, *args, **kwargs):
        return show(self, *args, **kwargs)

    basedatatypes.BaseFigure.write_image = figure_write_image
    basedatatypes.BaseFigure.show = figure_show
    basedatatypes.BaseFigure.write_html = write_html
    # plotly.io resolves these lazily (a module __getattr__ that would import kaleido's scope):
    # set on the package they shadow it; in a submodule only when it is loaded already.
    for name, replacement in (("write_image", write_image), ("show", show),
                              ("write_html", write_html)):
        setattr(pio, name, replacement)
    for name in ("plot", "iplot"):
        setattr(offline, name, offline_plot)
    for module_name, name, replacement in (
            ("plotly.io._kaleido", "write_image", write_image), ("plotly.io._renderers", "show", show),
            ("plotly.io._html", "write_html", write_html),
            ("plotly.offline.offline", "plot", offline_plot),
            ("plotly.offline.offline", "iplot", offline_plot)):
        module = sys.modules.get(module_name)
        if module is not None and name in vars(module):
            setattr(module, name, replacement)


# --- bokeh --------------------------------------------------------------------------------------

def install_bokeh(output_name):
    """Replaces bokeh's save, export and show entry points. Raises ImportError without bokeh."""
    import bokeh.embed
    import bokeh.io
    import bokeh.io.export as export
    import bokeh.io.saving as saving
    import bokeh.io.showing as showing
    import bokeh.plotting as plotting
    from bokeh.io.state import curstate

    def capture(obj, width=None, height=None):
        item = bokeh.embed.json_item(obj)
        if width is not None or height is not None:
            for root in item.get("doc", {}).get("roots", []):
                if root.get("id") == item.get("root_id"):
                    attributes = root.setdefault("attributes", {})
                    if width is not None and "width" in attributes:
                        attributes["width"] = width
                    if height is not None and "height" in attributes:
                        attributes["height"] = height
        _write_text(output_name, json.dumps(item, separators=(",", ":"), allow_nan=False))

    def output_filename(filename, default):
        if filename is not None:
            return str(filename)
        state = curstate()
        return state.file.filename if state.file is not None else default

    def save(obj, filename=None, resources=None, title=None, template=None, state=None):
        capture(obj)
        return output_filename(filename, "plot.html")

    def export_png(obj, *, filename=None, width=None, height=None, scale_factor=1,
                   webdriver=None, timeout=5, state=None):
        capture(obj, width, height)
        return str(filename) if filename is not None else "plot.png"

    def export_svg(obj, *, filename=None, width=None, height=None, webdriver=None, timeout=5,
                   state=None):
        capture(obj, width, height)
        return [str(filename) if filename is not None else "plot.svg"]

    def show(obj, browser=None, new="tab", notebook_handle=False, notebook_url="localhost:8888",
             **kwargs):
        capture(obj)
        return None

    for module in (bokeh.io, saving, plotting):
        if "save" in vars(module):
            module.save = save
    for module in (bokeh.io, showing, plotting):
        if "show" in vars(module):
            module.show = show
    for module in (bokeh.io, export):
        module.export_png = export_png
        module.export_svg = export_svg
        module.export_svgs = export_svg


# --- selenium stand-in --------------------------------------------------------------------------

def blank_png(width, height):
    """A white RGB PNG of width x height (zlib only: no PIL needed, rows compress to nearly
    nothing)."""
    width = max(1, min(int(width), 20000))
    height = max(1, min(int(height), 20000))
    row = b"\x00" + b"\xff" * (3 * width)
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


class _Options:
    """selenium's ChromeOptions: remembers arguments (for --window-size), accepts the rest."""

    def __init__(self, *args, **kwargs):
        self.arguments = []
        self.experimental_options = {}
        self.binary_location = ""
        self.headless = True

    def add_argument(self, argument):
        self.arguments.append(argument)

    def add_experimental_option(self, name, value):
        self.experimental_options[name] = value

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class _Element:
    def __init__(self, driver):
        self._driver = driver

    def screenshot(self, filename):
        return self._driver.save_screenshot(filename)

    @property
    def screenshot_as_png(self):
        return self._driver.get_screenshot_as_png()

    @property
    def size(self):
        return {"width": self._driver._width, "height": self._driver._height}

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


# Stand-in drivers made and not quit: while any is, time.sleep returns at once.
_open_drivers = [0]


class _Driver:
    """A webdriver that starts nothing (see the module docstring)."""

    def __init__(self, *args, options=None, **kwargs):
        self._open = True
        _open_drivers[0] += 1
        self._width, self._height, self._scale = 800, 600, 1.0
        for argument in getattr(options, "arguments", ()) or ():
            if isinstance(argument, str) and argument.startswith("--window-size="):
                try:
                    w, h = argument.split("=", 1)[1].split(",")
                    self._width, self._height = int(w), int(h)
                except ValueError:
                    pass
        self.current_url = "about:blank"
        self.title = ""

    def set_window_size(self, width, height, *args, **kwargs):
        self._width, self._height = int(width), int(height)

    def get_window_size(self, *args, **kwargs):
        return {"width": self._width, "height": self._height}

    def execute_cdp_cmd(self, command, params=None):
        if command == "Emulation.setDeviceMetricsOverride" and isinstance(params, dict):
            self._width = int(params.get("width", self._width))
            self._height = int(params.get("height", self._height))
            self._scale = float(params.get("deviceScaleFactor", 1) or 1)
        return {}

    def execute_script(self, script, *args):
        text = script if isinstance(script, str) else ""
        has_w, has_h = "innerWidth" in text, "innerHeight" in text
        if has_w and has_h:
            return [self._width, self._height]
        if has_w:
            return self._width
        if has_h:
            return self._height
        return None

    def get(self, url):
        self.current_url = str(url)

    def get_screenshot_as_png(self):
        return blank_png(self._width * self._scale, self._height * self._scale)

    def save_screenshot(self, filename):
        with open(filename, "wb") as handle:
            handle.write(self.get_screenshot_as_png())
        return True

    get_screenshot_as_file = save_screenshot

    def find_element(self, *args, **kwargs):
        return _Element(self)

    def find_elements(self, *args, **kwargs):
        return [_Element(self)]

    def quit(self):
        if self.__dict__.get("_open"):
            self._open = False
            _open_drivers[0] -= 1
        return None

    close = quit

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.quit()
        return False

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class _By:
    ID, XPATH, LINK_TEXT, PARTIAL_LINK_TEXT = "id", "xpath", "link text", "partial link text"
    NAME, TAG_NAME, CLASS_NAME, CSS_SELECTOR = "name", "tag name", "class name", "css selector"


def install_selenium_shim():
    """Puts the stand-in `selenium` package into sys.modules (unless a selenium is loaded)."""
    if "selenium" in sys.modules:
        return
    def module(name, **attributes):
        m = types.ModuleType(name, "plotq figure capture: a stand-in that starts no browser")
        m.__dict__.update(attributes)
        m.__path__ = []          # a package, so that its submodules import
        sys.modules[name] = m
        return m

    drivers = {name: _Driver for name in ("Chrome", "Firefox", "Edge", "Safari", "Remote",
                                          "ChromiumEdge", "WebKitGTK", "WPEWebKit")}
    options = {name: _Options for name in ("ChromeOptions", "FirefoxOptions", "EdgeOptions")}
    service = type("Service", (), {"__init__": lambda self, *a, **k: None})
    by = module("selenium.webdriver.common.by", By=_By)
    common = module("selenium.webdriver.common", by=by)
    chrome_options = module("selenium.webdriver.chrome.options", Options=_Options)
    chrome_service = module("selenium.webdriver.chrome.service", Service=service)
    chrome_webdriver = module("selenium.webdriver.chrome.webdriver", WebDriver=_Driver)
    chrome = module("selenium.webdriver.chrome", options=chrome_options, service=chrome_service,
                    webdriver=chrome_webdriver)
    webdriver = module("selenium.webdriver", chrome=chrome, common=common, **drivers, **options)
    module("selenium", webdriver=webdriver, __version__="0+plotq.stand-in")
    _skip_browser_waits()


def _skip_browser_waits():
    """time.sleep returns at once while a stand-in driver is open; a bad argument still raises
    as it would (sleep(min(seconds, 0))). Once a process: install_selenium_shim returns early
    when the stand-in is loaded."""
    real = time.sleep

    def sleep(seconds):
        if _open_drivers[0] > 0:
            return real(min(seconds, 0))
        return real(seconds)

    sleep.__name__ = sleep.__qualname__ = "sleep"
    sleep.__doc__ = real.__doc__
    time.sleep = sleep


def run_file(plot_path, output_name):
    """Bare mode: installs the captures plot_path's source needs, then runs it as __main__ the way
    `python plot_path` would (sys.argv[0] is the file, sys.path[0] its folder)."""
    import os
    import runpy
    with open(plot_path, encoding="utf-8-sig") as handle:
        source = handle.read()
    install(output_name, source=source)
    sys.argv = [plot_path]
    sys.path[0] = os.path.dirname(os.path.abspath(plot_path))
    runpy.run_path(plot_path, run_name="__main__")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.stderr.write("usage: figurecapture.py PLOT.py OUTPUT.json\n")
        sys.exit(2)
    import os
    # The module itself (not this __main__), so its classes are its own; under -I the script's
    # folder is not on sys.path. run_file then puts the plot's folder in its place.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import figurecapture
    figurecapture.run_file(sys.argv[1], sys.argv[2])
