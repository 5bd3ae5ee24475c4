#!/usr/bin/python3
"""Writes the figure fixtures of tests/figure (plotly 5.4 from python3-plotly, via fig.to_json()).

Run with Debian's interpreter:  /usr/bin/python3 tests/figure/make_figures.py tests/figure/fixtures
The JSON files are committed so the tests do not pay plotly's import on every run.
"""
import os
import sys

import numpy as np
import plotly
import plotly.graph_objects as go
from plotly.subplots import make_subplots

THEMES = {"light": "plotly_white", "dark": "plotly_dark"}


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


def main(out):
    os.makedirs(out, exist_ok=True)
    figs = {}
    for theme, template in THEMES.items():
        figs[f"scatter-{theme}"] = scatter(template)
        figs[f"subplot-{theme}"] = subplot(template)
    figs["width1200"] = scatter("plotly_white").update_layout(width=1200)
    figs["square"] = subplot("plotly_white").update_layout(width=1000, height=1000)
    figs["scattergl"] = go.Figure(go.Scattergl(x=[1, 2, 3, 4], y=[3, 1, 4, 2], mode="markers",
                                               marker=dict(size=40, color="#ff0000")),
                                  layout=dict(template="plotly_white"))
    for name, fig in figs.items():
        with open(os.path.join(out, f"{name}.json"), "w", encoding="utf-8") as f:
            f.write(fig.to_json())
    print(f"plotly {plotly.__version__}: wrote {len(figs)} figures to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "fixtures"))
