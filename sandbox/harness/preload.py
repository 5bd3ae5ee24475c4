"""preload(mode): import everything a mode needs before the guard is armed.

Once armed, the guard refuses every import of a module that is not loaded yet and every open, so
whatever the admitted code may touch must already be in memory: the admitted modules themselves,
every module of pandas.core, pandas.tseries and pandas.api, scipy's computing submodules, every
time zone (zoneinfo, pytz and dateutil keep them in their caches; _KEEP holds strong references),
and the lazy imports that a short warm-up run triggers (_strptime, pandas' CSV writer, ...).

Idempotent and cheap the second time: a warm zygote calls preload(mode) once and forks children
that call harness.main(), which calls preload again (a no-op then).
"""

import importlib
import pkgutil
import warnings

MODES = ("data", "plot", "figure", "raw")

# Beyond validator_tables.DATA_MODULES (which preload imports too): what the libraries import lazily
# on common paths, and what the harness itself uses after arming.
DATA_EXTRA_MODULES = (
    "_strptime", "time", "calendar", "decimal", "fractions", "hashlib", "resource", "io",
    "json", "string", "numbers", "bisect", "heapq", "operator", "copy", "zoneinfo",
    "pytz", "dateutil", "dateutil.tz", "dateutil.parser", "dateutil.relativedelta",
    "pandas.io.formats.csvs", "pandas.io.formats.format", "pandas.io.formats.printing",
    "pandas.io.formats.console", "pandas.io.common", "pandas.errors",
    "numpy._core._exceptions", "scipy.stats._stats_py",
    "encodings.latin_1", "encodings.ascii", "encodings.utf_16", "encodings.utf_32",
    "encodings.cp1252", "encodings.unicode_escape", "encodings.raw_unicode_escape",
)
DATA_PACKAGES = ("pandas.core", "pandas.tseries", "pandas.api")
# Modules a plot's lazy import of scikit-learn (joblib's loky) needs loaded before arming:
# ctypes.wintypes sizes ctypes.c_void_p at import (a stub once armed), asyncio's tasks module
# rewrites a function's __code__ (types.coroutine; rule `code` once armed), threadpoolctl
# declares ctypes structures with c_char_p fields.
LIBRARY_PREREQUISITES = ("ctypes.wintypes", "asyncio", "threadpoolctl")
PLOT_MODULES = ("matplotlib", "matplotlib.pyplot", "matplotlib.backends.backend_agg", "seaborn",
                "mpl_toolkits.mplot3d", "mpl_toolkits.axes_grid1", "mpl_toolkits.axisartist",
                "PIL.Image", "PIL.PngImagePlugin") + LIBRARY_PREREQUISITES
# Packages walked in plot mode (every submodule imported), minus GUI, web and test modules.
PLOT_PACKAGES = ("matplotlib", "seaborn")
PLOT_SKIP = (".tests", ".testing", "backend_qt", "backend_gtk", "backend_tk", "backend_wx",
             "backend_macosx", "backend_webagg", "backend_nbagg", "_backend_tk", "backend_cairo",
             "qt_compat", "qt_editor", "_backend_gtk", ".sphinxext", "backend_template")
FIGURE_MODULES = ("plotly", "plotly.graph_objects", "plotly.express", "plotly.io",
                  "plotly.subplots", "plotly.figure_factory", "plotly.colors",
                  "plotly.io._utils", "plotly.io.json", "plotly.basedatatypes")
# bokeh's figure mode (figurecapture.install_bokeh): the modules a catalogue file imports and
# json_item's serializer; the cold path imports them in install_bokeh, only for a bokeh plot.
FIGURE_BOKEH_MODULES = ("bokeh", "bokeh.plotting", "bokeh.io", "bokeh.io.export", "bokeh.embed",
                        "bokeh.models", "bokeh.layouts", "bokeh.palettes", "bokeh.transform",
                        "bokeh.core.serialization", "bokeh.document", "bokeh.colors")
# Builtin modules a lazy import could otherwise need _imp.create_builtin for (stubbed), and the
# frozen ones (_imp.get_frozen_object is stubbed); the frozen test modules print on import.
FROZEN_SKIP = ("__hello__", "__phello__", "__hello_alias__", "__hello_only__", "__phello_alias__")

