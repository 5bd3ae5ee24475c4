""" plotq catalogue
histogram-stacked: Stacked Histogram by Group
Library: seaborn 0.13.2 | Python 3.11.2
"""

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

sns.set_theme(
    style="ticks",
    rc={"figure.facecolor": BG, "axes.facecolor": BG, "axes.edgecolor": FG, "axes.labelcolor": FG,
        "text.color": FG, "xtick.color": FG, "ytick.color": FG, "legend.facecolor": BG},
)

rng = np.random.default_rng(4)
frame = pd.DataFrame({
    "minutes": np.concatenate([rng.normal(22, 5, 300), rng.normal(31, 6, 200), rng.normal(40, 4, 120)]),
    "route": ["A"] * 300 + ["B"] * 200 + ["C"] * 120,
})

# 8 x 4.5 in at 400 dpi: 3200 x 1800. multiple="stack" is the seaborn path that raises a `gc`
# audit event inside the library (issue 14): it must render in the sandbox as it does bare.
fig, ax = plt.subplots(figsize=(8, 4.5), dpi=400)
sns.histplot(data=frame, x="minutes", hue="route", multiple="stack", bins=30, palette="crest", ax=ax)
ax.set_title("histogram-stacked · seaborn · plotq", fontsize=12)
sns.despine(ax=ax)
plt.tight_layout()
plt.savefig(f"plot-{THEME}.png", dpi=400, facecolor=BG)
