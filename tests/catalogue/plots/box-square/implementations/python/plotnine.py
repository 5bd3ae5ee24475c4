""" plotq catalogue
box-square: Box Plot on a Square Canvas
Library: plotnine 0.15.9 | Python 3.11.2
"""

import os

import numpy as np
import pandas as pd
from plotnine import aes, element_line, element_rect, element_text, geom_boxplot, ggplot, labs, theme, theme_classic


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

rng = np.random.default_rng(37)
frame = pd.DataFrame({
    "dose": np.repeat(["0 mg", "5 mg", "10 mg"], 40),
    "response": np.concatenate([rng.normal(m, 1.2, 40) for m in (3.0, 4.2, 5.1)]),
})
frame["dose"] = pd.Categorical(frame["dose"], categories=["0 mg", "5 mg", "10 mg"])

plot = (
    ggplot(frame, aes("dose", "response", fill="dose"))
    + geom_boxplot(show_legend=False)
    + labs(title="box-square · plotnine · plotq")
    + theme_classic(base_size=14)
    + theme(plot_background=element_rect(fill=BG, color=BG),
            panel_background=element_rect(fill=BG), text=element_text(color=FG),
            axis_line=element_line(color=FG))
)

# 8 x 8 in at 300 dpi: 2400 x 2400.
plot.save(f"plot-{THEME}.png", dpi=300, width=8, height=8, units="in", verbose=False)
