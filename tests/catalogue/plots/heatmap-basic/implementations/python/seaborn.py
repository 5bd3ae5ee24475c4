"""Seaborn heatmap of a correlation matrix, 3200x1800."""
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

THEME = os.getenv("ANYPLOT_THEME", "light")
sns.set_theme(style="darkgrid" if THEME == "dark" else "whitegrid")
if THEME == "dark":
    plt.style.use("dark_background")

rng = np.random.default_rng(11)
frame = pd.DataFrame(rng.normal(size=(200, 6)), columns=list("ABCDEF"))
frame["B"] += frame["A"]
frame["F"] -= frame["E"]

fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
sns.heatmap(frame.corr(), annot=True, fmt=".2f", cmap="vlag", ax=ax)
ax.set_title("Correlation", fontsize=24)
fig.savefig(f"plot-{THEME}.png", dpi=200)
