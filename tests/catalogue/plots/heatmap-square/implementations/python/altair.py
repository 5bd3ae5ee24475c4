""" plotq catalogue
heatmap-square: Heatmap on a Square Canvas
Library: altair 6.3.0 | Python 3.11.2
"""

import os

import altair as alt
import numpy as np
import pandas as pd
from PIL import Image


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

rng = np.random.default_rng(29)
rows = [(r, c, float(rng.gamma(2.0, 3.0))) for r in "ABCDEF" for c in range(1, 9)]
frame = pd.DataFrame(rows, columns=["row", "col", "value"])

chart = (
    alt.Chart(frame)
    .mark_rect()
    .encode(x=alt.X("col:O"), y=alt.Y("row:O"), color=alt.Color("value:Q", scale=alt.Scale(scheme="viridis")))
    .properties(width=480, height=480, background=BG,
                title=alt.Title("heatmap-square · altair · plotq", color=FG))
    .configure_axis(labelColor=FG, titleColor=FG)
    .configure_legend(labelColor=FG, titleColor=FG)
    .configure_view(strokeWidth=0)
)

# Scale 4, then padded with PIL to exactly 2400 x 2400; the page is written too.
S = 2400
chart.save(f"plot-{THEME}.png", scale_factor=4)
img = Image.open(f"plot-{THEME}.png").convert("RGB")
canvas = Image.new("RGB", (S, S), BG)
canvas.paste(img, ((S - img.size[0]) // 2, (S - img.size[1]) // 2))
canvas.save(f"plot-{THEME}.png")
chart.save(f"plot-{THEME}.html")
