"""Plot mode's libraries beyond matplotlib and seaborn (plotnine, altair, pygal, lets-plot): what
each needs before the guard is armed so that it draws the way the catalogue's files save, unchanged.

install(source) runs before arming in every plot run (warm and cold; preload.prepare and the plot
zygote's preload call it too, and a second call does nothing): it imports the modules whose own
import the guard would refuse and patches the library calls that would otherwise need what the
guard refuses. pygal's and plotnine's parts run when the plot's text names the library (a plot
that imports it under another spelling runs without the part and fails for the library's own
reason, never with more than the guard allows); altair's runs for every plot (a few ms), so that
no spelling of the import reaches vl-convert unpatched.

  - every plot: typing_extensions (its import replaces typing internals with functions that read
    their caller's frame; plotguard.PLOT_FRAME_CALLERS allows them by code identity, which needs
    the module loaded at arming) and importlib_metadata (its import registers an at-fork handler,
    os.register_at_fork, stubbed: rule `process`). pygal and altair import both. And statsmodels'
    PytestTester (every statsmodels package makes one at import, reading its caller's frame for
    __file__ and __name__: a frame caller too), for plotnine's smoothers and the plots' own
    statsmodels imports. statsmodels' own imports need two stdlib modules loaded first: asyncio
    (formulaic imports wrapt, which imports asyncio, whose types.coroutine sets a function's
    __code__: rule `code`) and joblib (statsmodels' kernel densities and scikit-learn import it:
    its loky backend registers an at-fork handler and imports ctypes.wintypes, which measures
    ctypes.c_void_p, a stub under the guard: TypeError); threadpoolctl likewise (scikit-learn
    imports it; its module body declares ctypes structures with c_void_p fields).
  - pygal (render_to_png through cairosvg): cairocffi finds libcairo at import with
    ctypes.util.find_library, which runs /sbin/ldconfig (rule `process`; the kernel's exec filter
    refuses it too, and cairocffi then loads libcairo.so.2 by its soname). cairosvg reads
    svg2png(url=...) and every embedded image through urllib (plotguard decides those URLs,
    localcalls.py); a file: URL goes through urllib's open_local_file, which imports mimetypes
    and email.utils on first use and reads the system's MIME table (/etc/mime.types, rule
    `open`): both imported and the table read before arming.
  - plotnine (plot.save): ggplot() captures its caller's namespaces for aes expressions by walking
    frames up from inspect.currentframe(), which the guard answers None ("call-stack is not that
    deep!"). Environment.capture answers the plot's own module namespace instead: exactly what the
    catalogue's files see (each builds its plot at top level), and never a frame.
  - patsy (statsmodels' formulas: plotnine's geom_smooth(formula=...), a plot's own smf.ols):
    EvalEnvironment.capture(n) walks n frames up from inspect.currentframe() as plotnine's does,
    and the model's predict() captures one even when its design needs none, so a formula smooth
    failed with "call-stack is not that deep!". It answers the plot's module namespace too.
  - altair (chart.save("plot-<theme>.png") through vl-convert, no browser): vl-convert's
    JavaScript engine fetches a spec's data URLs in native code, which raises no audit event.
    Every vl_convert conversion runs with allowed_base_urls=[] (no external data), and the URL it
    then refuses is a guard refusal of rule `network`; register_font_directory lists its
    directory first, so the guard judges that read (rule `listing` outside the work dir and the
    install). The kernel layers (an empty net namespace, seccomp's socket rule, the read-only
    root with hidden paths) are the barrier whatever native code does; this is the early, precise
    refusal.
  - lets-plot (ggsave): nothing. Its native library returns the PNG as base64 and Python writes
    it; ggsave's default lets-plot-images/ subfolder is a directory in the work dir.
"""

import numbers
import re
import sys

ALWAYS = ("typing_extensions", "importlib_metadata", "statsmodels.tools._test_runner", "asyncio",
          "joblib", "threadpoolctl")
# library -> (pattern of its names in the plot's text, modules imported before arming)
LIBRARIES = {
    "pygal": (r"\b(pygal|cairosvg|cairocffi)\b",
              ("cairocffi", "cairosvg", "email.utils", "mimetypes")),
    "plotnine": (r"\bplotnine\b", ("plotnine.mapping._env",)),
    "patsy": (r"\b(plotnine|statsmodels|patsy)\b", ("patsy.eval",)),
    "altair": (None, ("vl_convert",)),       # every plot: see the module docstring
    "lets_plot": (r"\blets_plot\b", ()),
}
# vl_convert's conversions that can load external data (they take allowed_base_urls)
VL_CONVERSIONS = tuple(source + "_to_" + target for source in ("vegalite", "vega")
                       for target in ("svg", "png", "jpeg", "pdf", "scenegraph"))
