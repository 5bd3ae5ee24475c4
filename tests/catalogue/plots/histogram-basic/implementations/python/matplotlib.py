"""Histogram of a normal sample, 3200x1800."""
import os

import matplotlib.pyplot as plt
import numpy as np

THEME = os.getenv("ANYPLOT_THEME", "light")
plt.style.use("dark_background" if THEME == "dark" else "default")

sample = np.random.default_rng(3).normal(loc=10, scale=2, size=5000)
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.hist(sample, bins=40, color="#DD8452", edgecolor="black")
ax.set_title("Normal sample", fontsize=24)
fig.savefig(f"plot-{THEME}.png", dpi=200)
