"""Seaborn scatter with hue, 3200x1800."""
import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

THEME = os.getenv("ANYPLOT_THEME", "light")
if THEME == "dark":
    plt.style.use("dark_background")

rng = np.random.default_rng(9)
frame = pd.DataFrame({
    "x": rng.uniform(0, 10, 300),
    "kind": rng.choice(["a", "b", "c"], 300),
})
frame["y"] = frame["x"] * 1.5 + rng.normal(0, 2, 300)

fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
sns.scatterplot(data=frame, x="x", y="y", hue="kind", s=80, ax=ax)
fig.savefig(f"plot-{THEME}.png", dpi=200)
