""" plotq catalogue
canvas-off-tight: Box Plot saved with bbox_inches="tight" (off canvas)
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

sns.set_theme(style="whitegrid", rc={"figure.facecolor": BG, "axes.facecolor": BG, "text.color": FG,
                                     "axes.labelcolor": FG, "xtick.color": FG, "ytick.color": FG})

rng = np.random.default_rng(8)
frame = pd.DataFrame({
    "shift": np.repeat(["early", "day", "late", "night"], 60),
    "defects": np.concatenate([rng.poisson(lam, 60) for lam in (4, 3, 5, 7)]),
})

# What most of the real catalogue's off-canvas files do: 16 x 9 in at dpi 300 with
# bbox_inches="tight", which crops the 4800 x 2700 figure to its ink: 3972 x 2413 here, never
# 3200 x 1800. A render with canvas "off" in every mode (issue 14), not a failure.
fig, ax = plt.subplots(figsize=(16, 9))
sns.boxplot(data=frame, x="shift", y="defects", hue="shift", palette="Set2", legend=False, ax=ax)
ax.set_title("canvas-off-tight · seaborn · plotq", fontsize=24)
ax.tick_params(labelsize=16)
plt.savefig(f"plot-{THEME}.png", dpi=300, bbox_inches="tight", facecolor=BG)