_done = set()
_KEEP = []          # strong references: time zones and warm-up results stay cached
# Warm-up steps that raised ("step: ExceptionClass"): a warm-up is an optimisation, so a failure
# never stops the preload, but one that fails in this runtime is a defect (its cost moves into
# every job) and tests/harness/test_preload.py checks the list stays empty.
WARM_UP_FAILURES = []


def _warm_failed(step, exc):
    WARM_UP_FAILURES.append("%s: %s" % (step, type(exc).__name__))


def _import(name):
    try:
        return importlib.import_module(name)
    except Exception:       # an optional dependency missing (numba, pyarrow) is not an error
        return None


def _import_packages(packages):
    for package in packages:
        module = _import(package)
        path = getattr(module, "__path__", None)
        if path is None:
            continue
        for info in pkgutil.walk_packages(path, package + ".", onerror=lambda name: None):
            if "._numba" in info.name or ".tests" in info.name:
                continue    # numba is not installed; tests are never admitted
            _import(info.name)


def _load_time_zones():
    zoneinfo = _import("zoneinfo")
    names = sorted(zoneinfo.available_timezones()) if zoneinfo else []
    pytz = _import("pytz")
    tz = _import("dateutil.tz")
    # pandas 3 reads a zone's transitions from a "twin" made by the pure-Python
    # zoneinfo._zoneinfo.ZoneInfo (its own cache, apart from the C class's)
    twin = _import("zoneinfo._zoneinfo")
    for name in names:
        for factory in (zoneinfo and zoneinfo.ZoneInfo, pytz and pytz.timezone, tz and tz.gettz,
                        twin and twin.ZoneInfo):
            if factory is None:
                continue
            try:
                _KEEP.append(factory(name))
            except Exception:
                pass
    if pytz is not None:
        for name in pytz.all_timezones:
            try:
                _KEEP.append(pytz.timezone(name))
            except Exception:
                pass


def _warm_up_data():
    """A short run through the common paths so that their lazy imports happen now."""
    import datetime
    import io
    import random
    import re
    import statistics
    import time
    import numpy as np
    import pandas as pd
    steps = [
        lambda: np.random.default_rng(0).normal(size=3),
        lambda: (np.random.seed(0), np.random.rand(2), np.random.randn(2)),
        lambda: np.linalg.solve(np.eye(2), np.ones(2)),
        lambda: np.fft.fft(np.ones(4)),
        lambda: np.polynomial.Polynomial([1, 2])(3.0),
        lambda: pd.date_range("2020-01-01", periods=3, freq="D"),
        lambda: pd.date_range("2020-01-01", periods=3, freq="ME", tz="Europe/Zurich"),
        lambda: pd.to_datetime(["2020-01-01", "2020-02-01"]),
        lambda: pd.to_datetime(["01.02.2020"], format="%d.%m.%Y"),
        lambda: pd.Timestamp("2020-01-01").strftime("%Y"),
        lambda: datetime.datetime.strptime("2020-01-01", "%Y-%m-%d"),
        lambda: time.strptime("2020", "%Y"),
        lambda: statistics.NormalDist(0, 1).pdf(0.5),
        lambda: statistics.mean([1, 2]),
        lambda: (random.seed(1), random.random(), random.gauss(0, 1)),
        lambda: re.compile(r"(\d+)").findall("a1b22"),
        lambda: "é".encode("latin-1"),
    ]

    def frame_steps():
        df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "x"],
                           "t": pd.date_range("2020-01-01", periods=3, freq="D"),
                           "c": pd.Categorical(["u", "v", "u"])})
        out = [df.describe(), df.groupby("b").mean(numeric_only=True), df["a"].rolling(2).mean(),
               df["a"].cumsum(), df.pivot_table(index="b", values="a", aggfunc="sum"),
               list(df.itertuples()), repr(df), str(df["a"]), df.dtypes, df.reset_index(),
               df.set_index("t").resample("2D").mean(numeric_only=True),
               pd.Series([1.0, None, 3.0]).interpolate(), df.melt(id_vars="b"),
               df.to_csv(None, index=False, lineterminator="\n"),
               pd.concat([df, df]), df.merge(df, on="a"), df.sort_values("a"),
               pd.DataFrame(np.zeros((2, 2))).astype("Int64"), df["b"].astype("string"),
               df.assign(d=lambda d: d["a"] * 2), df.corr(numeric_only=True),
               df["t"].dt.year, df["b"].str.upper(), pd.cut(df["a"], 2), pd.qcut(df["a"], 2)]
        buf = io.StringIO()
        df.info(buf=buf)
        out.append(buf.getvalue())
        return out

    steps.append(frame_steps)

    def scipy_steps():
        from scipy import integrate, interpolate, optimize, signal, stats, special, fft, linalg
        return [stats.norm.rvs(size=2, random_state=0), stats.norm(0, 1).pdf(0.0),
                stats.linregress([0, 1, 2], [0, 1, 3]),
                integrate.solve_ivp(lambda t, y: -y, (0, 1), [1.0], t_eval=[0.0, 0.5]),
                integrate.odeint(lambda y, t: -y, [1.0], [0.0, 1.0]),
                integrate.quad(lambda x: x, 0, 1), optimize.minimize_scalar(lambda x: (x - 1) ** 2),
                optimize.curve_fit(lambda x, a: a * x, [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]),
                interpolate.interp1d([0, 1], [0, 1])(0.5), signal.savgol_filter(np.arange(7.0), 5, 2),
                special.gamma(3.0), fft.fft(np.ones(4)), linalg.inv(np.eye(2))]

    steps.append(scipy_steps)
    for step in steps:
        try:
            _KEEP.append(step())
        except Exception as exc:
            _warm_failed("data warm-up", exc)


