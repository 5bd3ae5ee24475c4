"""Seaborn violin plot by group, 3200x1800."""
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

THEME = os.getenv("ANYPLOT_THEME", "light")
sns.set_theme(style="whitegrid")
if THEME == "dark":
    plt.style.use("dark_background")

rng = np.random.default_rng(5)
groups = np.repeat(["north", "south", "east"], 150)
values = np.concatenate([rng.normal(m, 1.0, 150) for m in (2.0, 3.5, 2.8)])
frame = pd.DataFrame({"region": groups, "yield": values})

fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
sns.violinplot(data=frame, x="region", y="yield", ax=ax)
ax.set_title("Yield by region", fontsize=24)
fig.savefig(f"plot-{THEME}.png", dpi=200)
