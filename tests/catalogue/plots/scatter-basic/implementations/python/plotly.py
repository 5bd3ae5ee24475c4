"""Plotly scatter; the renderer draws the figure at 3200x1800."""
import os

import numpy as np
import plotly.graph_objects as go

THEME = os.getenv("ANYPLOT_THEME", "light")
rng = np.random.default_rng(1)
x = rng.normal(size=300)
y = x * 0.8 + rng.normal(scale=0.4, size=300)

fig = go.Figure(go.Scatter(x=x, y=y, mode="markers", marker={"size": 10, "color": y}))
fig.update_layout(
    title="Correlated samples",
    template="plotly_dark" if THEME == "dark" else "plotly_white",
)
fig.write_image(f"plot-{THEME}.png", width=1600, height=900, scale=2)
