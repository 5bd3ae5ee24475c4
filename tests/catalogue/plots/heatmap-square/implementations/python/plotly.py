""" plotq catalogue
heatmap-square: Correlation Heatmap on a Square Canvas
Library: plotly 7.1.0 | Python 3.11.2
"""

import os

import numpy as np
import plotly.graph_objects as go


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

rng = np.random.default_rng(13)
names = ["speed", "load", "temp", "noise", "wear"]
sample = rng.normal(size=(120, len(names)))
sample[:, 1] += 0.8 * sample[:, 0]
sample[:, 4] += 0.6 * sample[:, 2]
corr = np.corrcoef(sample, rowvar=False)

fig = go.Figure(go.Heatmap(z=corr, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu",
                           text=np.round(corr, 2), texttemplate="%{text}"))
fig.update_layout(
    title={"text": "heatmap-square · plotly · plotq", "x": 0.5},
    paper_bgcolor=BG,
    plot_bgcolor=BG,
    font={"color": FG, "size": 13},
)

# 600 x 600 at scale 4: 2400 x 2400.
fig.write_image(f"plot-{THEME}.png", width=600, height=600, scale=4)
fig.write_html(f"plot-{THEME}.html", include_plotlyjs="cdn")