VL_REFUSED_MESSAGE = "External data url not allowed"
NETWORK_REFUSAL = "plotq.refused.network"   # guard.STUB_EVENT_PREFIX + rule: the hook refuses it

_done = set()


def _import(name):
    try:
        __import__(name)
        return sys.modules[name]
    except Exception:       # not installed in this runtime: the plot fails for its own reason
        return None


def _plot_namespace(modules=sys.modules):
    """The plot's module namespace: what a frame walk from the plot's top level finds, and what
    the capture patches answer instead of a frame."""
    namespace = getattr(modules.get("__main__"), "__dict__", None)
    if not isinstance(namespace, dict):
        raise ValueError("call-stack is not that deep!")
    return namespace


def _capture_plot_namespace(environment, qualname):
    """A capture classmethod for `environment` (plotnine's Environment, patsy's EvalEnvironment):
    an environment passed in is kept, a frame count answers the plot's module namespace."""
    def capture(cls, eval_env=0, reference=0):
        if isinstance(eval_env, environment):
            return eval_env
        if not isinstance(eval_env, numbers.Integral):
            raise TypeError("eval_env must be an integer or an environment")
        return cls([_plot_namespace()])

    capture.__qualname__ = qualname
    environment.capture = classmethod(capture)


def _patch_plotnine():
    env = _import("plotnine.mapping._env")
    if env is not None:
        _capture_plot_namespace(env.Environment, "Environment.capture")


def _patch_patsy():
    patsy_eval = _import("patsy.eval")
    if patsy_eval is not None:
        _capture_plot_namespace(patsy_eval.EvalEnvironment, "EvalEnvironment.capture")


def _patch_vl_convert():
    vlc = _import("vl_convert")
    if vlc is None:
        return
    audit = sys.audit
    scandir = __import__("os").scandir

    def no_external_data(convert):
        def converted(*args, **kwargs):
            kwargs["allowed_base_urls"] = []
            try:
                return convert(*args, **kwargs)
            except ValueError as exc:
                if VL_REFUSED_MESSAGE in str(exc):
                    audit(NETWORK_REFUSAL)      # armed: raises GuardRefusal, rule `network`
                raise
        converted.__name__ = converted.__qualname__ = getattr(convert, "__name__", "convert")
        converted.__doc__ = getattr(convert, "__doc__", None)
        return converted

    for name in VL_CONVERSIONS:
        convert = getattr(vlc, name, None)
        if convert is not None:
            setattr(vlc, name, no_external_data(convert))
    register = getattr(vlc, "register_font_directory", None)
    if register is not None:
        def register_font_directory(font_dir):
            with scandir(font_dir):             # the guard judges the read (os.scandir)
                pass
            return register(font_dir)
        vlc.register_font_directory = register_font_directory


# A spare's warm-up conversion (warm_vl_convert): the smallest spec that starts the engine.
_WARM_VL_SPEC = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "mark": "point",
                 "data": {"values": [{"x": 1}]}, "encoding": {"x": {"field": "x", "type": "quantitative"}}}


def warm_vl_convert():
    """Starts vl-convert's JavaScript engine in a zygote's spare, before its job (harness.warm_spare):
    the engine's threads cannot cross the zygote's fork, so without this every altair job pays
    the engine's start. A constant spec with inline data, converted through the patched function
    (no external data); nothing of it is a job's to observe but the engine being up."""
    prepare_library("altair")
    vlc = sys.modules.get("vl_convert")
    if vlc is not None:
        vlc.vegalite_to_svg(_WARM_VL_SPEC)


def _load_mime_types():
    mimetypes = _import("mimetypes")
    if mimetypes is not None:
        mimetypes.init()


PATCHES = {"plotnine": _patch_plotnine, "patsy": _patch_patsy, "altair": _patch_vl_convert,
           "pygal": _load_mime_types}


def prepare_library(library):
    """Imports `library`'s pre-arm modules and applies its patch, once."""
    if library in _done:
        return
    _done.add(library)
    for name in LIBRARIES[library][1]:
        _import(name)
    patch = PATCHES.get(library)
    if patch is not None:
        patch()


def install(source=None):
    """Before arming: the modules every plot needs loaded, then each library's part for the
    libraries `source` names (all of them when source is None)."""
    for name in ALWAYS:
        _import(name)
    for library, (pattern, _modules) in LIBRARIES.items():
        if source is None or pattern is None or re.search(pattern, source):
            prepare_library(library)
