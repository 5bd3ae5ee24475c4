""" plotq catalogue
line-basic: Basic Line Chart
Library: plotnine 0.15.9 | Python 3.11.2
"""

import os

import numpy as np
import pandas as pd
from plotnine import aes, element_rect, element_text, geom_line, ggplot, labs, theme, theme_bw


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

t = np.linspace(0, 12, 120)
frame = pd.DataFrame({
    "month": np.concatenate([t, t]),
    "level": np.concatenate([np.sin(t) + t / 6, np.cos(t) + t / 8]),
    "well": ["east"] * t.size + ["west"] * t.size,
})

plot = (
    ggplot(frame, aes("month", "level", color="well"))
    + geom_line(size=1.5)
    + labs(title="line-basic · plotnine · plotq")
    + theme_bw(base_size=16)
    + theme(figure_size=(16, 9), plot_background=element_rect(fill=BG, color=BG),
            panel_background=element_rect(fill=BG), legend_background=element_rect(fill=BG),
            text=element_text(color=FG))
)

# The figure_size of the theme at 200 dpi: 3200 x 1800.
plot.save(f"plot-{THEME}.png", dpi=200, verbose=False)