def _preload_data():
    from validator_tables import DATA_MODULES  # the admitted import surface, kept in one place
    for name in sorted(DATA_MODULES):
        _import(name)
    for name in DATA_EXTRA_MODULES:
        _import(name)
    _import_packages(DATA_PACKAGES)
    _pandas_for_the_sandbox()
    _load_time_zones()
    _warm_up_data()


def _pandas_for_the_sandbox():
    """pandas settings every mode that imports pandas needs before arming. One thread: pandas 3's
    read_csv sizes a thread pool by reading /sys/fs/cgroup/cpu.max unless mode.max_threads is
    set (the sandbox runs numeric code single-threaded, and threads are refused). No chained-
    assignment check: pandas 3 looks for it by reading its caller's frame (sys._getframe), which
    the guard refuses; under copy-on-write a chained assignment changes nothing either way, so
    only its warning (never shown in the sandbox) is lost."""
    pandas = _import("pandas")
    if pandas is None:
        return
    try:
        pandas.set_option("mode.max_threads", 1)
    except Exception:       # a pandas without the option starts no read_csv threads
        pass
    import sys
    for name in ("pandas.compat", "pandas.core.frame", "pandas.core.series", "pandas.core.generic",
                 "pandas.core.indexing"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "CHAINED_WARNING_DISABLED", None) is False:
            module.CHAINED_WARNING_DISABLED = True


def _import_builtin_and_frozen():
    import sys
    import _imp
    for name in sys.builtin_module_names:
        _import(name)
    for name in sorted(_imp._frozen_module_names()):
        if not name.startswith(FROZEN_SKIP):
            _import(name)


def _import_plot_packages():
    for package in PLOT_PACKAGES:
        module = _import(package)
        path = getattr(module, "__path__", None)
        if path is None:
            continue
        for info in pkgutil.walk_packages(path, package + ".", onerror=lambda name: None):
            if any(part in info.name for part in PLOT_SKIP):
                continue
            _import(info.name)


