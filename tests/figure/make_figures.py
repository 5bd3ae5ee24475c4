#!/usr/bin/env python3
"""Writes the figure fixtures of tests/figure with the sandbox's own runtime (runtime/venv: plotly 7
through fig.to_json(), bokeh 3.9 through bokeh.embed.json_item), as figure mode writes them.

Run with the runtime's interpreter:  runtime/venv/bin/python tests/figure/make_figures.py
The JSON files are committed so the tests pay no plotly or bokeh import; rerun after the lock
changes either package (the renderer draws them with the same package's JavaScript).
"""
import json
import os
import sys

import numpy as np
import plotly
import plotly.graph_objects as go
from plotly.subplots import make_subplots

THEMES = {"light": "plotly_white", "dark": "plotly_dark"}
# bokeh figures carry their colours themselves, as the catalogue's files do.
BOKEH_THEMES = {"light": ("#ffffff", "#222222"), "dark": ("#1a1a1a", "#e8e8e8")}


def scatter(template):
    rng = np.random.default_rng(7)
    x = rng.normal(size=120).round(3)
    fig = go.Figure()
    for i, name in enumerate(["alpha", "beta", "gamma"]):
        fig.add_trace(go.Scatter(x=x + i, y=(x * (i + 1) + rng.normal(size=120)).round(3),
                                 mode="markers", name=name))
    fig.update_layout(template=template, title="Scatter of three groups",
                      xaxis_title="x value", yaxis_title="y value")
    return fig


def subplot(template):
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Monthly totals", "Trend"))
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"]
    fig.add_trace(go.Bar(x=months, y=[4, 7, 3, 8, 6, 9], name="totals"), row=1, col=1)
    fig.add_trace(go.Scatter(x=months, y=[1, 3, 2, 5, 4, 6], mode="lines+markers", name="trend"),
                  row=1, col=2)
    fig.update_layout(template=template, title="Two panels")
    return fig


def plotly_figures():
    figs = {}
    for theme, template in THEMES.items():
        figs[f"scatter-{theme}"] = scatter(template)
        figs[f"subplot-{theme}"] = subplot(template)
    figs["width1200"] = scatter("plotly_white").update_layout(width=1200)
    figs["square"] = subplot("plotly_white").update_layout(width=1000, height=1000)
    figs["scattergl"] = go.Figure(go.Scattergl(x=[1, 2, 3, 4], y=[3, 1, 4, 2], mode="markers",
                                               marker=dict(size=40, color="#ff0000")),
                                  layout=dict(template="plotly_white"))
    return {name: fig.to_json() for name, fig in figs.items()}


def bokeh_plot(theme, width, height, title):
    from bokeh.plotting import figure
    page, ink = BOKEH_THEMES[theme]
    rng = np.random.default_rng(11)
    p = figure(width=width, height=height, title=title, toolbar_location=None)
    p.scatter(rng.normal(size=200), rng.normal(size=200), size=18, color="#009E73", alpha=0.8)
    p.line(np.linspace(-3, 3, 50), np.sin(np.linspace(-3, 3, 50)), line_width=6, color="#D55E00")
    p.background_fill_color = page
    p.border_fill_color = page
    p.outline_line_color = ink
    p.title.text_color = ink
    p.title.text_font_size = "36pt"
    for axis in (p.xaxis, p.yaxis):
        axis.major_label_text_color = ink
        axis.axis_line_color = ink
        axis.major_label_text_font_size = "20pt"
    return p


def bokeh_figures():
    from bokeh.embed import json_item
    from bokeh.layouts import column
    from bokeh.models import CustomJS, Div
    from bokeh.events import DocumentReady
    items = {}
    for theme in BOKEH_THEMES:
        items[f"bokeh-{theme}"] = json_item(bokeh_plot(theme, 4800, 2700, f"Bokeh scatter ({theme})"))
    items["bokeh-square"] = json_item(bokeh_plot("light", 2400, 2400, "Bokeh square"))
    items["bokeh-column"] = json_item(column(bokeh_plot("light", 1600, 450, "top"),
                                             bokeh_plot("light", 1600, 450, "bottom")))
    # Hostile: CustomJS on document ready and on a range change, and markup handlers in a Div.
    # MARKER is replaced by the test with a loopback listener's URL.
    js = ("window.__pwned = 1; document.title = 'pwned'; "
          "fetch('MARKER/customjs'); new Image().src = 'MARKER/image';")
    p = bokeh_plot("light", 1600, 900, "hostile")
    p.js_on_event(DocumentReady, CustomJS(code=js))
    p.x_range.js_on_change("start", CustomJS(code=js))
    div = Div(text=f'<img src="MARKER/div" onerror="{js}"><script>{js}</script><b>bold</b>',
              width=1600, height=60)
    items["bokeh-hostile"] = json_item(column(div, p))
    # A map over web tiles (as the catalogue's map files draw): the page refuses every tile.
    from bokeh.models import WMTSTileSource
    p = bokeh_plot("light", 1600, 900, "tiles")
    p.add_tile(WMTSTileSource(url="MARKER/tiles/{Z}/{X}/{Y}.png"))
    items["bokeh-tiles"] = json_item(p)
    return {name: json.dumps(item) for name, item in items.items()}


def main(out):
    import bokeh
    os.makedirs(out, exist_ok=True)
    texts = {**plotly_figures(), **bokeh_figures()}
    for name, text in texts.items():
        with open(os.path.join(out, f"{name}.json"), "w", encoding="utf-8") as f:
            f.write(text)
    print(f"plotly {plotly.__version__}, bokeh {bokeh.__version__}: wrote {len(texts)} figures to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures"))
