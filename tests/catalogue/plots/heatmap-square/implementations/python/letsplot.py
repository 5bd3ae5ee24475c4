""" plotq catalogue
heatmap-square: Heatmap on a Square Canvas
Library: letsplot 4.11.0 | Python 3.11.2
"""

import os

import numpy as np
import pandas as pd
from lets_plot import (LetsPlot, aes, element_rect, element_text, geom_tile, ggplot, ggsize, labs,
                       scale_fill_viridis, theme)
from lets_plot.export import ggsave


LetsPlot.setup_html()

THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

rng = np.random.default_rng(43)
rows = [(r, c, float(rng.gamma(2.0, 4.0))) for r in range(6) for c in range(6)]
frame = pd.DataFrame(rows, columns=["row", "col", "value"])

plot = (
    ggplot(frame, aes("col", "row", fill="value"))
    + geom_tile()
    + scale_fill_viridis()
    + labs(title="heatmap-square · letsplot · plotq")
    + theme(plot_background=element_rect(fill=BG, color=BG), text=element_text(color=FG))
    + ggsize(600, 600)
)

# 600 x 600 at scale 4: 2400 x 2400; then the page.
ggsave(plot, f"plot-{THEME}.png", path=".", scale=4)
ggsave(plot, f"plot-{THEME}.html", path=".")