def _warm_up_plot():
    """Draws the common matplotlib and seaborn paths once (inside rc_context, so no style leaks
    into the jobs): their lazy imports happen now, the fonts matplotlib will use are opened and
    cached (regular, bold, mathtext), PIL's PNG writer is loaded."""
    import io
    import matplotlib
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd
    import seaborn as sns
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=60), "y": rng.normal(size=60),
                          "g": np.repeat(["a", "b", "c"], 20),
                          "t": pd.date_range("2020-01-01", periods=60, freq="D")})

    def draw(style, seaborn_theme):
        with matplotlib.rc_context():
            plt.style.use(style)
            if seaborn_theme:
                sns.set_theme(style="whitegrid")
            fig, axes = plt.subplots(2, 3, figsize=(3, 2), dpi=20)
            ax = axes[0][0]
            ax.plot(frame["t"], frame["x"], label="line")
            ax.set_title("Title $x^2$", fontsize=14, fontweight="bold")
            ax.set_xlabel("time", fontstyle="italic")
            ax.legend()
            ax.annotate("note", xy=(0.5, 0.5), xycoords="axes fraction",
                        arrowprops={"arrowstyle": "->"})
            axes[0][1].bar(["a", "b"], [1, 2])
            points = axes[0][2].scatter(frame["x"], frame["y"], c=frame["y"], cmap="viridis")
            fig.colorbar(points, ax=axes[0][2])
            axes[1][0].hist(frame["x"], bins=5)
            axes[1][1].pie([1, 2, 3], labels=["p", "q", "r"], autopct="%1.0f%%")
            axes[1][2].imshow(rng.normal(size=(4, 4)))
            fig.suptitle("warm-up")
            fig.savefig(io.BytesIO(), format="png", dpi=20)
            plt.close(fig)
            if not seaborn_theme:
                return
            fig, axes = plt.subplots(2, 4, figsize=(3, 2), dpi=20)
            sns.lineplot(data=frame, x="x", y="y", hue="g", ax=axes[0][0])
            sns.scatterplot(data=frame, x="x", y="y", hue="g", ax=axes[0][1])
            sns.heatmap(frame[["x", "y"]].corr(), annot=True, fmt=".2f", cmap="vlag", ax=axes[0][2])
            sns.violinplot(data=frame, x="g", y="x", ax=axes[0][3])
            sns.histplot(data=frame, x="x", kde=True, ax=axes[1][0])
            sns.barplot(data=frame, x="g", y="y", ax=axes[1][1])
            sns.boxplot(data=frame, x="g", y="y", ax=axes[1][2])
            sns.kdeplot(data=frame, x="x", ax=axes[1][3])
            fig.savefig(io.BytesIO(), format="png", dpi=20)
            plt.close(fig)
            fig = plt.figure(figsize=(2, 2), dpi=20)
            fig.add_subplot(2, 2, 1, projection="3d").plot([0, 1], [0, 1], [0, 1])
            fig.add_subplot(2, 2, 4, projection="polar").plot([0, 1], [1, 2])
            fig.savefig(io.BytesIO(), format="png", dpi=20)
            plt.close(fig)

    for style, seaborn_theme in (("default", False), ("dark_background", True)):
        try:
            draw(style, seaborn_theme)
        except Exception as exc:
            _warm_failed("matplotlib warm-up draw", exc)
    plt.close("all")


