"""The exception-class vocabulary: what the host may learn about a snippet's exception.

classify(exc) answers the class's name only when the class is exactly a builtin exception or one
of ERROR_CLASSES (resolved by identity before arming), else UNLISTED. It never reads the message,
never calls a method of the exception or its class, and never compares a name the snippet made:
a class that calls itself "numpy.linalg.LinAlgError" is still UNLISTED.
"""

import builtins
import importlib
import sys

UNLISTED = "unlisted"

# Public paths of the library exceptions a data snippet commonly meets (numpy 2 names: its
# numpy.core is a deprecated shim whose attribute reads import modules lazily).
ERROR_CLASSES = (
    "numpy.linalg.LinAlgError", "numpy.exceptions.AxisError",
    "numpy._core._exceptions.UFuncTypeError", "numpy._core._exceptions._UFuncNoLoopError",
    "numpy._core._exceptions._UFuncBinaryResolutionError",
    "numpy._core._exceptions._UFuncInputCastingError",
    "numpy._core._exceptions._UFuncOutputCastingError",
    "numpy._core._exceptions._ArrayMemoryError",
    "pandas.errors.ParserError", "pandas.errors.EmptyDataError",
    "pandas.errors.OutOfBoundsDatetime", "pandas.errors.OutOfBoundsTimedelta",
    "pandas.errors.IntCastingNaNError", "pandas.errors.InvalidIndexError",
    "pandas.errors.MergeError", "pandas.errors.UnsortedIndexError",
    "pandas.errors.IndexingError", "pandas.errors.NullFrequencyError",
    "pandas.errors.SpecificationError", "pandas.errors.DataError",
    "pandas.errors.DuplicateLabelError", "pandas.errors.UndefinedVariableError",
    "pandas.errors.UnsupportedFunctionCall", "pandas.errors.OptionError", "pandas._libs.tslibs.parsing.DateParseError",
    "scipy.optimize.OptimizeWarning", "scipy.integrate.IntegrationWarning",
    "scipy.special.SpecialFunctionError", "scipy.special.SpecialFunctionWarning",
    "scipy.stats.FitError", "scipy.stats.DegenerateDataWarning",
    "scipy.stats.ConstantInputWarning", "scipy.stats.NearConstantInputWarning",
    "scipy.linalg.LinAlgWarning", "scipy.sparse.linalg.ArpackNoConvergence",
    "scipy.sparse.linalg.ArpackError", "scipy.spatial.QhullError",
    "statistics.StatisticsError", "re.error", "zoneinfo.ZoneInfoNotFoundError",
    "pytz.exceptions.UnknownTimeZoneError", "pytz.exceptions.NonExistentTimeError",
    "pytz.exceptions.AmbiguousTimeError", "dateutil.parser.ParserError",
    "guard.GuardRefusal",
)

# Plot and figure mode add the plotting libraries' own classes.
PLOT_ERROR_CLASSES = (
    "matplotlib.units.ConversionError", "matplotlib.MatplotlibDeprecationWarning",
    "PIL.UnidentifiedImageError", "PIL.Image.DecompressionBombError",
    "pyparsing.ParseException", "pyparsing.ParseFatalException",
    "plotly.exceptions.PlotlyError", "plotly.exceptions.PlotlyEmptyDataError",
    "plotly.exceptions.PlotlyGraphObjectError", "plotly.exceptions.PlotlyDictKeyError",
    "plotly.exceptions.PlotlyDictValueError", "plotly.exceptions.PlotlyListEntryError",
    "plotly.exceptions.PlotlyDataTypeError", "_plotly_utils.exceptions.PlotlyKeyError",
)


def _resolve(path):
    module_name, _, attr = path.rpartition(".")
    parts = module_name.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        # a loaded module straight from sys.modules (what import_module would return, without
        # its import machinery, which every run would otherwise pay for the whole table)
        obj = sys.modules.get(name)
        if obj is None:
            try:
                obj = importlib.import_module(name)
            except Exception:
                continue
        for part in parts[i:] + [attr]:
            obj = getattr(obj, part, None)
        return obj
    return None


def _resolve_loaded(path):
    """Like _resolve, but only through modules already imported (plot mode's extra classes:
    naming a plotly class must not import plotly into a matplotlib run)."""
    module_name, _, attr = path.rpartition(".")
    parts = module_name.split(".")
    for i in range(len(parts), 0, -1):
        obj = sys.modules.get(".".join(parts[:i]))
        if obj is None:
            continue
        for part in parts[i:] + [attr]:
            obj = getattr(obj, part, None)
        return obj
    return None


def build_class_table(extra=()):
    """{id(class): name} for every listed class (ERROR_CLASSES, then `extra`), plus the classes
    themselves (kept alive so that their ids stay theirs). Call before arming: it imports."""
    classes = []
    names = {}
    for name in dir(builtins):
        obj = getattr(builtins, name)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            classes.append(obj)
            names[id(obj)] = name
    for path in tuple(ERROR_CLASSES) + tuple(extra):
        obj = _resolve(path) if path in ERROR_CLASSES else _resolve_loaded(path)
        if isinstance(obj, type) and issubclass(obj, BaseException) and id(obj) not in names:
            classes.append(obj)
            names[id(obj)] = "plotq.GuardRefusal" if path == "guard.GuardRefusal" else path
    return tuple(classes), names


def make_classifier(extra=()):
    """classify(exc) -> name or UNLISTED; everything it calls is bound now. `extra`: more
    qualified class names (plot mode passes PLOT_ERROR_CLASSES)."""
    classes, names = build_class_table(extra)
    _type = type
    _id = id
    _get = dict.get
    unlisted = UNLISTED

    def classify(exc):
        keep = classes  # noqa: F841  (the closure holds the classes, so their ids stay unique)
        return _get(names, _id(_type(exc)), unlisted)
    return classify


def vocabulary(extra=()):
    """Every name classify() can answer (for the host and the tests)."""
    classes, names = build_class_table(extra)
    return sorted(set(names.values()) | {UNLISTED})
