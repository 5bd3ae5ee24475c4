""" plotq catalogue
bar-basic: Basic Bar Chart
Library: letsplot 4.11.0 | Python 3.11.2
"""

import os

import pandas as pd
from lets_plot import LetsPlot, aes, element_rect, element_text, geom_bar, ggplot, ggsize, labs, theme
from lets_plot.export import ggsave


LetsPlot.setup_html()

THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

frame = pd.DataFrame({"team": ["red", "blue", "green", "gold"], "points": [27, 34, 19, 30]})

plot = (
    ggplot(frame, aes("team", "points"))
    + geom_bar(stat="identity", fill="#2E86AB")
    + labs(title="bar-basic · letsplot · plotq")
    + theme(plot_background=element_rect(fill=BG, color=BG), text=element_text(color=FG))
    + ggsize(1600, 900)
)

# 1600 x 900 at scale 2: 3200 x 1800.
ggsave(plot, filename=f"plot-{THEME}.png", path=".", scale=2)