def _warm_up_bokeh():
    """Serializes common bokeh documents once (json_item imports and builds its models' property
    descriptors lazily)."""
    import numpy as np
    from bokeh.embed import json_item
    from bokeh.layouts import column, gridplot, row
    from bokeh.models import (BasicTicker, ColorBar, ColumnDataSource, HoverTool, Label,
                              LinearColorMapper, Span, Whisker)
    from bokeh.plotting import figure
    from bokeh.transform import dodge, factor_cmap, linear_cmap

    def plots():
        # Fresh models each call: a model belongs to one document, and json_item makes one.
        made = []
        for backend in ("canvas", "webgl", "svg"):
            source = ColumnDataSource({"x": np.arange(5.0), "y": np.arange(5.0) ** 2,
                                       "g": list("abcab")})
            p = figure(width=320, height=180, title="warm-up", output_backend=backend,
                       x_axis_type="datetime" if backend == "svg" else "linear")
            p.scatter("x", "y", source=source, size=8,
                      color=factor_cmap("g", "Category10_3", ["a", "b", "c"]))
            p.line("x", "y", source=source, line_width=2, legend_label="line")
            p.vbar(x=dodge("x", 0.1), top="y", width=0.2, source=source)
            p.add_layout(Span(location=1, dimension="width"))
            p.add_layout(Label(x=1, y=1, text="label"))
            p.add_layout(Whisker(base="x", upper="y", lower="x", source=source))
            p.add_tools(HoverTool(tooltips=[("x", "@x")]))
            made.append(p)
        heat = figure(width=320, height=320, x_range=["a", "b"], y_range=["a", "b"])
        mapper = LinearColorMapper(palette="Viridis256", low=0, high=1)
        heat.rect(x="c", y="r", width=1, height=1, fill_color=linear_cmap("v", "Viridis256", 0, 1),
                  source=ColumnDataSource({"c": ["a", "b"], "r": ["a", "b"], "v": [0.0, 1.0]}))
        heat.add_layout(ColorBar(color_mapper=mapper, ticker=BasicTicker()), "right")
        made.append(heat)
        return made

    first = plots()
    grid = plots()
    for obj in first[:3] + [column(first[3]), row(*grid[:2]), gridplot([[grid[2], grid[3]]])]:
        _KEEP.append(json_item(obj))


def _warm_up_figure():
    """Builds and serializes the common plotly figures once: plotly imports its trace classes
    and validators lazily (graph_objs, validators), the templates are read from package data."""
    import numpy as np
    import pandas as pd
    import plotly.express as px
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30),
                          "g": np.repeat(["a", "b", "c"], 10), "n": np.arange(30)})
    traces = [
        lambda: go.Scatter(x=[1, 2], y=[3, 4], mode="lines+markers", marker={"size": 8, "color": [1, 2]},
                           line={"width": 2}, name="s", text=["a", "b"], hovertemplate="%{y}"),
        lambda: go.Scattergl(x=[1, 2], y=[1, 2]), lambda: go.Bar(x=["a", "b"], y=[1, 2], text=[1, 2]),
        lambda: go.Histogram(x=[1, 2, 2]), lambda: go.Box(y=[1, 2, 3]), lambda: go.Violin(y=[1, 2, 3]),
        lambda: go.Heatmap(z=[[1, 2], [3, 4]], colorscale="Viridis"), lambda: go.Contour(z=[[1, 2], [3, 4]]),
        lambda: go.Pie(labels=["a", "b"], values=[1, 2], hole=0.3), lambda: go.Scatter3d(x=[1], y=[1], z=[1]),
        lambda: go.Surface(z=[[1, 2], [3, 4]]), lambda: go.Candlestick(x=[1], open=[1], high=[2], low=[0], close=[1]),
        lambda: go.Funnel(y=["a"], x=[1]), lambda: go.Sunburst(labels=["a"], parents=[""]),
        lambda: go.Treemap(labels=["a"], parents=[""]), lambda: go.Scatterpolar(r=[1], theta=[0]),
        lambda: go.Indicator(value=1), lambda: go.Table(cells={"values": [[1]]}),
        lambda: go.Histogram2d(x=[1], y=[1]), lambda: go.Waterfall(x=["a"], y=[1]),
        lambda: go.Sankey(node={"label": ["a", "b"]}, link={"source": [0], "target": [1], "value": [1]}),
        lambda: go.Ohlc(x=[1], open=[1], high=[2], low=[0], close=[1]), lambda: go.Image(z=[[[0, 0, 0]]]),
    ]
    figures = []
    for make in traces:
        try:
            figures.append(go.Figure(make()))
        except Exception as exc:
            _warm_failed("plotly trace", exc)

    def express():
        return [px.scatter(frame, x="x", y="y", color="g", size="n", trendline=None),
                px.line(frame, x="n", y="y", color="g"), px.bar(frame, x="g", y="y"),
                px.histogram(frame, x="x"), px.box(frame, x="g", y="y"), px.violin(frame, y="y"),
                px.pie(frame, names="g", values="n"), px.imshow([[1, 2], [3, 4]]),
                px.density_heatmap(frame, x="x", y="y"), px.area(frame, x="n", y="y"),
                px.scatter_3d(frame, x="x", y="y", z="n"), px.strip(frame, x="g", y="y")]

    def subplots():
        fig = make_subplots(rows=1, cols=2, subplot_titles=("a", "b"), specs=[[{}, {}]])
        fig.add_trace(go.Scatter(x=[1], y=[1]), row=1, col=1)
        fig.add_trace(go.Bar(x=["a"], y=[1]), row=1, col=2)
        return [fig]

    for step in (express, subplots):
        try:
            figures.extend(step())
        except Exception as exc:
            _warm_failed("plotly figures", exc)
    for name in ("plotly", "plotly_white", "plotly_dark", "ggplot2", "seaborn", "simple_white",
                 "presentation", "none"):
        try:
            _KEEP.append(pio.templates[name])
        except Exception:
            pass
    for fig in figures:
        try:
            fig.update_layout(title="t", template="plotly_dark", width=800, height=450,
                              xaxis_title="x", yaxis_title="y", legend={"orientation": "h"},
                              font={"size": 14}, margin={"l": 10}, showlegend=True)
            fig.update_xaxes(showgrid=True)
            fig.update_yaxes(showgrid=True)
            # Table, Sankey and Indicator have no opacity
            fig.update_traces(opacity=0.9, selector=lambda trace: "opacity" in trace)
            fig.add_annotation(text="n", x=1, y=1)
            fig.add_shape(type="line", x0=0, x1=1, y0=0, y1=1)
            fig.to_json()
            fig.to_dict()
        except Exception as exc:
            _warm_failed("plotly layout", exc)


