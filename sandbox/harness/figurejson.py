"""Figure mode's redirect: plotly's image and display calls write the figure's JSON instead.

install(output_name) runs before arming. Afterwards, in the plot:
  Figure.write_image(file, format, scale, width, height, ...), plotly.io.write_image(fig, ...),
  Figure.show(...), plotly.io.show(fig, ...)
all write `fig`'s JSON (plotly's own encoder, numpy arrays as lists) to output_name
(plot-<theme>.json) in the work dir, whatever file name or format the plot asked for; width and
height, when given, are written into the layout (the screenshot step's canvas rule reads them);
scale is ignored (the canvas rule picks the device scale). The last call wins.
  Figure.write_html, plotly.io.write_html, plotly.offline.plot/iplot
are refused (guard rule `output`): figure mode makes no HTML page.

The redirect is a convenience, not a trust boundary: it runs under the armed guard as plot code
would, and it opens only the file the plot may write anyway. The JSON is untrusted; the host
checks it and the screenshot step parses it as data.
"""

import sys

import guard

OUTPUT_RULE_EVENT = guard.STUB_EVENT_PREFIX + "output"


def install(output_name):
    """Replaces plotly's image/show/html entry points. Raises ImportError without plotly."""
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
        text = to_json_plotly(figure)
        with open(output_name, "w", encoding="utf-8") as handle:
            handle.write(text)

    def write_image(fig, file=None, format=None, scale=None, width=None, height=None,
                    validate=True, engine="auto"):
        write_figure(fig, width, height, validate)

    def show(fig, renderer=None, validate=True, **kwargs):
        write_figure(fig, kwargs.get("width"), kwargs.get("height"), validate)

    def figure_write_image(self, *args, **kwargs):
        return write_image(self, *args, **kwargs)

    def figure_show(self, *args, **kwargs):
        return show(self, *args, **kwargs)

    refuse_html = guard._make_stub(OUTPUT_RULE_EVENT)
    basedatatypes.BaseFigure.write_image = figure_write_image
    basedatatypes.BaseFigure.show = figure_show
    basedatatypes.BaseFigure.write_html = refuse_html
    # plotly.io resolves these lazily (a module __getattr__ that would import kaleido's scope):
    # set on the package they shadow it; in a submodule only when it is loaded already.
    for name, replacement in (("write_image", write_image), ("show", show),
                              ("write_html", refuse_html)):
        setattr(pio, name, replacement)
    for name in ("plot", "iplot"):
        setattr(offline, name, refuse_html)
    for module_name, name, replacement in (
            ("plotly.io._kaleido", "write_image", write_image), ("plotly.io._renderers", "show", show),
            ("plotly.io._html", "write_html", refuse_html),
            ("plotly.offline.offline", "plot", refuse_html),
            ("plotly.offline.offline", "iplot", refuse_html)):
        module = sys.modules.get(module_name)
        if module is not None and name in vars(module):
            setattr(module, name, replacement)
