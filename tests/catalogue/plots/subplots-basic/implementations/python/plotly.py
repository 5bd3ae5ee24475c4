"""Plotly subplots: a line and a bar side by side."""
import os

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

THEME = os.getenv("ANYPLOT_THEME", "light")
t = np.linspace(0, 6, 100)
fig = make_subplots(rows=1, cols=2, subplot_titles=("sine", "counts"))
fig.add_trace(go.Scatter(x=t, y=np.sin(t), mode="lines"), row=1, col=1)
fig.add_trace(go.Bar(x=["a", "b", "c"], y=[3, 7, 5]), row=1, col=2)
fig.update_layout(template="plotly_dark" if THEME == "dark" else "plotly_white", showlegend=False)
fig.write_image(f"plot-{THEME}.png")
