"""Scatter plot with a colour scale, 3200x1800."""
import os

import matplotlib.pyplot as plt
import numpy as np

THEME = os.getenv("ANYPLOT_THEME", "light")
plt.style.use("dark_background" if THEME == "dark" else "default")

rng = np.random.default_rng(42)
x = rng.normal(size=400)
y = 0.6 * x + rng.normal(scale=0.5, size=400)

fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
points = ax.scatter(x, y, c=y, cmap="viridis", s=60, alpha=0.8)
fig.colorbar(points, ax=ax)
ax.set_title("Correlated samples", fontsize=24)
fig.savefig(f"plot-{THEME}.png", dpi=200)
