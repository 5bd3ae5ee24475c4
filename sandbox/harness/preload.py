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

# Beyond validator.DATA_MODULES (which preload imports too): what the libraries import lazily
# on common paths, and what the harness itself uses after arming.
DATA_EXTRA_MODULES = (
    "_strptime", "time", "calendar", "decimal", "fractions", "hashlib", "resource", "io",
    "json", "string", "numbers", "bisect", "heapq", "operator", "copy", "zoneinfo",
    "pytz", "dateutil", "dateutil.tz", "dateutil.parser", "dateutil.relativedelta",
    "pandas.io.formats.csvs", "pandas.io.formats.format", "pandas.io.formats.printing",
    "pandas.io.formats.console", "pandas.io.common", "pandas.errors",
    "numpy.core._exceptions", "scipy.stats._stats_py",
    "encodings.latin_1", "encodings.ascii", "encodings.utf_16", "encodings.utf_32",
    "encodings.cp1252", "encodings.unicode_escape", "encodings.raw_unicode_escape",
)
DATA_PACKAGES = ("pandas.core", "pandas.tseries", "pandas.api")
PLOT_MODULES = ("matplotlib", "matplotlib.pyplot", "matplotlib.backends.backend_agg", "seaborn")
FIGURE_MODULES = ("plotly", "plotly.graph_objects", "plotly.express", "plotly.io",
                  "plotly.subplots")

_done = set()
_KEEP = []          # strong references: time zones and warm-up results stay cached


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
    for name in names:
        for factory in (zoneinfo and zoneinfo.ZoneInfo, pytz and pytz.timezone, tz and tz.gettz):
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
        lambda: pd.date_range("2020-01-01", periods=3, freq="M", tz="Europe/Zurich"),
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
        except Exception:
            pass


def _preload_data():
    from validator import DATA_MODULES  # the admitted import surface, kept in one place
    for name in sorted(DATA_MODULES):
        _import(name)
    for name in DATA_EXTRA_MODULES:
        _import(name)
    _import_packages(DATA_PACKAGES)
    _load_time_zones()
    _warm_up_data()


def _preload_plot():
    _preload_data()
    matplotlib = _import("matplotlib")
    if matplotlib is not None:
        matplotlib.use("Agg")
    for name in PLOT_MODULES:
        _import(name)


def _preload_figure():
    _preload_plot()
    for name in FIGURE_MODULES:
        _import(name)


def preload(mode):
    """Imports everything `mode` needs ("data", "plot", "figure" or "raw"; "figure" is plot mode's
    stack plus plotly, until issue 6 settles it). Never arms anything."""
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
            _done.update(("data", "plot"))
    _done.add(mode)