# The harness's own modules for plot and figure mode (imported by main() otherwise).
PLOT_HARNESS_MODULES = ("plotmode", "plotguard", "figurecapture", "errors", "records", "guard",
                        "plotlibs")


def _preload_plot_base():
    """What plot and figure mode both load first: the data stack, the harness's plot modules,
    matplotlib on Agg."""
    _preload_data()
    for name in PLOT_HARNESS_MODULES:
        _import(name)
    matplotlib = _import("matplotlib")
    if matplotlib is not None:
        matplotlib.use("Agg")


def _preload_plot():
    _preload_plot_base()
    for name in PLOT_MODULES:
        _import(name)
    _import_plot_packages()
    _import_builtin_and_frozen()
    _warm_up_plot()
    _preload_plot_libraries()


# Plot mode's other libraries (docs/sandbox.md, "Warm starts per library"): every one is
# imported with its pre-arm part (plotlibs.install); plotnine and pygal also draw once. vl-convert
# and lets-plot never draw here: their native engines start threads at the first conversion, and
# a fork of a process with those threads hangs in the child's first conversion.
PLOT_LIBRARY_MODULES = ("plotnine", "altair", "vl_convert", "pygal", "cairosvg", "lets_plot",
                        "lets_plot.export")


def _warm_up_plot_libraries():
    """plotnine's first draw imports its geoms', stats' and scales' helpers lazily; pygal's
    first PNG loads cairo's fonts; altair's first to_dict loads and validates against the
    Vega-Lite schema (pure Python, no vl-convert)."""
    import io
    import numpy as np
    import pandas as pd
    frame = pd.DataFrame({"x": np.arange(12.0), "y": np.arange(12.0) % 5, "g": list("ab") * 6})

    def plotnine_draw():
        import matplotlib.pyplot as plt
        from plotnine import aes, geom_boxplot, geom_col, geom_line, geom_point, ggplot, labs
        from plotnine import facet_wrap, theme, theme_minimal
        plot = (ggplot(frame, aes("x", "y", color="g")) + geom_point() + geom_line()
                + labs(title="t") + theme_minimal() + theme(figure_size=(2, 1)))
        plot.save(io.BytesIO(), format="png", dpi=20, verbose=False)
        bars = ggplot(frame, aes("g", "y")) + geom_col() + geom_boxplot() + facet_wrap("g")
        bars.save(io.BytesIO(), format="png", dpi=20, width=2, height=1, verbose=False)
        plt.close("all")

    def pygal_draw():
        import pygal
        chart = pygal.Bar(width=80, height=60, title="t", js=[])
        chart.add("a", [1, 3, 2])
        _KEEP.append(len(chart.render_to_png()))

    def altair_spec():
        import altair as alt
        chart = alt.Chart(frame).mark_point().encode(x="x:Q", y="y:Q", color="g:N")
        _KEEP.append(chart.properties(title="t").to_dict())

    for step in (plotnine_draw, pygal_draw, altair_spec):
        try:
            step()
        except Exception as exc:
            _warm_failed("plot library warm-up", exc)


