""" plotq catalogue
line-basic: Basic Line Chart
Library: altair 6.3.0 | Python 3.11.2
"""

import os

import altair as alt
import numpy as np
import pandas as pd


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

t = np.arange(0, 48)
frame = pd.DataFrame({
    "hour": np.concatenate([t, t]),
    "load": np.concatenate([50 + 20 * np.sin(t / 4), 45 + 15 * np.cos(t / 5)]),
    "site": ["alpha"] * t.size + ["beta"] * t.size,
})

# autosize "fit" with "padding": the whole view, axes and legend included, is exactly 800 x 450,
# so scale 4 draws exactly 3200 x 1800 with no padding step.
chart = (
    alt.Chart(frame)
    .mark_line(strokeWidth=3)
    .encode(x=alt.X("hour:Q"), y=alt.Y("load:Q", title="load (%)"), color=alt.Color("site:N"))
    .properties(width=800, height=450, background=BG,
                title=alt.Title("line-basic · altair · plotq", color=FG))
    .configure(autosize=alt.AutoSizeParams(type="fit", contains="padding"))
    .configure_axis(labelColor=FG, titleColor=FG, gridOpacity=0.3)
    .configure_legend(labelColor=FG, titleColor=FG)
    .configure_view(strokeWidth=0)
)
chart.save(f"plot-{THEME}.png", scale_factor=4)
