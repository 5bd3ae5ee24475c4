""" plotq catalogue
scatter-basic: Basic Scatter Plot
Library: plotnine 0.15.9 | Python 3.11.2
"""

import os
import sys


# The catalogue's self-import guard: drop the implementations folder from sys.path (plotq must
# allow the rebuild).
sys.path = [p for p in sys.path if p and not p.endswith("implementations") and not p.endswith("/python")]

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from plotnine import aes, element_rect, element_text, geom_point, ggplot, labs, theme, theme_minimal  # noqa: E402


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

rng = np.random.default_rng(31)
frame = pd.DataFrame({"height": rng.normal(170, 9, 200)})
frame["weight"] = 0.9 * (frame["height"] - 100) + rng.normal(0, 6, 200)
frame["group"] = rng.choice(["a", "b"], 200)

plot = (
    ggplot(frame, aes("height", "weight", color="group"))
    + geom_point(size=3, alpha=0.8)
    + labs(title="scatter-basic · plotnine · plotq", x="height (cm)", y="weight (kg)")
    + theme_minimal()
    + theme(figure_size=(8, 4.5), plot_background=element_rect(fill=BG, color=BG),
            panel_background=element_rect(fill=BG), legend_background=element_rect(fill=BG),
            text=element_text(color=FG))
)

# 8 x 4.5 in at 400 dpi: 3200 x 1800.
plot.save(f"plot-{THEME}.png", dpi=400, width=8, height=4.5, units="in", verbose=False)
