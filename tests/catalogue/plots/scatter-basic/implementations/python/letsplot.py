""" plotq catalogue
scatter-basic: Basic Scatter Plot
Library: letsplot 4.11.0 | Python 3.11.2
"""

import os

import numpy as np
import pandas as pd
from lets_plot import LetsPlot, aes, element_rect, element_text, geom_point, ggplot, ggsize, labs, theme
from lets_plot.export import ggsave


LetsPlot.setup_html()

THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

rng = np.random.default_rng(41)
frame = pd.DataFrame({"x": rng.uniform(0, 10, 200)})
frame["y"] = np.sqrt(frame["x"]) * 3 + rng.normal(0, 0.8, 200)
frame["kind"] = rng.choice(["p", "q", "r"], 200)

plot = (
    ggplot(frame, aes("x", "y", color="kind"))
    + geom_point(size=5, alpha=0.8)
    + labs(title="scatter-basic · letsplot · plotq")
    + theme(plot_background=element_rect(fill=BG, color=BG), text=element_text(color=FG))
    + ggsize(800, 450)
)

# 800 x 450 at scale 4: 3200 x 1800, written into the work dir (path="."), then the page.
ggsave(plot, f"plot-{THEME}.png", path=".", scale=4)
ggsave(plot, f"plot-{THEME}.html", path=".")