def _preload_plot_libraries():
    import plotlibs
    plotlibs.install(None)
    for name in PLOT_LIBRARY_MODULES:
        _import(name)
    _warm_up_plot_libraries()


# What plot mode's walk loads that the guard refuses to import lazily (rule `code`): the vector
# backends and the fontTools and lxml modules they pull in. Everything else the walk loads imports
# under the guard when a figure job asks for it (tests/harness/test_preload.py checks both).
FIGURE_PLOT_EXTRA = ("matplotlib.backends.backend_pdf", "matplotlib.backends.backend_ps",
                     "matplotlib.backends.backend_pgf", "matplotlib.backends.backend_svg")


def _preload_figure():
    """Figure mode's stack: the data stack (plotly jobs build pandas frames), what the cold path's
    prepare("figure") imports before arming (matplotlib with its rc file and font cache, seaborn,
    PIL, plotly), and plotly's lazily imported trace classes and validators. Not plot mode's walk
    of every matplotlib/seaborn submodule nor its warm-up draw (CPU that no plotly job uses): a
    figure job that draws with matplotlib imports the rest under the guard, as a cold
    figure job does (but see FIGURE_PLOT_EXTRA)."""
    _preload_plot_base()
    for name in PLOT_MODULES + ("matplotlib.font_manager",) + FIGURE_PLOT_EXTRA:
        _import(name)
    _import_builtin_and_frozen()
    for name in FIGURE_MODULES + FIGURE_BOKEH_MODULES:
        _import(name)
    import plotlibs
    plotlibs.install("")    # what every plot needs before arming; a figure job adds its own
    _warm_up_figure()
    try:
        _warm_up_bokeh()
    except Exception as exc:       # a runtime without bokeh still serves plotly
        _warm_failed("bokeh warm-up", exc)


def preload(mode):
    """Imports everything `mode` needs ("data", "plot", "figure" or "raw"; "figure" is the data
    stack, what prepare("figure") imports, and plotly's lazily imported trace classes and
    validators, see _preload_figure). Never arms anything."""
    if mode not in MODES:
        raise ValueError("unknown preload mode")
    if mode in _done:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mode == "data":
            _preload_data()
        elif mode == "plot":
            _preload_plot()
            _done.add("data")
        elif mode == "figure":
            _preload_figure()
            _done.update(("data", "prepared-plot"))
    if mode != "raw":
        # Where the guard's stub targets live, so that arming in a forked child need not scan
        # (and copy) every loaded module's namespace.
        import guard
        guard.index_stub_locations()
    _done.add(mode)


def prepare(mode):
    """What a plot or figure run needs before arming, when no zygote preloaded it (the cold
    path): matplotlib with Agg and its font manager (matplotlib reads its rc file and font cache
    at import, outside what the guard lets a plot read), seaborn, PIL's PNG writer, plotly for
    figure mode (its write_image is redirected before arming), every builtin and frozen module
    (their loaders stay stubbed). Everything else a plot imports comes later, under the guard,
    through the stock loaders. A no-op after preload(mode)."""
    if mode not in ("plot", "figure"):
        raise ValueError("prepare() is for plot and figure mode")
    if mode in _done or ("prepared-" + mode) in _done:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        matplotlib = _import("matplotlib")
        if matplotlib is not None:
            matplotlib.use("Agg")
        for name in PLOT_MODULES + ("matplotlib.font_manager",):
            _import(name)
        _pandas_for_the_sandbox()
        if mode == "figure":
            for name in FIGURE_MODULES:
                _import(name)
        _import_builtin_and_frozen()
    _done.add("prepared-" + mode)
